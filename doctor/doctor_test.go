package doctor

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/delegation"
	"github.com/pact-cli/pact/demoprovider"
	"github.com/pact-cli/pact/discovery"
	"github.com/pact-cli/pact/httpx"
	"github.com/pact-cli/pact/jwks"
	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/secrets"
	"github.com/pact-cli/pact/signer"
	"github.com/pact-cli/pact/store"
)

// fixture is a profile whose issuer is an in-test server publishing its
// keys (jwks.Handler), switchable to an empty set.
type fixture struct {
	p     *profile.Profile
	srv   *httptest.Server
	empty atomic.Bool
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{}
	dir := t.TempDir()
	sec, _ := secrets.Open("file", dir+"/data", 0)
	f.p = &profile.Profile{Name: "default", Dirs: store.Dirs{Config: dir + "/config", Data: dir + "/data"}, Secrets: sec}
	var h http.Handler
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(f.srv.Close)
	if _, err := f.p.Init(f.srv.URL, "", "ES256", false); err != nil {
		t.Fatal(err)
	}
	h = jwks.Handler(f.srv.URL, profile.DefaultJWKSURI(f.srv.URL), func() (jose.JSONWebKeySet, error) {
		if f.empty.Load() {
			return jose.JSONWebKeySet{}, nil
		}
		c, err := f.p.Load()
		if err != nil {
			return jose.JSONWebKeySet{}, err
		}
		return c.JWKS(), nil
	})
	return f
}

func (f *fixture) run(t *testing.T, brands []conversation.Summary, grants []delegation.Grant, now func() time.Time) *Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return Run(ctx, Options{
		Profile: f.p, HTTP: httpx.NewClient(httpx.Options{}), Now: now,
		Conversations: func() ([]conversation.Summary, error) { return brands, nil },
		Grants:        func() ([]delegation.Grant, error) { return grants, nil },
	})
}

func find(r *Report, id, subject string) *Check {
	for i, c := range r.Checks {
		if c.ID == id && (subject == "" || c.Subject == subject) {
			return &r.Checks[i]
		}
	}
	return nil
}

func startProvider(t *testing.T, f *fixture) (*demoprovider.Server, conversation.Summary) {
	t.Helper()
	prov, err := demoprovider.Start(context.Background(), demoprovider.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { prov.Close() })
	if _, err := f.p.AddProvider(prov.URL(), prov.Audience()); err != nil {
		t.Fatal(err)
	}
	b := prov.Brands()[0]
	return prov, conversation.Summary{Brand: b.CardURL, InterfaceURL: b.InterfaceURL, BrandName: b.Name}
}

// TestSection2_2_DoctorChecksThePAJWTWithGetTasks: with the keys published,
// the Provider answers GET tasks (§2.2) and every check passes; with an
// empty JWKS the jwks check and the Provider's refusal (401) both fail.
func TestSection2_2_DoctorChecksThePAJWTWithGetTasks(t *testing.T) {
	f := newFixture(t)
	f.empty.Store(true)
	_, refused := startProvider(t, f)
	rep := f.run(t, []conversation.Summary{refused}, nil, nil)
	if rep.OK {
		t.Fatalf("empty JWKS passed: %+v", rep.Checks)
	}
	if c := find(rep, CheckJWKS, ""); c == nil || c.Status != Fail || !strings.Contains(c.Summary, f.srv.URL+"/.well-known/jwks.json") || c.Fix == "" {
		t.Fatalf("jwks check: %+v", c)
	}
	if c := find(rep, CheckPAJWT, refused.InterfaceURL); c == nil || c.Status != Fail || !strings.Contains(c.Summary, "401") {
		t.Fatalf("pa-jwt check: %+v", c)
	}

	f.empty.Store(false)
	_, accepted := startProvider(t, f) // a fresh Provider: no cached empty set
	rep = f.run(t, []conversation.Summary{accepted}, nil, nil)
	if c := find(rep, CheckPAJWT, accepted.InterfaceURL); c == nil || c.Status != OK {
		t.Fatalf("pa-jwt check with keys published: %+v\n%+v", c, rep.Checks)
	}
	for _, id := range []string{CheckKeyring, CheckProfile, CheckSigningKey, CheckIssuer, CheckDiscovery, CheckJWKS, CheckCard, CheckClock} {
		if c := find(rep, id, ""); c == nil || c.Status != OK {
			t.Errorf("%s: %+v", id, c)
		}
	}
}

