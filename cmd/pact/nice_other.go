//go:build !unix

package main

// background does nothing here (see nice_unix.go).
func background() {}
