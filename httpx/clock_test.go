package httpx

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// Issue 9 (time), PACT §3.2: beyond 30 s of skew, the hint names the
// direction and size of the difference.
func TestSection3_2_ClockHint(t *testing.T) {
	now := time.Date(2026, 9, 30, 12, 0, 0, 0, time.UTC)
	h := http.Header{"Date": {now.Add(95 * time.Second).Format(http.TimeFormat)}}
	off, ok := ClockOffset(h, now)
	if !ok || off != 95*time.Second {
		t.Fatalf("offset %v %v", off, ok)
	}
	if got := ClockHint(off); !strings.Contains(got, "your clock is 95 s behind the Provider's") {
		t.Errorf("hint %q", got)
	}
	if got := ClockHint(-2 * time.Hour); !strings.Contains(got, "your clock is 7200 s ahead of the Provider's") {
		t.Errorf("hint %q", got)
	}
	if got := ClockHint(20 * time.Second); got != "" {
		t.Errorf("within skew: %q", got)
	}
	if _, ok := ClockOffset(http.Header{}, now); ok {
		t.Error("no Date header gave an offset")
	}
}
