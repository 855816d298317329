package main

import (
	"strings"
	"testing"
	"time"

	"github.com/pact-cli/pact/delegation"
	"github.com/pact-cli/pact/iostreams"
)

// Trust finding 6: scopes the Brand granted beyond what was asked are
// reported as such, not as "approved earlier" (untrue on a first login).
func TestReportGrant_ExtraScopesAreWhatTheBrandAlsoGranted(t *testing.T) {
	io, _, _, errb := iostreams.Test()
	a := &app{io: io}
	a.reportGrant([]string{"x"}, &delegation.Grant{Scopes: []string{"x", "orders:read"}, ExpiresAt: time.Now().Add(time.Hour)})
	out := errb.String()
	if strings.Contains(out, "approved earlier") || !strings.Contains(out, "the Brand also granted: orders:read") {
		t.Fatalf("got:\n%s", out)
	}
}
