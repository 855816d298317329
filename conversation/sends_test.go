package conversation

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pact-cli/pact/demoprovider"
	"github.com/pact-cli/pact/store"
)

// PACT §4.3: a send is "failed" only when it is known not to have been processed; one
// whose outcome is unknown stays on record as sent and unanswered, with its messageId.
func TestSection4_3_SendFailedOnlyWhenKnownNotProcessed(t *testing.T) {
	e := newEnv(t, demoprovider.Config{})
	s := e.open(e.brands[0].SiteURL)
	const forgot = "ctx-the-provider-forgot"
	s.UseContext(forgot)
	ctx := context.Background()
	unanswered := func(id string) bool {
		t.Helper()
		un, err := s.Unanswered()
		if err != nil {
			t.Fatal(err)
		}
		listed := false
		for _, u := range un {
			listed = listed || u.MessageID == id
		}
		if listed != s.SentUnanswered(id) {
			t.Fatalf("%s: Unanswered lists it %v, SentUnanswered says %v", id, listed, s.SentUnanswered(id))
		}
		return listed
	}

	// A first send refused with a 4xx error answer (INVALID_PARAMS): not processed.
	refused := NewMessageID()
	var stale *StaleContextError
	if _, err := s.SendID(ctx, "first try", refused); !errors.As(err, &stale) {
		t.Fatalf("err = %v, want a *StaleContextError", err)
	}
	if unanswered(refused) {
		t.Errorf("a first send refused before delivery is still on record as unanswered, want failed")
	}

	// The same refusal for a message whose earlier attempt is on record (a chat left
	// while waiting): that attempt may have reached the Brand; it stays unanswered.
	earlier := NewMessageID()
	if err := e.opts.Store.db.RecordSend(ctx, store.Send{MessageID: earlier, Brand: s.Card.URL,
		InterfaceURL: s.Card.InterfaceURL, ContextID: forgot, Text: "dup test A-88213", At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SendID(ctx, "dup test A-88213", earlier); err == nil {
		t.Fatal("the resend was answered, want a refusal")
	}
	if !unanswered(earlier) {
		t.Errorf("a retry of a message on record was marked failed: its first attempt may have reached the Brand")
	}

	// The Provider down: connection refused. Only the last attempt's error is known; the
	// outcome is unknown, and the message stays on record with its messageId.
	e.srv.Close()
	down := NewMessageID()
	if _, err := s.SendID(ctx, "dup test A-88213", down); err == nil {
		t.Fatal("sent to a Provider that is down")
	}
	if !unanswered(down) {
		t.Errorf("a network failure marked the send failed, want it unanswered (outcome unknown)")
	}
	if _, err := s.SendID(ctx, "dup test A-88213", earlier); err == nil {
		t.Fatal("sent to a Provider that is down")
	}
	if !unanswered(earlier) {
		t.Errorf("a retry that failed with connection refused marked the send failed")
	}
}
