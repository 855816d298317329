//go:build !unix

package tui

import (
	"os"
	"time"
)

// waitInput is false where the terminal cannot be polled: a held sequence is passed on.
func waitInput(*os.File, time.Duration) bool { return false }
