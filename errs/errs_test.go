package errs

import (
	"errors"
	"fmt"
	"testing"
)

var errKind = errors.New("kind words")

type typed struct{}

func (typed) Error() string { return "typed" }

// The message is msg alone; the kinds still match.
func TestNewKeepsMessageAndKinds(t *testing.T) {
	inner := fmt.Errorf("wrapped: %w", typed{})
	err := New("one plain sentence", errKind, inner)
	if err.Error() != "one plain sentence" {
		t.Fatalf("message %q", err)
	}
	if !errors.Is(err, errKind) {
		t.Fatal("kind not matched")
	}
	var ty typed
	if !errors.As(err, &ty) {
		t.Fatal("wrapped type not found")
	}
	if w := fmt.Errorf("outer: %w", err); !errors.Is(w, errKind) {
		t.Fatal("kind lost when wrapped again")
	}
}
