package publish

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pact-cli/pact/httpx"
	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/secrets"
	"github.com/pact-cli/pact/store"
)

func newConfig(t *testing.T, issuer string) (*profile.Profile, *profile.Config) {
	t.Helper()
	dir := t.TempDir()
	sec, _ := secrets.Open("file", dir+"/data", 0)
	p := &profile.Profile{Name: "default", Dirs: store.Dirs{Config: dir + "/config", Data: dir + "/data"}, Secrets: sec}
	r, err := p.Init(issuer, "", "RS256", false)
	if err != nil {
		t.Fatal(err)
	}
	return p, r.Config
}

// TestSection3_1_ExportWritesPublicKeysAndDiscoveryIdempotently: every
// published key (staged included), public members only; a second run
// rewrites nothing.
func TestSection3_1_ExportWritesPublicKeysAndDiscoveryIdempotently(t *testing.T) {
	p, _ := newConfig(t, "https://pa.example.com/me")
	staged, _ := p.Rotate("ES256")
	c, _ := p.Load()
	dir := t.TempDir()
	files, err := Export(dir, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 3 || files[0].URL != "https://pa.example.com/me/.well-known/openid-configuration" || files[1].URL != c.JWKSURI {
		t.Fatalf("files = %+v", files)
	}
	for _, f := range files {
		if !f.Changed {
			t.Errorf("first export: %s not reported as changed", f.Rel)
		}
	}
	jwksDoc, _ := os.ReadFile(filepath.Join(dir, ".well-known", "jwks.json"))
	for _, k := range c.Keys {
		if !strings.Contains(string(jwksDoc), k.KID) {
			t.Errorf("kid %s not exported", k.KID)
		}
	}
	if !strings.Contains(string(jwksDoc), staged.KID) || PrivateMembers(jwksDoc) != nil || strings.Contains(string(jwksDoc), `"d"`) {
		t.Fatalf("exported JWKS:\n%s", jwksDoc)
	}
	if _, err := os.Stat(filepath.Join(dir, ".nojekyll")); err != nil {
		t.Fatal(err)
	}
	// A file written again is a new file (written aside, then renamed over
	// the old one), whatever the clock's resolution: compare the files, not
	// their times.
	before := map[string]os.FileInfo{}
	for _, f := range files {
		fi, err := os.Stat(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		before[f.Path] = fi
	}
	again, err := Export(dir, c)
	if err != nil {
		t.Fatal(err)
	}
	for p, fi := range before {
		now, err := os.Stat(p)
		if err != nil || !os.SameFile(fi, now) || !now.ModTime().Equal(fi.ModTime()) {
			t.Errorf("second export rewrote the unchanged %s: %v", p, err)
		}
	}
	for _, f := range again {
		if f.Changed {
			t.Errorf("second export: %s reported as changed", f.Rel)
		}
	}
}

func TestRFC7517_PrivateMembersAreFound(t *testing.T) {
	got := PrivateMembers([]byte(`{"keys":[{"kid":"a","kty":"EC","d":"x"},{"kty":"oct","k":"y"},{"kid":"c","kty":"RSA","n":"1","e":"AQAB"}]}`))
	if strings.Join(got, ",") != "a: d,key 1: k" {
		t.Fatalf("got %v", got)
	}
}

// TestSection3_1_LiveViewComparesKeysAsAProviderWould: the live JWKS
// with a staged key missing, a different key under a kid, a private
// member, and a discovery document naming another jwks_uri.
func TestSection3_1_LiveViewComparesKeysAsAProviderWould(t *testing.T) {
	var jwksBody, discoBody string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/jwks.json":
			w.Write([]byte(jwksBody))
		case "/.well-known/openid-configuration":
			w.Write([]byte(discoBody))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	hc := httpx.NewClient(httpx.Options{})
	p, c := newConfig(t, srv.URL)
	jwksDoc, discoDoc, err := Site(c)
	if err != nil {
		t.Fatal(err)
	}
	jwksBody, discoBody = string(jwksDoc), string(discoDoc)
	staged, _ := p.Rotate("")
	c, _ = p.Load()
	ctx := context.Background()
	l := Fetch(ctx, hc, c)
	if l.DiscoveryErr != nil || l.Has(*c.Active()) != nil {
		t.Fatalf("live: %v / %v", l.DiscoveryErr, l.Has(*c.Active()))
	}
	if err := l.Has(staged); !errors.Is(err, ErrNotLive) {
		t.Fatalf("staged key not exported yet: %v", err)
	}
	// Another key under the active kid.
	_, other := newConfig(t, srv.URL)
	forged := strings.ReplaceAll(string(mustSite(t, other)), other.Active().KID, c.Active().KID)
	jwksBody = forged
	if err := FetchJWKS(ctx, hc, c).Has(*c.Active()); !errors.Is(err, ErrNotLive) || !strings.Contains(err.Error(), "different public key") {
		t.Fatalf("different key under the kid: %v", err)
	}
	jwksBody = `{"keys":[{"kid":"x","kty":"EC","crv":"P-256","x":"a","y":"b","d":"c"}]}`
	if l := FetchJWKS(ctx, hc, c); l.JWKSErr == nil || len(l.Private) != 1 {
		t.Fatalf("private member not reported: %+v", l)
	}
	discoBody = `{"issuer":"` + srv.URL + `","jwks_uri":"https://elsewhere.example/jwks.json"}`
	if l := Fetch(ctx, hc, c); l.DiscoveryErr == nil || !strings.Contains(l.DiscoveryErr.Error(), "elsewhere") {
		t.Fatalf("discovery pointing elsewhere: %v", l.DiscoveryErr)
	}
}

func mustSite(t *testing.T, c *profile.Config) []byte {
	j, _, err := Site(c)
	if err != nil {
		t.Fatal(err)
	}
	return j
}
