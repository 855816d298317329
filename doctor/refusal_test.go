package doctor

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pact-cli/pact/httpx"
	"github.com/pact-cli/pact/profile"
)

func (f *fixture) causes(t *testing.T, reg profile.Registration, now time.Time) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return RefusalCauses(ctx, Options{Profile: f.p, HTTP: httpx.NewClient(httpx.Options{}), Now: func() time.Time { return now }}, reg)
}

// TestIssue31_15_RefusalNamesTheCausesPactCanSee: an identity refusal
// (401 on the PA JWT, PACT §3.2) names what pact sees on its side: an
// audience replaced recently (with the command that restores it), a JWKS
// that does not serve the signing key and the other profile with the same
// issuer; nothing when all is well.
func TestIssue31_15_RefusalNamesTheCausesPactCanSee(t *testing.T) {
	f := newFixture(t)
	reg, _, err := f.p.SetProvider("http://127.0.0.1:9", "pact-demo")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if got := f.causes(t, reg, now); len(got) != 0 {
		t.Fatalf("causes with nothing wrong: %q", got)
	}

	reg, _, _ = f.p.SetProvider("http://127.0.0.1:9", "wrong")
	got := f.causes(t, reg, now.Add(time.Hour))
	if len(got) != 1 || !strings.Contains(got[0], `changed from "pact-demo" to "wrong"`) ||
		!strings.Contains(got[0], "pact provider add http://127.0.0.1:9 --audience pact-demo") {
		t.Fatalf("audience changed an hour ago: %q", got)
	}
	if got := f.causes(t, reg, now.Add(RecentAudienceChange+time.Hour)); len(got) != 0 {
		t.Fatalf("a change of long ago named: %q", got)
	}

	f.empty.Store(true)
	other := &profile.Profile{Name: "work", Dirs: f.p.Dirs, Secrets: f.p.Secrets}
	c, _ := f.p.Load()
	if _, err := other.Init(c.Issuer, "", "", false); err != nil {
		t.Fatal(err)
	}
	got = f.causes(t, profile.Registration{URL: reg.URL, Audience: "pact-demo"}, now)
	if len(got) != 1 || !strings.Contains(got[0], "does not serve the key "+c.Active().KID) || !strings.Contains(got[0], `the profile "work" has the same issuer`) {
		t.Fatalf("empty JWKS, issuer shared: %q", got)
	}

	f.srv.Close()
	got = f.causes(t, profile.Registration{URL: reg.URL, Audience: "pact-demo"}, now)
	if len(got) != 1 || !strings.Contains(got[0], "cannot read your keys") || !strings.Contains(got[0], "pact jwks serve") {
		t.Fatalf("JWKS unreachable: %q", got)
	}
}
