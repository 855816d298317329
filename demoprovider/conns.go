package demoprovider

import (
	"net"
	"net/http"
	"sync"
)

// unusedConns tracks the connections of the Provider and the Brand sites
// that have not carried a request yet (http.StateNew), so that Close can
// drop them. http.Server.Shutdown counts such a connection as busy for its
// first 5 seconds: a client that dialled ahead, or whose request was
// cancelled while its connection was being made, held every Close (and
// Ctrl+C on `pact demo serve`) for 5 s while nothing was in flight.
// Connections carrying a request are left to Shutdown, which waits for
// their answers.
type unusedConns struct {
	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	closing bool
}

// watch makes srv report its connections' states to u.
func (u *unusedConns) watch(srv *http.Server) {
	srv.ConnState = func(c net.Conn, st http.ConnState) {
		u.mu.Lock()
		defer u.mu.Unlock()
		switch {
		case st == http.StateNew && u.closing:
			c.Close()
		case st == http.StateNew:
			if u.conns == nil {
				u.conns = map[net.Conn]struct{}{}
			}
			u.conns[c] = struct{}{}
		default:
			delete(u.conns, c)
		}
	}
}

// drop closes the connections that have carried no request, and every one
// accepted from now on.
func (u *unusedConns) drop() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.closing = true
	for c := range u.conns {
		c.Close()
	}
	u.conns = nil
}
