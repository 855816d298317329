package profile

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pact-cli/pact/secrets"
	"github.com/pact-cli/pact/store"
)

func newProfile(t *testing.T) *Profile {
	t.Helper()
	dir := t.TempDir()
	sec, _ := secrets.Open("file", dir+"/data", 0)
	return &Profile{Name: "default", Dirs: store.Dirs{Config: dir + "/config", Data: dir + "/data"}, Secrets: sec}
}

func TestInit_IdempotentUnlessForce(t *testing.T) {
	p := newProfile(t)
	if _, err := p.Load(); !errors.Is(err, ErrNotInitialised) || !strings.Contains(err.Error(), "pact init") {
		t.Fatalf("Load before init: %v", err)
	}
	r1, err := p.Init("http://127.0.0.1:8787", "", "ES256", false)
	if err != nil || !r1.Created {
		t.Fatalf("first init: %+v %v", r1, err)
	}
	if r1.Config.JWKSURI != "http://127.0.0.1:8787/.well-known/jwks.json" {
		t.Fatalf("jwks_uri = %s", r1.Config.JWKSURI)
	}
	sub1, _ := p.Sub("aud")
	r2, err := p.Init("http://127.0.0.1:8787", "", "ES256", false)
	if err != nil || r2.Created || r2.Config.Keys[0].KID != r1.Config.Keys[0].KID {
		t.Fatalf("second init changed the key: %+v %v", r2, err)
	}
	r3, err := p.Init("http://127.0.0.1:8787", "", "RS256", true)
	if err != nil || !r3.Created || r3.Config.Keys[0].KID == r1.Config.Keys[0].KID || r3.Config.Keys[0].Alg != "RS256" {
		t.Fatalf("--force did not replace the key: %+v %v", r3, err)
	}
	if sub3, _ := p.Sub("aud"); sub3 != sub1 {
		t.Fatal("--force changed the pairwise sub")
	}
	if _, err := p.Secrets.Get("default/key/" + r1.Config.Keys[0].KID); !errors.Is(err, secrets.ErrNotFound) {
		t.Fatal("the replaced private key is still stored")
	}
}

func TestInit_RejectsNonLoopbackHTTPIssuer(t *testing.T) {
	p := newProfile(t)
	if _, err := p.Init("http://pa.example.com", "", "", false); err == nil {
		t.Fatal("accepted a plain-http public issuer")
	}
	if p.Exists() {
		t.Fatal("a failed init left a profile behind")
	}
}

func TestRotateStagesThenActivateAndRetire(t *testing.T) {
	p := newProfile(t)
	r, _ := p.Init("https://pa.example.com", "", "ES256", false)
	old := r.Config.Keys[0].KID
	info, err := p.Rotate("")
	if err != nil {
		t.Fatal(err)
	}
	if info.State() != StateStaged {
		t.Fatalf("rotated key state = %s, want staged", info.State())
	}
	c, _ := p.Load()
	// Staged: published, but the old key still signs.
	if len(c.JWKS().Keys) != 2 || c.Active().KID != old || len(c.Staged()) != 1 {
		t.Fatalf("after rotate: %d keys, active %s, staged %v", len(c.JWKS().Keys), c.Active().KID, c.Staged())
	}
	if s, err := p.Signer(c); err != nil || s.KID() != old {
		t.Fatalf("signer after rotate uses %v, %v; want the old key", s, err)
	}
	if _, err := p.Activate("nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("activating an unknown kid: %v", err)
	}
	if _, err := p.Activate(info.KID); err != nil {
		t.Fatal(err)
	}
	c, _ = p.Load()
	if c.Active().KID != info.KID || c.Key(old).State() != StatePublished || c.Key(info.KID).State() != StateActive {
		t.Fatalf("after activate: %+v", c.Keys)
	}
	s, err := p.Signer(c)
	if err != nil || s.KID() != info.KID {
		t.Fatalf("signer uses %v, %v", s, err)
	}
	if err := p.Retire(info.KID); !errors.Is(err, ErrActiveKey) {
		t.Fatalf("retired the active key: %v", err)
	}
	if err := p.Retire(old); err != nil {
		t.Fatal(err)
	}
	c, _ = p.Load()
	if len(c.JWKS().Keys) != 1 || c.JWKS().Keys[0].KeyID != info.KID {
		t.Fatalf("retired key still published: %+v", c.JWKS())
	}
	for _, k := range c.JWKS().Keys {
		if !k.IsPublic() {
			t.Fatal("private key in JWKS")
		}
	}
}