// TestSection3_2_DoctorReportsClockSkewFromTheProvidersDate: a Provider
// whose Date is a minute off fails the clock check (PA JWTs allow 30 s).
func TestSection3_2_DoctorReportsClockSkewFromTheProvidersDate(t *testing.T) {
	f := newFixture(t)
	off := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Date", time.Now().Add(-time.Minute).UTC().Format(http.TimeFormat))
		http.NotFound(w, r)
	}))
	defer off.Close()
	if _, err := f.p.AddProvider(off.URL, "aud"); err != nil {
		t.Fatal(err)
	}
	rep := f.run(t, nil, nil, nil)
	if c := find(rep, CheckProvider, off.URL); c == nil || c.Status != OK {
		t.Fatalf("provider: %+v", c)
	}
	c := find(rep, CheckClock, off.URL)
	if c == nil || c.Status != Fail || !strings.Contains(c.Summary, "ahead of") || c.Fix == "" || rep.OK {
		t.Fatalf("clock: %+v", c)
	}
}

// TestSection5_5_DoctorWarnsAboutDeadAndExpiredGrants.
func TestSection5_5_DoctorWarnsAboutDeadAndExpiredGrants(t *testing.T) {
	f := newFixture(t)
	now := time.Now()
	dead := delegation.Grant{Brand: "https://a.example/card", ExpiresAt: now.Add(time.Hour), Refreshable: true, Scopes: []string{"orders:read"}}
	dead.MarkDead(now)
	expired := delegation.Grant{Brand: "https://b.example/card", ExpiresAt: now.Add(-time.Minute)}
	fine := delegation.Grant{Brand: "https://c.example/card", ExpiresAt: now.Add(-time.Minute), Refreshable: true}
	ctx := context.Background()
	rep := Run(ctx, Options{Profile: f.p, HTTP: httpx.NewClient(httpx.Options{}),
		Grants: func() ([]delegation.Grant, error) { return []delegation.Grant{dead, expired, fine}, nil }})
	for brand, want := range map[string]Status{dead.Brand: Warn, expired.Brand: Warn, fine.Brand: OK} {
		c := find(rep, CheckGrant, brand)
		if c == nil || c.Status != want {
			t.Errorf("grant %s: %+v, want %s", brand, c, want)
		}
	}
	if c := find(rep, CheckGrant, dead.Brand); c == nil || !strings.Contains(c.Fix, "pact login https://a.example/card --scope orders:read") {
		t.Errorf("dead grant fix: %+v", c)
	}
}

// TestDoctor_NotInitialisedNamesTheProfile: the fix names the profile.
func TestDoctor_NotInitialisedNamesTheProfile(t *testing.T) {
	dir := t.TempDir()
	sec, _ := secrets.Open("file", dir+"/data", 0)
	p := &profile.Profile{Name: "work", Dirs: store.Dirs{Config: dir + "/config", Data: dir + "/data"}, Secrets: sec}
	rep := Run(context.Background(), Options{Profile: p, HTTP: httpx.NewClient(httpx.Options{})})
	c := find(rep, CheckProfile, "")
	if rep.OK || c == nil || c.Status != Fail || !strings.Contains(c.Fix, "pact --profile work init") {
		t.Fatalf("%+v", rep)
	}
}

// brokenKeyring is an OS keyring that does not answer, as on a machine
// with no Secret Service.
type brokenKeyring struct{}

var errNoDBus = fmt.Errorf(`%w: reading "default/doctor-probe" failed: exec: "dbus-launch": executable file not found in $PATH`, secrets.ErrUnavailable)

func (brokenKeyring) Get(string) (string, error) { return "", errNoDBus }
func (brokenKeyring) Set(string, string) error   { return errNoDBus }
func (brokenKeyring) Delete(string) error        { return errNoDBus }
func (brokenKeyring) Kind() string               { return "os" }
func (brokenKeyring) Where() string              { return "the OS keyring" }

