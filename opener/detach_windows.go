//go:build windows

package opener

import (
	"os/exec"
	"syscall"
)

// detach starts cmd in a process group of its own without a console, so
// Ctrl+C in pact's console does not reach it.
func detach(cmd *exec.Cmd) {
	const createNewProcessGroup, detachedProcess = 0x00000200, 0x00000008
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: createNewProcessGroup | detachedProcess}
}