func TestMatch_LongestPrefixBySegments(t *testing.T) {
	c := &Config{Providers: []Registration{
		{URL: "https://p.example.com", Audience: "root"},
		{URL: "https://p.example.com/a2a", Audience: "a2a"},
		{URL: "https://p.example.com/a2a/01JX", Audience: "brand"},
		{URL: "http://127.0.0.1:9000", Audience: "local"},
	}}
	for iface, want := range map[string]string{
		"https://p.example.com/a2a/01JX":     "brand",
		"https://p.example.com/a2a/01JY":     "a2a",
		"https://p.example.com/a2ax/01JY":    "root",
		"https://P.EXAMPLE.COM:443/a2a/01JZ": "a2a",
		"http://127.0.0.1:9000/a2a/b":        "local",
		"http://127.0.0.1:9001/a2a/b":        "",
		"http://p.example.com/a2a/01JX":      "",
	} {
		reg, ok := c.Match(iface)
		got := ""
		if ok {
			got = reg.Audience
		}
		if got != want {
			t.Errorf("Match(%s) = %q, want %q", iface, got, want)
		}
	}
}

func TestProviders_AddListRemove(t *testing.T) {
	p := newProfile(t)
	if _, err := p.AddProvider("http://127.0.0.1:9/", "aud"); !errors.Is(err, ErrNotInitialised) {
		t.Fatalf("add before init: %v", err)
	}
	if _, err := p.Init("https://pa.example.com", "", "", false); err != nil {
		t.Fatal(err)
	}
	if _, err := p.AddProvider("http://127.0.0.1:9/", ""); err == nil {
		t.Fatal("empty audience accepted")
	}
	reg, err := p.AddProvider("http://127.0.0.1:9/", "aud-1")
	if err != nil || reg.URL != "http://127.0.0.1:9" {
		t.Fatalf("%+v %v", reg, err)
	}
	p.AddProvider("http://127.0.0.1:9", "aud-2")
	c, _ := p.Load()
	if len(c.Providers) != 1 || c.Providers[0].Audience != "aud-2" {
		t.Fatalf("providers = %+v", c.Providers)
	}
	if err := p.RemoveProvider("http://127.0.0.1:9"); err != nil {
		t.Fatal(err)
	}
	if err := p.RemoveProvider("http://127.0.0.1:9"); err == nil {
		t.Fatal("removing twice succeeded")
	}
}

// Issue 31 item 15: replacing a registration's audience is said and
// recorded (what it was, when it changed), never silent; the same audience
// again changes nothing.
func TestIssue31_15_ReplacedAudienceIsRecorded(t *testing.T) {
	p := newProfile(t)
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	p.Now = func() time.Time { return now }
	if _, err := p.Init("https://pa.example.com", "", "", false); err != nil {
		t.Fatal(err)
	}
	reg, replaced, err := p.SetProvider("http://127.0.0.1:9", "pact-demo")
	if err != nil || replaced != "" || reg.PreviousAudience != "" || reg.AudienceChangedAt != nil {
		t.Fatalf("new registration: %+v %q %v", reg, replaced, err)
	}
	if _, replaced, _ = p.SetProvider("http://127.0.0.1:9/", "pact-demo"); replaced != "" {
		t.Fatalf("the same audience again reported as replacing %q", replaced)
	}
	reg, replaced, err = p.SetProvider("http://127.0.0.1:9", "wrong")
	if err != nil || replaced != "pact-demo" || reg.PreviousAudience != "pact-demo" || reg.AudienceChangedAt == nil || !reg.AudienceChangedAt.Equal(now) {
		t.Fatalf("replaced audience: %+v %q %v", reg, replaced, err)
	}
	c, _ := p.Load()
	if got := c.Providers[0]; got.Audience != "wrong" || got.PreviousAudience != "pact-demo" || got.AudienceChangedAt == nil {
		t.Fatalf("stored: %+v", got)
	}
}

// Issue 31 item 15: two profiles with one issuer (one JWKS for both at the
// Provider) are found.
func TestIssue31_15_SharingIssuer(t *testing.T) {
	p := newProfile(t)
	if _, err := p.Init("http://127.0.0.1:8787", "", "", false); err != nil {
		t.Fatal(err)
	}
	for name, issuer := range map[string]string{"work": "http://127.0.0.1:8787", "home": "https://pa.example.com"} {
		o := &Profile{Name: name, Dirs: p.Dirs, Secrets: p.Secrets}
		if _, err := o.Init(issuer, "", "", false); err != nil {
			t.Fatal(err)
		}
	}
	if got := p.SharingIssuer("http://127.0.0.1:8787"); len(got) != 1 || got[0] != "work" {
		t.Fatalf("SharingIssuer = %v, want [work]", got)
	}
}
