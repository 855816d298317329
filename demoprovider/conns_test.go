package demoprovider

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Close drops the connections that never carried a request (a client that
// dialled ahead, a request cancelled while its connection was being made):
// http.Server.Shutdown alone counts them as busy for 5 s, and Close then
// ended with its own deadline, an error. (Connections carrying a request
// are still Shutdown's to wait for.)
func TestCloseDropsConnectionsThatCarryNoRequest(t *testing.T) {
	srv, err := Start(context.Background(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimPrefix(srv.URL(), "http://")
	site := strings.TrimPrefix(srv.Brands()[0].SiteURL, "http://")
	var idle []net.Conn
	for _, a := range []string{addr, site} {
		c, err := net.Dial("tcp", a)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		idle = append(idle, c)
	}
	// The server has seen them (a request on another connection is
	// answered after they were accepted).
	resp, err := http.Get(srv.Brands()[0].CardURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	if err := srv.Close(); err != nil {
		t.Fatalf("Close = %v, want nil (nothing was in flight)", err)
	}
	for i, c := range idle {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err != io.EOF {
			t.Errorf("connection %d after Close: %v, want it closed by the server (EOF)", i, err)
		}
	}
}
