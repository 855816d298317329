package httpx

import (
	"fmt"
	"math"
	"net/http"
	"time"
)

// MaxClockSkew is the clock skew PACT allows on personal-agent JWTs
// (PACT §3.2: at most 30 s); beyond it a refusal is blamed on the clock.
const MaxClockSkew = 30 * time.Second

// ClockOffset reads the server's Date header (RFC 9110 §6.6.1) and returns
// how far the local clock (now) is from it: positive when the local clock
// is behind the server's. ok is false without a parsable Date.
func ClockOffset(h http.Header, now time.Time) (offset time.Duration, ok bool) {
	t, err := http.ParseTime(h.Get("Date"))
	if err != nil {
		return 0, false
	}
	return t.Sub(now), true
}

// ClockHint is the sentence shown when a server refused a personal-agent
// JWT and its clock differs from ours by more than MaxClockSkew: "your
// clock is 95 s behind the Provider's". It is "" within the skew.
func ClockHint(offset time.Duration) string {
	if offset <= MaxClockSkew && offset >= -MaxClockSkew {
		return ""
	}
	dir := "behind"
	if offset < 0 {
		dir = "ahead of"
	}
	secs := int64(math.Round(math.Abs(offset.Seconds())))
	return fmt.Sprintf("your clock is %d s %s the Provider's (identity tokens allow %d s); set the system clock right (for example, turn on network time) and try again", secs, dir, int(MaxClockSkew.Seconds()))
}