// TestDoctor_UnavailableKeyringFixFitsTheProfile: an OS keyring that does
// not answer is said in plain words (the raw error only as detail), and the
// fix fits the profile: `init --keyring file` before pact init, the
// keyring that holds the secrets (then `keyring move`) after it.
func TestDoctor_UnavailableKeyringFixFitsTheProfile(t *testing.T) {
	dir := t.TempDir()
	fresh := &profile.Profile{Name: "default", Dirs: store.Dirs{Config: dir + "/config", Data: dir + "/data"}, Secrets: brokenKeyring{}}
	rep := Run(context.Background(), Options{Profile: fresh, HTTP: httpx.NewClient(httpx.Options{})})
	c := find(rep, CheckKeyring, "")
	if rep.OK || c == nil || c.Status != Fail {
		t.Fatalf("%+v", rep)
	}
	if strings.Contains(c.Summary, "exec:") || strings.Contains(c.Summary, "dbus-launch") || !strings.Contains(c.Detail, "dbus-launch") {
		t.Errorf("summary %q, detail %q: want plain words, the error as detail", c.Summary, c.Detail)
	}
	if !strings.Contains(c.Fix, "pact init --keyring file --issuer") || strings.Contains(c.Fix, "keyring move") {
		t.Errorf("fix before pact init: %q", c.Fix)
	}

	f := newFixture(t)
	f.p.Secrets = brokenKeyring{}
	rep = f.run(t, nil, nil, nil)
	if c := find(rep, CheckKeyring, ""); c == nil || c.Status != Fail || !strings.Contains(c.Fix, "pact keyring move --to file") || strings.Contains(c.Fix, "init") {
		t.Errorf("fix after pact init: %+v", c)
	}
}

// TestDoctor_BrandsAreNamedWithTheirHostAndTimesFormatted: passing card,
// pa-jwt and grant lines name the Brand as "Name (host)", and times go
// through FormatTime; a dead grant says it is dead in plain words.
func TestDoctor_BrandsAreNamedWithTheirHostAndTimesFormatted(t *testing.T) {
	f := newFixture(t)
	_, b := startProvider(t, f)
	u, _ := url.Parse(b.Brand)
	dead := delegation.Grant{Brand: b.Brand, InterfaceURL: b.InterfaceURL, ExpiresAt: time.Now().Add(time.Hour)}
	dead.MarkDead(time.Now())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rep := Run(ctx, Options{Profile: f.p, HTTP: httpx.NewClient(httpx.Options{}),
		FormatTime:    func(time.Time) string { return "WHEN" },
		Conversations: func() ([]conversation.Summary, error) { return []conversation.Summary{b}, nil },
		Grants:        func() ([]delegation.Grant, error) { return []delegation.Grant{dead}, nil }})
	want := " (" + u.Host + ")"
	for _, id := range []string{CheckCard, CheckPAJWT, CheckGrant} {
		if c := find(rep, id, ""); c == nil || !strings.Contains(c.Summary, want) {
			t.Errorf("%s does not name %q: %+v", id, want, c)
		}
	}
	c := find(rep, CheckGrant, "")
	if c == nil || !strings.Contains(c.Summary, "dead since WHEN (the Brand no longer accepts it)") || strings.Contains(c.Summary, "dropped") {
		t.Errorf("dead grant: %+v", c)
	}
}

