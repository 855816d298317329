package conversation

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/pact-cli/pact/demoprovider"
)

// Issue 31, review (replies lost from history): a Provider that gives its
// replies one messageId loses none of them from the stored history, and a
// message sent again under its messageId adds no second answer, whatever
// messageId the Brand gives it this time: a reply is kept once per User
// message it answers (store.Turn.Answers).
func TestIssue31_RepliesUnderOneMessageIDAreAllKept(t *testing.T) {
	e := newEnv(t, demoprovider.Config{})
	rw := &replyIDs{next: http.DefaultTransport, ids: []string{"reply-1", "reply-1", "reply-2"}}
	e.hc.Transport = rw
	s := e.open(e.brands[1].SiteURL) // Other Shop: message:send
	first, err := s.SendStream(context.Background(), "hello", NewMessageID(), nil)
	if err != nil {
		t.Fatal(err)
	}
	again := NewMessageID()
	second, err := s.SendStream(context.Background(), "where is my order A-10001?", again, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Its answer lost on the way, say: sent again under its messageId.
	if _, err := s.SendStream(context.Background(), "where is my order A-10001?", again, nil); err != nil {
		t.Fatal(err)
	}
	turns, err := s.History()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tu := range turns {
		got = append(got, tu.Role+":"+tu.MessageID)
	}
	if len(turns) != 4 || turns[1].Text != first.Text() || turns[3].Text != second.Text() || turns[3].MessageID != "reply-1" {
		t.Fatalf("stored turns %q, want both messages and both replies (reply-1 twice), once each", got)
	}
}

// replyIDs gives the replies of message:send the messageIds ids, in order.
type replyIDs struct {
	next http.RoundTripper
	mu   sync.Mutex
	ids  []string
}

func (rw *replyIDs) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := rw.next.RoundTrip(r)
	if err != nil || !strings.HasSuffix(r.URL.Path, "/message:send") || resp.StatusCode != 200 {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	var m map[string]map[string]any
	if json.Unmarshal(body, &m) == nil && m["message"] != nil {
		rw.mu.Lock()
		if len(rw.ids) > 0 {
			m["message"]["messageId"], rw.ids = rw.ids[0], rw.ids[1:]
		}
		rw.mu.Unlock()
		body, _ = json.Marshal(m)
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Del("Content-Length")
	return resp, nil
}
