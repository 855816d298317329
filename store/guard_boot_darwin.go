package store

import "golang.org/x/sys/unix"

// bootID names the boot this system is in (kern.bootsessionuuid, made at
// each boot), "" when it cannot be read: the write counter's way to tell a
// power cut from a copy (checkWriteCounter).
func bootID() string {
	s, err := unix.Sysctl("kern.bootsessionuuid")
	if err != nil {
		return ""
	}
	return s
}
