//go:build !unix

package tui

// jobControl is false where a program cannot be stopped and resumed by its shell.
func jobControl() bool { return false }
