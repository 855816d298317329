package tour

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pact-cli/pact/iostreams"
)

// TestTour_PlaysTheWholeProtocol runs `pact demo` in-process against the real
// demo Provider and checks every step happened, in order.
func TestTour_PlaysTheWholeProtocol(t *testing.T) {
	t.Parallel()
	io, _, out, _ := iostreams.Test()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := Run(ctx, Options{IO: io}); err != nil {
		t.Fatalf("tour failed: %v\n%s", err, out)
	}
	text := out.String()
	want := []string{
		"1 Identity", "2 Registration", "3 Discovery", "✓ signed by 127.0.0.1:", "First contact", "4 A signed conversation",
		"What is your order number?", "has shipped",
		"5 Log in with the Brand", "granted orders:read",
		"6 Acting for the User", "✓ verified",
		"7 Step-up", "TASK_STATE_AUTH_REQUIRED", "missing orders:cancel", "is cancelled",
		"8 Receipts", "3 of 3 receipts verified",
		"9 If the Brand's card changes", "pact stopped before sending anything (signed by another key)", "signed by", "--trust",
	}
	if strings.Contains(text, "✓:") || strings.Contains(text, "✓ ✓") {
		t.Fatalf("a doubled check mark in the tour:\n%s", text)
	}
	pos := 0
	for _, w := range want {
		i := strings.Index(text[pos:], w)
		if i < 0 {
			t.Fatalf("tour output lacks %q after position %d:\n%s", w, pos, text)
		}
		pos += i + len(w)
	}
}

// TestTour_JSONLinesOnePerStep: with Emit (pact --json demo) nothing goes to
// stdout as text, and each step arrives once, in order, with its content.
func TestTour_JSONLinesOnePerStep(t *testing.T) {
	t.Parallel()
	io, _, out, _ := iostreams.Test()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var steps []Step
	if err := Run(ctx, Options{IO: io, Emit: func(s Step) error { steps = append(steps, s); return nil }}); err != nil {
		t.Fatalf("tour failed: %v", err)
	}
	if out.Len() != 0 {
		t.Fatalf("text on stdout under Emit:\n%s", out)
	}
	if len(steps) != 10 {
		t.Fatalf("%d steps, want 10: %+v", len(steps), steps)
	}
	receipts := 0
	for i, s := range steps {
		if s.Step != i+1 || s.Name == "" || s.Notes == nil || s.Messages == nil || s.Receipts == nil {
			t.Errorf("step %d: %+v", i+1, s)
		}
		for _, r := range s.Receipts {
			if len(r.ID) != 64 || !r.Verified {
				t.Errorf("step %d: receipt %+v, want a full id, verified", s.Step, r)
			}
			receipts++
		}
	}
	// 3 received in steps 6 and 7, the same 3 verified again in step 8.
	if receipts != 6 || len(steps[7].Receipts) != 3 || steps[9].Name != "Try it by hand" || steps[3].Messages[1].Role != "agent" {
		t.Errorf("receipts %d (step 8: %d), last step %q, step 4 messages %+v", receipts, len(steps[7].Receipts), steps[9].Name, steps[3].Messages)
	}
	// What happened is carried as values, and the notes are short plain
	// sentences (not the human lines: no table, no glyphs).
	for _, s := range steps {
		if len(s.Notes) > 2 {
			t.Errorf("step %d: %d notes, want at most 2: %q", s.Step, len(s.Notes), s.Notes)
		}
		for _, n := range s.Notes {
			if strings.ContainsAny(n, "✓≠✗└") || strings.HasPrefix(n, " ") || !strings.HasSuffix(n, ".") {
				t.Errorf("step %d: note %q is not a short plain sentence", s.Step, n)
			}
		}
	}
	ctxID := steps[3].ContextID
	if steps[0].Identity == nil || steps[0].Identity.KID == "" || steps[1].Registration == nil || steps[1].Registration.Audience != "pact-demo" ||
		steps[2].Card == nil || !steps[2].Card.Signed || !strings.HasSuffix(steps[2].Card.Brand, "/.well-known/agent-card.json") || steps[2].Card.BrandName == "" ||
		steps[3].Token == nil || ctxID == "" || steps[5].ContextID != ctxID || steps[6].ContextID != ctxID {
		t.Errorf("steps 1-4 lack their values: %+v %+v %+v %+v", steps[0].Identity, steps[1].Registration, steps[2].Card, steps[3].Token)
	}
	if g := steps[4].Grant; g == nil || g.GrantID == "" || len(steps[4].Logins) != 1 || steps[4].Logins[0].UserCode == "" {
		t.Errorf("step 5: grant %+v, logins %+v", g, steps[4].Logins)
	}
	if su, g := steps[6].StepUp, steps[6].Grant; su == nil || len(su.MissingScopes) != 1 || su.MissingScopes[0] != "orders:cancel" || g == nil || len(g.Scopes) != 2 {
		t.Errorf("step 7: stepUp %+v, grant %+v", su, g)
	}
	if c := steps[8].CardChange; c == nil || len(c.Changes) == 0 || c.Old.KeyThumbprint == "" || c.Old.KeyThumbprint == c.New.KeyThumbprint {
		t.Errorf("step 9: cardChange %+v", c)
	}
	if len(steps[9].Commands) == 0 {
		t.Errorf("closing step without commands: %+v", steps[9])
	}
}

// TestTour_EmitErrorEndsTheTourAtOnce: an error of Emit (a failing --jq)
// ends Run at that step with the error; nothing more runs.
func TestTour_EmitErrorEndsTheTourAtOnce(t *testing.T) {
	io, _, _, _ := iostreams.Test()
	boom := errors.New("boom")
	calls := 0
	err := Run(context.Background(), Options{IO: io, Emit: func(Step) error { calls++; return boom }})
	if !errors.Is(err, boom) || calls != 1 {
		t.Fatalf("Run = %v after %d emits, want boom after 1", err, calls)
	}
}
