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
