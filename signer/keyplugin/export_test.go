package keyplugin

// PID is the process id of c's plugin (0 before it started).
func PID(c *Client) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.p == nil {
		return 0
	}
	return c.p.cmd.Process.Pid
}

// Stopped reports whether c's plugin process was seen to stop.
func Stopped(c *Client) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.p != nil && c.p.dead != nil
}
