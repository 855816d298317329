//go:build unix

package tui

import (
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// suspendSignal is a channel that receives SIGTSTP until stop is called.
func suspendSignal() (ch <-chan os.Signal, stop func()) {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTSTP)
	return c, func() { signal.Stop(c) }
}

// stopProcess stops the process group as SIGTSTP would have by default; SIGCONT (the
// shell's fg) continues it.
func stopProcess() { _ = syscall.Kill(0, syscall.SIGSTOP) }

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
