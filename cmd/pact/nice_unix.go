//go:build unix

package main

import "syscall"

// background lowers the priority of this process's group (nice 19): a
// refill of PA JWTs minted ahead runs detached in a session and group of
// its own (opener.Detach), and must not slow the User's next command. The
// key plugin it starts inherits the priority.
func background() { syscall.Setpriority(syscall.PRIO_PGRP, 0, 19) }
