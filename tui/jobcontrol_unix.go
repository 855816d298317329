//go:build unix

package tui

import "golang.org/x/sys/unix"

// jobControl reports whether a shell with job control can resume this process after it
// stops: the parent is in the same session but another process group (the shell that
// ran `pact chat` as a job). A process group that is orphaned, e.g. the chat run directly
// by a terminal window, would ignore the stop, or stay stopped with nobody to continue it.
func jobControl() bool {
	ppid := unix.Getppid()
	pgid, err := unix.Getpgid(ppid)
	if err != nil {
		return false
	}
	sid, err := unix.Getsid(0)
	if err != nil {
		return false
	}
	psid, err := unix.Getsid(ppid)
	return err == nil && psid == sid && pgid != unix.Getpgrp()
}
