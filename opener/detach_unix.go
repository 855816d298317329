//go:build unix

package opener

import (
	"os/exec"
	"syscall"
)

// detach starts cmd in a session of its own: no controlling terminal, not
// in the terminal's foreground process group (Ctrl+C is not sent to it).
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}
