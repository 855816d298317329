package e2e

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pact-cli/pact/demoprovider"
)

// staticSite is a plain static file server on 127.0.0.1 serving a folder,
// as any static HTTPS host would (no pact code involved), counting the
// requests for the JWKS.
type staticSite struct {
	srv      *httptest.Server
	dir      string
	jwksHits atomic.Int32
}

func newStaticSite(t *testing.T) *staticSite {
	s := &staticSite{dir: t.TempDir()}
	files := http.FileServer(http.Dir(s.dir))
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/jwks.json" {
			s.jwksHits.Add(1)
		}
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// publishedEnv is a profile whose issuer is a static site made by `pact
// jwks export`, registered with a demo Provider (open policy: it finds the
// JWKS through the site's discovery document).
type publishedEnv struct {
	*env
	site *staticSite
	prov *demoprovider.Server
	card string // the first Brand's card URL
	addr string // the Provider's listen address
}

func newPublishedEnv(t *testing.T, cfg demoprovider.Config) *publishedEnv {
	t.Helper()
	site := newStaticSite(t)
	e := newEnv(t, site.srv.URL)
	e.must("jwks", "export", site.dir)
	p := &publishedEnv{env: e, site: site}
	p.startProvider(t, cfg)
	e.must("provider", "add", p.prov.URL(), "--audience", p.prov.Audience(), "--json")
	return p
}

func (p *publishedEnv) startProvider(t *testing.T, cfg demoprovider.Config) {
	t.Helper()
	cfg.Addr = p.addr
	prov := startDemo(t, cfg)
	p.prov = prov
	p.addr = strings.TrimPrefix(prov.URL(), "http://")
	p.card = prov.Brands()[0].CardURL
}

type doctorOut struct {
	Profile string `json:"profile"`
	OK      bool   `json:"ok"`
	Checks  []struct {
		ID      string `json:"id"`
		Subject string `json:"subject"`
		Status  string `json:"status"`
		Summary string `json:"summary"`
		Fix     string `json:"fix"`
	} `json:"checks"`
}

func (p *publishedEnv) doctor(t *testing.T) (doctorOut, result) {
	t.Helper()
	r := p.run("doctor", "--json")
	var d doctorOut
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
		t.Fatalf("pact doctor --json: exit %d, not a report: %v\n%s\n%s", r.code, err, r.stdout, r.stderr)
	}
	return d, r
}

func (d doctorOut) status(id, subject string) string {
	for _, c := range d.Checks {
		if c.ID == id && (subject == "" || c.Subject == subject) {
			return c.Status
		}
	}
	return ""
}

// TestSection3_1_ExportedStaticSiteIsAcceptedAndDoctorChecksIt: `pact jwks
// export` → a plain static file server on loopback → the demo Provider
// (open policy, OIDC discovery) accepts the PA JWT; `pact doctor` passes,
// checking the PA JWT with GET tasks (§2.2), then fails naming the jwks_uri
// once the site is down.
func TestSection3_1_ExportedStaticSiteIsAcceptedAndDoctorChecksIt(t *testing.T) {
	t.Parallel()
	p := newPublishedEnv(t, demoprovider.Config{})
	// Export is idempotent: a second run leaves the files as they were.
	before := p.snapshot()
	p.must("jwks", "export", p.site.dir)
	p.assertUnchanged(before)

	parseSend(t, p.run("send", p.card, "where is order A-88213?", "--json"))

	d, r := p.doctor(t)
	if r.code != 0 || !d.OK {
		t.Fatalf("doctor: exit %d, want 0\n%s", r.code, r.stdout)
	}
	iface := p.prov.Brands()[0].InterfaceURL
	for id, subject := range map[string]string{"keyring": "", "profile": "", "jwks": "", "card": p.card, "pa-jwt": iface, "clock": iface} {
		if s := d.status(id, subject); s != "ok" {
			t.Errorf("check %s %s = %q, want ok\n%s", id, subject, s, r.stdout)
		}
	}

	p.site.srv.Close()
	d, r = p.doctor(t)
	if r.code != 1 || d.OK {
		t.Fatalf("doctor with the site down: exit %d, want 1\n%s", r.code, r.stdout)
	}
	jwksURI := p.site.srv.URL + "/.well-known/jwks.json"
	found := false
	for _, c := range d.Checks {
		if c.ID == "jwks" && c.Status == "fail" && strings.Contains(c.Summary, jwksURI) && c.Fix != "" {
			found = true
		}
	}
	if !found {
		t.Fatalf("no failing jwks check naming %s:\n%s", jwksURI, r.stdout)
	}
	human := p.run("doctor")
	if human.code != 1 || !strings.Contains(human.stdout, jwksURI) || !strings.Contains(human.stdout, "fix:") {
		t.Fatalf("human doctor output: exit %d\n%s", human.code, human.stdout)
	}
}

