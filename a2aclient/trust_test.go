package a2aclient

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// Issue 9 (time), PACT §3.2/§3.4: a 401 whose Date is more than 30 s off
// the local clock names the clock, its direction and size.
func TestSection3_4_401WithSkewedDateNamesTheClock(t *testing.T) {
	skewed := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Date", time.Now().Add(2*time.Minute).UTC().Format(http.TimeFormat))
		w.Header().Set("WWW-Authenticate", `Bearer realm="a2a"`)
		w.WriteHeader(401)
	}
	_, _, _, err := run(t, skewed)
	if !IsReason(err, ReasonUnauthenticated) {
		t.Fatalf("err = %v", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "your clock is 120 s behind the Provider's") && !strings.Contains(msg, "your clock is 119 s behind the Provider's") && !strings.Contains(msg, "your clock is 121 s behind the Provider's") {
		t.Fatalf("message %q does not blame the clock", msg)
	}
	inSkew := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Date", time.Now().UTC().Format(http.TimeFormat))
		w.WriteHeader(401)
	}
	_, _, _, err = run(t, inSkew)
	if strings.Contains(err.Error(), "your clock is") {
		t.Fatalf("blamed the clock within the skew: %q", err)
	}
}

// Issue 9 (endpoint origin): when PAToken refuses the endpoint, Send
// returns that error as is and sends nothing.
func TestIssue9_RefusedMintSendsNothing(t *testing.T) {
	refused := errors.New("untrusted endpoint")
	var got string
	c := &Client{HTTP: http.DefaultClient}
	_, err := c.Send(context.Background(), Request{
		InterfaceURL: "http://127.0.0.1:1/a2a/b1",
		Message:      a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi")),
		PAToken:      func(_ context.Context, endpoint string) (string, error) { got = endpoint; return "", refused },
	})
	if !errors.Is(err, refused) {
		t.Fatalf("err = %v", err)
	}
	var ae *Error
	if errors.As(err, &ae) {
		t.Fatalf("a refused mint became an A2A error: %v", ae)
	}
	if got != "http://127.0.0.1:1/a2a/b1/message:send" {
		t.Fatalf("PAToken was told %q", got)
	}
}
