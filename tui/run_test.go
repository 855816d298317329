package tui

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
)

// Run on plain streams: Ctrl+C (0x03) on the input ends it cleanly with a nil error.
func TestRunCtrlCQuits(t *testing.T) {
	var out bytes.Buffer
	err := Run(context.Background(), newFake(), strings.NewReader("\x03"), &out, testOptions())
	if err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
	if !strings.Contains(out.String(), "\x1b[?1049h") {
		t.Error("Run did not switch to the alternate screen")
	}
}

// Run ends with ctx.Err() when its context is cancelled.
func TestRunContextCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out bytes.Buffer
	r, w := ioPipe(t)
	defer w.Close()
	if err := Run(ctx, newFake(), r, &out, testOptions()); err != context.Canceled {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
}

func ioPipe(t *testing.T) (*os.File, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, w
}
