//go:build linux

package main

import (
	"strings"
	"time"
)

// Waiting on events instead of sleeping: a test that sleeps and then checks
// that nothing happened passes on a slow machine without testing anything.
// These wait on something the test can observe, or fail at a deadline.

// waitShown waits (at most 15 s) until the terminal shows want now.
func (s *screen) waitShown(want string) {
	s.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(s.shown(), want) {
		if time.Now().After(deadline) {
			s.t.Fatalf("%q is not on the screen after 15s; screen:\n%s", want, s.shown())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// handledSoFar returns once every key typed so far has been handled, on a
// panel that echoes what is typed on its answer line (prompt + text + "█"):
// it types a marker and waits for its echo (keys are handled in the order
// they arrive, so the keys before it were handled first), then erases it
// and waits for the empty answer line.
func (s *screen) handledSoFar(prompt string) {
	s.t.Helper()
	s.typeKeys("zz")
	s.waitShown(prompt + "zz█")
	s.typeKeys("\x7f\x7f")
	s.waitShown(prompt + "█")
}

// drained returns once everything the exited pact wrote to the terminal has
// been read: the test's own copy of the terminal is closed, so the reader
// gets the end of the output (EIO) after the last byte. At most 15 s.
func (s *screen) drained() {
	s.t.Helper()
	s.tty.Close()
	select {
	case <-s.done:
	case <-time.After(15 * time.Second):
		s.t.Fatal("the terminal's output did not end within 15s of pact's exit")
	}
}

// waitCount waits (at most 15 s) until want has been written n times after
// the first skip bytes of text.
func (c *cliTerm) waitCount(want string, skip, n int) {
	c.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		txt := c.text()
		if strings.Count(txt[min(skip, len(txt)):], want) >= n {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%q was written fewer than %d times within 15s; terminal:\n%s", want, n, txt)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
