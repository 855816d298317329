//go:build !unix

package tui

import "os"

// suspendSignal is a channel that never receives: there is no SIGTSTP here.
func suspendSignal() (ch <-chan os.Signal, stop func()) { return nil, func() {} }

func stopProcess() {}

// jobControl is false where a program cannot be stopped and resumed by its shell.
func jobControl() bool { return false }
