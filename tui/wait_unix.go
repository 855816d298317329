//go:build unix

package tui

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// waitInput reports whether f has input to read within d.
func waitInput(f *os.File, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		fds := []unix.PollFd{{Fd: int32(f.Fd()), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(left.Milliseconds())+1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err == nil && n > 0
	}
}
