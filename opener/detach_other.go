//go:build !unix && !windows

package opener

import "os/exec"

// detach: nothing more to do on this platform.
func detach(cmd *exec.Cmd) {}