// TestSection2_1_DoctorFailsACardThatNoLongerMatchesItsPin: a card that
// pact send would stop at (CARD_CHANGED) fails the card check with the
// `pact card --trust --expect` fix, and no PA JWT goes to it; doctor reads
// the pins and records none.
func TestSection2_1_DoctorFailsACardThatNoLongerMatchesItsPin(t *testing.T) {
	f := newFixture(t)
	_, b := startProvider(t, f)
	pins := store.ProfileDB(f.p.Dirs, f.p.Name).ForUser(store.LocalUser)
	ctx := context.Background()
	run := func() *Report {
		return Run(ctx, Options{Profile: f.p, HTTP: httpx.NewClient(httpx.Options{}), Pins: pins,
			Conversations: func() ([]conversation.Summary, error) { return []conversation.Summary{b}, nil }})
	}
	// First contact: no pin, the card is fine, and doctor pins nothing.
	rep := run()
	if c := find(rep, CheckCard, b.Brand); c == nil || c.Status != OK {
		t.Fatalf("card before any pin: %+v", c)
	}
	if _, ok, _ := discovery.LookupPin(ctx, pins, b.Brand); ok {
		t.Fatal("doctor recorded a pin")
	}
	// Pinned as signed by another key, as if the card had been replaced since.
	card, err := discovery.Fetch(ctx, httpx.NewClient(httpx.Options{}), b.Brand)
	if err != nil {
		t.Fatal(err)
	}
	pin := discovery.PinOf(card, time.Now())
	pin.KeyThumbprint = "the-real-key"
	if err := pins.SetPin(ctx, pin); err != nil {
		t.Fatal(err)
	}
	rep = run()
	c := find(rep, CheckCard, b.Brand)
	if c == nil || c.Status != Fail || rep.OK || !strings.Contains(c.Summary, "changed since you accepted it") ||
		!strings.Contains(c.Fix, "pact card "+b.Brand+" --trust --expect ") {
		t.Fatalf("changed card: %+v", c)
	}
	if c := find(rep, CheckPAJWT, b.InterfaceURL); c != nil {
		t.Fatalf("a PA JWT went to the changed card's interface: %+v", c)
	}
	if p, _, _ := discovery.LookupPin(ctx, pins, b.Brand); p.KeyThumbprint != "the-real-key" {
		t.Fatalf("doctor changed the pin: %+v", p)
	}
}

// TestSection5_DoctorDoesNotClaimAStoredGrantWorks: PACT has no request
// that tests a delegation token without sending a message, so a stored
// grant is reported as stored, not as working.
func TestSection5_DoctorDoesNotClaimAStoredGrantWorks(t *testing.T) {
	f := newFixture(t)
	g := delegation.Grant{Brand: "https://c.example/card", ExpiresAt: time.Now().Add(time.Hour), Refreshable: true}
	rep := f.run(t, nil, []delegation.Grant{g}, nil)
	c := find(rep, CheckGrant, g.Brand)
	if c == nil || c.Status != OK || strings.Contains(c.Summary, "valid") || !strings.Contains(c.Summary, "not checked against the Provider") {
		t.Fatalf("grant: %+v", c)
	}
}

// TestDoctor_WarnsAboutFilesTheImportLeftOut: the files the one-time
// import of the previous release could not read are reported (warn), with
// the folder they are kept in.
func TestDoctor_WarnsAboutFilesTheImportLeftOut(t *testing.T) {
	f := newFixture(t)
	run := func(problems []string) *Report {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return Run(ctx, Options{Profile: f.p, HTTP: httpx.NewClient(httpx.Options{}),
			ImportProblems: func() ([]string, string) { return problems, "/home/u/pact/imported-before-db" }})
	}
	c := find(run([]string{"conversations/0000.json: unexpected end of JSON input"}), CheckHistory, "")
	if c == nil || c.Status != Warn || c.Subject != "/home/u/pact/imported-before-db" || !strings.Contains(c.Summary, "0000.json") || !strings.Contains(c.Fix, "imported-before-db") {
		t.Fatalf("history check = %+v", c)
	}
	if c := find(run(nil), CheckHistory, ""); c != nil {
		t.Fatalf("history check with nothing left out = %+v", c)
	}
}

// The fix for a key replaced where it lives quotes its URI for the shell
// (a pkcs11: URI holds ";", which would end the pasted command).
func TestIssue27_KeyFixQuotesTheKeyURI(t *testing.T) {
	r := &runner{o: Options{Profile: &profile.Profile{Name: "default"}}}
	k := profile.KeyInfo{KID: "kid1", URI: "pkcs11:token=pact;object=pa-key"}
	fix := keyFix(r, k, signer.ErrKeyMismatch)
	if want := "`pact key rotate --key 'pkcs11:token=pact;object=pa-key'`"; !strings.Contains(fix, want) {
		t.Fatalf("fix = %s, want %s", fix, want)
	}
}