type keyOut struct {
	KID    string `json:"kid"`
	State  string `json:"state"`
	Active bool   `json:"active"`
	Live   *bool  `json:"live"`
}

func (p *publishedEnv) keys(t *testing.T) map[string]keyOut {
	t.Helper()
	r := p.must("key", "list", "--json")
	var list []keyOut
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatalf("key list --json: %v\n%s", err, r.stdout)
	}
	m := map[string]keyOut{}
	for _, k := range list {
		m[k.KID] = k
	}
	return m
}

// TestRotation_StagedKeyKeepsSendingAndActivatesOnceLive: `pact key rotate`
// adds a staged key that does not sign, so sending goes on without
// re-exporting; `pact key activate` refuses while the live jwks_uri lacks
// the key, and switches once the re-exported site serves it; the active key
// cannot be retired.
func TestRotation_StagedKeyKeepsSendingAndActivatesOnceLive(t *testing.T) {
	t.Parallel()
	p := newPublishedEnv(t, demoprovider.Config{})
	parseSend(t, p.run("send", p.card, "hello", "--json"))
	var old keyOut
	for _, k := range p.keys(t) {
		old = k
	}

	var staged keyOut
	if err := json.Unmarshal([]byte(p.must("key", "rotate", "--json").stdout), &staged); err != nil || staged.State != "staged" || staged.Active {
		t.Fatalf("key rotate --json = %+v, %v", staged, err)
	}
	// Not re-exported: the active key still signs, so sending still works.
	parseSend(t, p.run("send", p.card, "still there?", "--json"))
	ks := p.keys(t)
	if ks[old.KID].State != "active" || ks[old.KID].Live == nil || !*ks[old.KID].Live {
		t.Fatalf("old key after rotate = %+v", ks[old.KID])
	}
	if k := ks[staged.KID]; k.State != "staged" || k.Live == nil || *k.Live {
		t.Fatalf("staged key before export = %+v, want staged and not live", k)
	}
	r := p.run("key", "activate", "--json", "--", staged.KID)
	if r.code != 1 || !strings.Contains(r.stdout, "KEY_NOT_LIVE") || !strings.Contains(r.stdout, "jwks export") {
		t.Fatalf("activate before export: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	p.must("jwks", "export", p.site.dir)
	d, _ := p.doctor(t)
	if d.status("staged-key", staged.KID) != "ok" {
		t.Fatalf("doctor does not report the staged key live:\n%+v", d.Checks)
	}
	p.must("key", "activate", "--", staged.KID)
	ks = p.keys(t)
	if ks[staged.KID].State != "active" || ks[old.KID].State != "published" {
		t.Fatalf("after activate: %+v", ks)
	}
	hits := p.site.jwksHits.Load()
	// A Provider refetches a JWKS for an unknown kid at most once a second
	// (jwks.Cache.MinRefetch); the last fetch was just now.
	time.Sleep(1100 * time.Millisecond)
	parseSend(t, p.run("send", p.card, "with the new key", "--json"))
	if p.site.jwksHits.Load() <= hits {
		t.Fatalf("the Provider did not fetch the JWKS for the new kid: the message was not signed by it")
	}
	r = p.run("key", "retire", "--json", "--", staged.KID)
	if r.code != 1 || !strings.Contains(r.stdout, "ACTIVE_KEY") {
		t.Fatalf("retiring the active key: exit %d\n%s", r.code, r.stdout)
	}
	p.must("key", "retire", "--", old.KID)
	p.must("jwks", "export", p.site.dir)
	parseSend(t, p.run("send", p.card, "after retiring the old key", "--json"))
}

// TestKeyring_ProfileRemembersItsKeyring: a profile made with
// PACT_KEYRING=file works with the variable unset; an explicit conflicting
// setting is a usage error naming both.
func TestKeyring_ProfileRemembersItsKeyring(t *testing.T) {
	t.Parallel()
	p := newPublishedEnv(t, demoprovider.Config{})
	p.extra = append(p.extra, "PACT_KEYRING=")
	var id struct {
		KeyStorage string `json:"keyStorage"`
	}
	if err := json.Unmarshal([]byte(p.must("whoami", "--json").stdout), &id); err != nil || id.KeyStorage != "file" {
		t.Fatalf("whoami without PACT_KEYRING: %+v, %v", id, err)
	}
	parseSend(t, p.run("send", p.card, "hello without PACT_KEYRING", "--json"))
	if r := p.run("keyring", "move", "--to", "file"); r.code != 2 || !strings.Contains(r.stderr, "already keeps its secrets") {
		t.Fatalf("moving to the keyring it already uses: exit %d\n%s", r.code, r.stderr)
	}

	p.extra = append(p.extra, "PACT_KEYRING=os")
	r := p.run("whoami", "--json")
	if r.code != 2 || !strings.Contains(r.stdout, "KEYRING_CONFLICT") || !strings.Contains(r.stdout, "PACT_KEYRING=os") ||
		!strings.Contains(r.stdout, `\"file\"`) || !strings.Contains(r.stdout, "keyring move --to os") {
		t.Fatalf("conflicting PACT_KEYRING: exit %d\n%s", r.code, r.stdout)
	}

	// A second profile created with --keyring file records it too.
	q := &env{t: t, home: p.home, extra: []string{"PACT_KEYRING="}}
	q.must("--profile", "work", "init", "--issuer", p.site.srv.URL, "--keyring", "file", "--json")
	if err := json.Unmarshal([]byte(q.must("--profile", "work", "whoami", "--json").stdout), &id); err != nil || id.KeyStorage != "file" {
		t.Fatalf("whoami of a --keyring file profile: %+v, %v", id, err)
	}
	// Hints name the profile.
	r = q.run("--profile", "fresh", "whoami")
	if r.code != 1 || !strings.Contains(r.stderr, "pact --profile fresh init") {
		t.Fatalf("hint for an uninitialised profile: exit %d\n%s", r.code, r.stderr)
	}
}

var linkRE = regexp.MustCompile(`Link:\s+(\S+)`)

// login runs `pact login` for scope and plays the User with the demo's
// scripted browser.
func (p *publishedEnv) login(t *testing.T, scope string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := p.cmd(ctx, "login", p.card, "--scope", scope, "--no-browser")
	var out, errb syncBuffer
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	var link string
	for deadline := time.Now().Add(10 * time.Second); link == ""; time.Sleep(20 * time.Millisecond) {
		if m := linkRE.FindStringSubmatch(errb.String()); m != nil {
			link = m[1]
		} else if time.Now().After(deadline) {
			c.Process.Kill()
			t.Fatalf("pact login showed no link:\n%s", errb.String())
		}
	}
	u := demoprovider.ScriptedUser{Username: "jane", Password: "jane-demo-pass"}
	if err := u.Visit(ctx, link); err != nil {
		c.Process.Kill()
		t.Fatalf("scripted user: %v", err)
	}
	if err := c.Wait(); err != nil {
		t.Fatalf("pact login: %v\n%s", err, errb.String())
	}
}

type grantOut struct {
	Brand     string     `json:"brand"`
	Dead      bool       `json:"dead"`
	DeadSince *time.Time `json:"deadSince"`
}

// TestSection5_5_DroppedGrantIsMarkedDeadAndTurnsGoIdentityOnly: the demo
// Provider restarts and forgets every grant. The first send fails with exit
// 3 naming `pact login`, its --json error carrying the refusal's 401; the
// grant is then dead, and the next send goes identity-only with a notice.
func TestSection5_5_DroppedGrantIsMarkedDeadAndTurnsGoIdentityOnly(t *testing.T) {
	t.Parallel()
	cfg := demoprovider.Config{PollInterval: time.Second}
	p := newPublishedEnv(t, cfg)
	p.login(t, "orders:read")
	parseSend(t, p.run("send", p.card, "where is order A-88213?", "--json"))

	p.prov.Close()
	// Same address: the grant's interface URL and token endpoint stay valid.
	if ln, err := net.Listen("tcp", p.addr); err == nil {
		ln.Close()
	}
	p.startProvider(t, cfg)

	// The restarted Provider signs with the same key: the receipt archived
	// before the restart still verifies against its jwks_uri.
	var ver struct{ Verified, Failed int }
	if r := p.run("receipts", "verify", "--all", "--json"); r.code != 0 || json.Unmarshal([]byte(r.stdout), &ver) != nil || ver.Verified == 0 || ver.Failed != 0 {
		t.Fatalf("receipts verify after the restart: exit %d, want 0 with every receipt verified\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	r := p.run("send", p.card, "and now?", "--json")
	var e struct {
		Error struct {
			Reason     string `json:"reason"`
			Message    string `json:"message"`
			HTTPStatus int    `json:"httpStatus"`
		} `json:"error"`
	}
	if r.code != 3 || json.Unmarshal([]byte(r.stdout), &e) != nil || e.Error.HTTPStatus != 401 || !strings.Contains(e.Error.Message, "pact login") {
		t.Fatalf("first send after the restart: exit %d, want 3 with httpStatus 401\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var grants []grantOut
	if err := json.Unmarshal([]byte(p.must("grants", "--json").stdout), &grants); err != nil || len(grants) != 1 || !grants[0].Dead || grants[0].DeadSince == nil {
		t.Fatalf("grants after the refusal: %+v, %v", grants, err)
	}
	if h := p.must("grants"); !strings.Contains(h.stdout, "dead since") {
		t.Errorf("pact grants does not show the dead grant:\n%s", h.stdout)
	}

	var res struct {
		ContextID string `json:"contextId"`
		DeadGrant *struct {
			State string `json:"state"`
			Login string `json:"login"`
		} `json:"deadGrant"`
	}
	r = p.run("send", p.card, "--new", "hello again", "--json")
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &res) != nil || res.DeadGrant == nil || res.DeadGrant.State != "dead" || !strings.Contains(res.DeadGrant.Login, "pact login") {
		t.Fatalf("identity-only send: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	h := p.run("send", p.card, "once more")
	if h.code != 0 || strings.Count(strings.TrimSpace(h.stderr), "\n") > 2 || !strings.Contains(h.stderr, "without your delegation") {
		t.Fatalf("human identity-only send: exit %d\nstderr: %s", h.code, h.stderr)
	}
	// pact login again brings the delegation back.
	p.login(t, "orders:read")
	if err := json.Unmarshal([]byte(p.must("grants", "--json").stdout), &grants); err != nil || grants[0].Dead {
		t.Fatalf("grant after a new login: %+v, %v", grants, err)
	}
}
