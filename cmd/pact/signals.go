package main

import (
	"context"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

// stopSignals are the signals that end a command the way Ctrl+C does: its
// context is cancelled, it says what was left undone, and pact exits
// 128 + the signal (INT 130, HUP 129, QUIT 131, TERM 143; CLI contract).
// Without this a SIGQUIT would dump goroutines and exit 2 (usage), and a
// SIGHUP would kill pact mid-write.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// signalContext is parent, cancelled when one of stopSignals arrives.
// caught reports that signal (nil before one arrived); stop releases the
// signals.
func signalContext(parent context.Context) (ctx context.Context, caught func() os.Signal, stop func()) {
	ctx, cancel := context.WithCancel(parent)
	var got atomic.Value
	c := make(chan os.Signal, 1)
	signal.Notify(c, stopSignals...)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-c:
			got.Store(s)
			cancel()
		case <-done:
		}
	}()
	caught = func() os.Signal {
		s, _ := got.Load().(os.Signal)
		return s
	}
	stop = func() {
		signal.Stop(c)
		close(done)
		cancel()
	}
	return ctx, caught, stop
}

// signalExitCode is 128 + the number of s (130 for SIGINT), 0 for nil.
func signalExitCode(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return 0
}
