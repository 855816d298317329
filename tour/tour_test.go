package tour

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pact-cli/pact/iostreams"
)

// TestTour_PlaysTheWholeProtocol runs `pact demo` in-process against the real
// demo Provider and checks every step happened, in order.
func TestTour_PlaysTheWholeProtocol(t *testing.T) {
	io, _, out, _ := iostreams.Test()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := Run(ctx, Options{IO: io}); err != nil {
		t.Fatalf("tour failed: %v\n%s", err, out)
	}
	text := out.String()
	want := []string{
		"1 Identity", "2 Registration", "3 Discovery", "signed by 127.0.0.1:", "✓", "First contact", "4 A signed conversation",
		"What is your order number?", "has shipped",
		"5 Log in with the Brand", "granted orders:read",
		"6 Acting for the User", "✓ verified",
		"7 Step-up", "TASK_STATE_AUTH_REQUIRED", "missing orders:cancel", "is cancelled",
		"8 Receipts", "3 of 3 receipts verified",
		"9 If the Brand's card changes", "pact stopped before sending anything (signed by another key)", "signed by", "--trust",
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
	if receipts != 3 || steps[9].Name != "Try it by hand" || steps[3].Messages[1].Role != "agent" {
		t.Errorf("receipts %d, last step %q, step 4 messages %+v", receipts, steps[9].Name, steps[3].Messages)
	}
}
