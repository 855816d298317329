package httpx

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// --debug does not hold back an event stream: the first event reaches the
// caller while the stream is still open (the trace does not read ahead).
func TestTrace_EventStreamIsNotHeldBack(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: first\n\n")
		w.(http.Flusher).Flush()
		<-release
	}))
	defer srv.Close()
	defer close(release)
	var trace bytes.Buffer
	c := NewClient(Options{Debug: &trace, Timeout: 2 * time.Second})
	req, _ := http.NewRequestWithContext(context.Background(), "POST", srv.URL, nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || line != "data: first\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	if !strings.Contains(trace.String(), "an event stream") {
		t.Errorf("trace:\n%s", trace.String())
	}
}
