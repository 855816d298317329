package store

import (
	"os"
	"strings"
)

// bootID names the boot this system is in (a random UUID the kernel makes
// at each boot), "" when it cannot be read: the write counter's way to
// tell a power cut from a copy (checkWriteCounter).
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
