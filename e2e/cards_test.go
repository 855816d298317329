package e2e

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-jose/go-jose/v4"

	"github.com/pact-cli/pact/discovery"
)

// brandSite is a Brand's own origin on 127.0.0.1: it serves the card pact
// is given (its /.well-known/agent-card.json) and the Brand's card-signing
// keys at /.well-known/jwks.json. Tests swap both between runs.
type brandSite struct {
	srv      *httptest.Server
	mu       sync.Mutex
	card     []byte
	keys     []byte
	keyFetch atomic.Int32
}

func newBrandSite(t *testing.T) *brandSite {
	b := &brandSite{}
	b.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		defer b.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/agent-card.json":
			w.Write(b.card)
		case "/.well-known/jwks.json":
			b.keyFetch.Add(1)
			w.Write(b.keys)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(b.srv.Close)
	return b
}

func (b *brandSite) URL() string { return b.srv.URL }
func (b *brandSite) JKU() string { return b.srv.URL + "/.well-known/jwks.json" }

// serve sets the card for iface, signed by each key in sigs (kid = its
// index name), and publishes pub.
func (b *brandSite) serve(t *testing.T, iface string, sigs []signer, pub ...signer) {
	t.Helper()
	card := []byte(cardJSON(iface, nil))
	for _, s := range sigs {
		var err error
		if card, err = discovery.SignCardHeader(card, s.key, s.header(b.JKU())); err != nil {
			t.Fatal(err)
		}
	}
	set := jose.JSONWebKeySet{}
	for _, p := range pub {
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: p.key.Public(), KeyID: p.kid, Algorithm: "ES256", Use: "sig"})
	}
	keys, _ := json.Marshal(set)
	b.mu.Lock()
	b.card, b.keys = card, keys
	b.mu.Unlock()
}

// tamper changes the card's description after it was signed.
func (b *brandSite) tamper() {
	b.mu.Lock()
	defer b.mu.Unlock()
	var m map[string]any
	json.Unmarshal(b.card, &m)
	m["description"] = "Now with a new, friendlier payment address."
	b.card, _ = json.Marshal(m)
}

type signer struct {
	key crypto.Signer
	kid string
	// hdr, when set, is the protected header with JKU replaced.
	hdr string
}

func (s signer) header(jku string) []byte {
	if s.hdr != "" {
		return []byte(strings.ReplaceAll(s.hdr, "JKU", jku))
	}
	h, _ := json.Marshal(map[string]string{"alg": "ES256", "kid": s.kid, "jku": jku, "typ": "JOSE"})
	return h
}

func newSigner(t *testing.T, kid string) signer {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return signer{key: k, kid: kid}
}

func okSend(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(agentReply("hello from the Provider")))
}

// cardsEnv is a profile registered with both Providers (so that only the
// pin can stop a card that moves from a to b) and a Brand site.
func cardsEnv(t *testing.T) (*env, *brandSite, *fakeProvider, *fakeProvider) {
	a, b := newFakeProvider(t, okSend), newFakeProvider(t, okSend)
	e := newEnv(t, "http://127.0.0.1:1")
	e.must("provider", "add", a.URL(), "--audience", "aud-a", "--json")
	e.must("provider", "add", b.URL(), "--audience", "aud-b", "--json")
	return e, newBrandSite(t), a, b
}

type cardDoc struct {
	Pact struct {
		Signature struct {
			Verified bool     `json:"verified"`
			KID      string   `json:"kid"`
			KeyURL   string   `json:"keyUrl"`
			Problems []string `json:"problems"`
		} `json:"signature"`
	} `json:"pact"`
}

func readCard(t *testing.T, r result) cardDoc {
	t.Helper()
	var d cardDoc
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
		t.Fatalf("stdout is not the card document: %v\n%s\n%s", err, r.stdout, r.stderr)
	}
	return d
}

func TestA2A_8_4_E2E_ValidSignatureIsShownAndUsed(t *testing.T) {
	t.Parallel()
	e, site, a, _ := cardsEnv(t)
	k := newSigner(t, "brand-1")
	site.serve(t, a.Iface(), []signer{k}, k)
	d := readCard(t, e.must("card", site.URL(), "--json"))
	if s := d.Pact.Signature; !s.Verified || s.KID != "brand-1" || s.KeyURL != site.JKU() || s.Problems == nil || len(s.Problems) != 0 {
		t.Fatalf("pact.signature = %+v", s)
	}
	r := e.must("card", site.URL())
	if want := "signed by " + strings.TrimPrefix(site.URL(), "http://") + " ✓"; !strings.Contains(r.stdout, want) {
		t.Fatalf("the table does not say %q:\n%s", want, r.stdout)
	}
	e.must("send", site.URL(), "hello", "--json")
	if a.sends.Load() != 1 {
		t.Fatalf("the Provider got %d messages, want 1", a.sends.Load())
	}
}

// refusedCard asserts that card and send refuse the card as INVALID_CARD
// with msg, and that the Provider received nothing.
func refusedCard(t *testing.T, e *env, site *brandSite, a *fakeProvider, msg string) {
	t.Helper()
	r := e.run("card", site.URL(), "--json")
	if r.code != 1 {
		t.Fatalf("card: exit %d, want 1\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if d := readCard(t, r); d.Pact.Signature.Verified || len(d.Pact.Signature.Problems) == 0 || !strings.Contains(strings.Join(d.Pact.Signature.Problems, " "), msg) {
		t.Fatalf("pact.signature = %+v, want a problem saying %q", d.Pact.Signature, msg)
	}
	wantError(t, e.run("send", site.URL(), "hello", "--json"), 1, "INVALID_CARD", 200, "signature check failed", msg)
	if r := e.run("send", site.URL(), "hello"); r.code != 1 || !strings.Contains(r.stderr, msg) {
		t.Fatalf("send (human): exit %d, stderr %q; want 1 saying %q", r.code, r.stderr, msg)
	}
	if a.sends.Load() != 0 {
		t.Fatalf("the Provider got %d messages for a refused card", a.sends.Load())
	}
}

func TestA2A_8_4_E2E_TamperedCardIsRefused(t *testing.T) {
	t.Parallel()
	e, site, a, _ := cardsEnv(t)
	k := newSigner(t, "brand-1")
	site.serve(t, a.Iface(), []signer{k}, k)
	site.tamper()
	refusedCard(t, e, site, a, "signature does not match the card")
}

func TestA2A_8_4_E2E_KeyURLOnAnotherOriginIsRefused(t *testing.T) {
	t.Parallel()
	e, site, a, _ := cardsEnv(t)
	evil := newBrandSite(t)
	k := newSigner(t, "brand-1")
	evil.serve(t, a.Iface(), nil, k)
	k.hdr = `{"alg":"ES256","kid":"brand-1","jku":"` + evil.JKU() + `"}`
	site.serve(t, a.Iface(), []signer{k}, k)
	refusedCard(t, e, site, a, "is not on the Brand's own origin")
	if evil.keyFetch.Load() != 0 {
		t.Fatal("pact fetched keys from another origin")
	}
}

func TestA2A_8_4_E2E_UnknownAlgorithmIsRefused(t *testing.T) {
	t.Parallel()
	e, site, a, _ := cardsEnv(t)
	k := newSigner(t, "brand-1")
	k.hdr = `{"alg":"ES512","kid":"brand-1","jku":"JKU"}`
	site.serve(t, a.Iface(), []signer{k}, k)
	refusedCard(t, e, site, a, `algorithm "ES512" is not accepted`)
}

func TestA2A_8_4_E2E_UnsignedCardIsAcceptedAndShownUnsigned(t *testing.T) {
	t.Parallel()
	e, site, a, _ := cardsEnv(t)
	site.serve(t, a.Iface(), nil)
	d := readCard(t, e.must("card", site.URL(), "--json"))
	if d.Pact.Signature.Verified || d.Pact.Signature.Problems == nil {
		t.Fatalf("pact.signature = %+v", d.Pact.Signature)
	}
	if r := e.must("card", site.URL()); !strings.Contains(r.stdout, "unsigned") {
		t.Fatalf("the table does not say unsigned:\n%s", r.stdout)
	}
	e.must("send", site.URL(), "hello", "--json")
	if a.sends.Load() != 1 {
		t.Fatalf("the Provider got %d messages, want 1", a.sends.Load())
	}
}

// changedCard asserts CARD_CHANGED (exit 1) with old and new in the --json
// error, for send (--json and human) and line-mode chat, and that neither
// Provider got a message.
func changedCard(t *testing.T, e *env, site *brandSite, providers ...*fakeProvider) map[string]json.RawMessage {
	t.Helper()
	before := make([]int32, len(providers))
	for i, p := range providers {
		before[i] = p.sends.Load()
	}
	r := e.run("send", site.URL(), "my card number is 4111…", "--json")
	wantError(t, r, 1, "CARD_CHANGED", 0, "changed", "nothing was sent", "--trust")
	var doc struct {
		Error map[string]json.RawMessage `json:"error"`
	}
	json.Unmarshal([]byte(r.stdout), &doc)
	for _, k := range []string{"old", "new", "changes"} {
		if _, ok := doc.Error[k]; !ok {
			t.Errorf("the CARD_CHANGED error lacks %q:\n%s", k, r.stdout)
		}
	}
	h := e.run("send", site.URL(), "hello")
	if h.code != 1 || !strings.Contains(h.stderr, "accepted") || !strings.Contains(h.stderr, "now") {
		t.Fatalf("send (human): exit %d, stderr:\n%s", h.code, h.stderr)
	}
	c := e.cmd(t.Context(), "chat", site.URL())
	c.Stdin = strings.NewReader("hello\n")
	if out, err := c.CombinedOutput(); err == nil || !strings.Contains(string(out), "changed") {
		t.Fatalf("chat (line mode) did not stop: %v\n%s", err, out)
	}
	for i, p := range providers {
		if got := p.sends.Load(); got != before[i] {
			t.Fatalf("Provider %d got %d message(s) after the card changed, before the User accepted", i, got-before[i])
		}
	}
	return doc.Error
}

func TestPin_E2E_SignedThenUnsignedStops(t *testing.T) {
	t.Parallel()
	e, site, a, _ := cardsEnv(t)
	k := newSigner(t, "brand-1")
	site.serve(t, a.Iface(), []signer{k}, k)
	e.must("send", site.URL(), "hello", "--json")
	site.serve(t, a.Iface(), nil)
	d := changedCard(t, e, site, a)
	if !strings.Contains(string(d["changes"]), "no longer signed") {
		t.Fatalf("changes %s", d["changes"])
	}
}

func TestPin_E2E_ProviderMovedReceivesNothingBeforeTrust(t *testing.T) {
	t.Parallel()
	e, site, a, b := cardsEnv(t)
	k := newSigner(t, "brand-1")
	site.serve(t, a.Iface(), []signer{k}, k)
	e.must("send", site.URL(), "hello", "--json")
	// The card, still validly signed by the same key, now names Provider b.
	site.serve(t, b.Iface(), []signer{k}, k)
	d := changedCard(t, e, site, a, b)
	var old, cur struct {
		ProviderOrigin string `json:"providerOrigin"`
		InterfaceURL   string `json:"interfaceUrl"`
	}
	json.Unmarshal(d["old"], &old)
	json.Unmarshal(d["new"], &cur)
	if old.InterfaceURL != a.Iface() || cur.InterfaceURL != b.Iface() || old.ProviderOrigin != a.URL() || cur.ProviderOrigin != b.URL() {
		t.Fatalf("old %+v new %+v", old, cur)
	}
	if b.sends.Load() != 0 {
		t.Fatal("the moved Provider received a message before --trust")
	}
	// Without a terminal, --trust alone does not accept what was not shown.
	wantError(t, e.run("card", site.URL(), "--trust", "--json"), 1, "CARD_CHANGED", 0, "--expect")
	var fp string
	json.Unmarshal(d["fingerprint"], &fp)
	r := e.must("card", site.URL(), "--trust", "--expect", fp)
	if !strings.Contains(r.stderr, a.Iface()) || !strings.Contains(r.stdout, "accepted now") {
		t.Fatalf("--trust does not show what was accepted before:\nstdout %s\nstderr %s", r.stdout, r.stderr)
	}
	e.must("send", site.URL(), "hello", "--json")
	if b.sends.Load() != 1 || a.sends.Load() != 1 {
		t.Fatalf("after --trust: a got %d, b got %d; want 1 and 1", a.sends.Load(), b.sends.Load())
	}
}

func TestPin_E2E_AnotherKeyStops(t *testing.T) {
	t.Parallel()
	e, site, a, _ := cardsEnv(t)
	k1, k2 := newSigner(t, "brand-1"), newSigner(t, "brand-2")
	site.serve(t, a.Iface(), []signer{k1}, k1)
	e.must("send", site.URL(), "hello", "--json")
	site.serve(t, a.Iface(), []signer{k2}, k2)
	changedCard(t, e, site, a)
}

func TestPin_E2E_KeyRotationSignedByTheOldKeyIsAccepted(t *testing.T) {
	t.Parallel()
	e, site, a, _ := cardsEnv(t)
	k1, k2 := newSigner(t, "brand-1"), newSigner(t, "brand-2")
	site.serve(t, a.Iface(), []signer{k1}, k1)
	e.must("send", site.URL(), "hello", "--json")
	// The Brand announces k2 with a card signed by both.
	site.serve(t, a.Iface(), []signer{k1, k2}, k1, k2)
	e.must("send", site.URL(), "hello", "--json")
	// k1 retired: the card signed by k2 alone is the Brand's.
	site.serve(t, a.Iface(), []signer{k2}, k2)
	e.must("send", site.URL(), "hello", "--json")
	if a.sends.Load() != 3 {
		t.Fatalf("the Provider got %d messages, want 3", a.sends.Load())
	}
	// And the retired key no longer speaks for the Brand.
	site.serve(t, a.Iface(), []signer{k1}, k1)
	changedCard(t, e, site, a)
}

// cardNote is the "pinned" row of `pact card` for the site.
func cardNote(t *testing.T, e *env, site *brandSite) string {
	t.Helper()
	r := e.must("card", site.URL())
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(l, "pinned") {
			return l
		}
	}
	t.Fatalf("no pinned row:\n%s", r.stdout)
	return ""
}

// The reviewer's sequence: pinned key k1; the card signed by k1 and k2 is
// looked at four times: the pin moves to k2 once ("announced by the key you
// accepted") and then matches, never flapping back; k2 alone is sent to;
// the retired k1 alone is a change.
func TestPin_E2E_RotationMovesThePinOnceAndNeverBack(t *testing.T) {
	t.Parallel()
	e, site, a, _ := cardsEnv(t)
	k1, k2 := newSigner(t, "brand-1"), newSigner(t, "brand-2")
	site.serve(t, a.Iface(), []signer{k1}, k1)
	e.must("card", site.URL())
	site.serve(t, a.Iface(), []signer{k1, k2}, k1, k2)
	for i := 0; i < 4; i++ {
		note := cardNote(t, e, site)
		want := "matches what you accepted"
		if i == 0 {
			want = "announced by the key you accepted"
		}
		if !strings.Contains(note, want) {
			t.Fatalf("look %d: %q; want %q", i+1, note, want)
		}
	}
	site.serve(t, a.Iface(), []signer{k2}, k1, k2)
	e.must("send", site.URL(), "hello", "--json")
	site.serve(t, a.Iface(), []signer{k1}, k1, k2)
	d := changedCard(t, e, site, a)
	if !strings.Contains(string(d["changes"]), "signed by a retired key") {
		t.Fatalf("changes %s", d["changes"])
	}
	if a.sends.Load() != 1 {
		t.Fatalf("the Provider got %d messages, want 1", a.sends.Load())
	}
}

// --trust --expect accepts only the card the User was shown: when the card
// changed again after the CARD_CHANGED error (here: unsigned, on another
// Provider), the fingerprint differs and nothing is accepted.
func TestPin_E2E_TrustAcceptsOnlyTheCardShown(t *testing.T) {
	t.Parallel()
	e, site, a, b := cardsEnv(t)
	k1, k2 := newSigner(t, "brand-1"), newSigner(t, "brand-2")
	site.serve(t, a.Iface(), []signer{k1}, k1)
	e.must("send", site.URL(), "hello", "--json")
	site.serve(t, a.Iface(), []signer{k2}, k2)
	r := e.run("send", site.URL(), "hello", "--json")
	je := wantError(t, r, 1, "CARD_CHANGED", 0, "--expect")
	var doc struct {
		Error struct {
			Fingerprint string `json:"fingerprint"`
		} `json:"error"`
	}
	json.Unmarshal([]byte(r.stdout), &doc)
	shown := doc.Error.Fingerprint
	if shown == "" || !strings.Contains(je.Message, shown) {
		t.Fatalf("the error does not name the fingerprint %q:\n%s", shown, r.stdout)
	}
	h := e.run("send", site.URL(), "hello")
	if !strings.Contains(h.stderr, "--trust --expect "+shown) {
		t.Fatalf("human error lacks the --expect command:\n%s", h.stderr)
	}
	// The server switches before the User runs --trust.
	site.serve(t, b.Iface(), nil)
	bad := e.run("card", site.URL(), "--trust", "--expect", shown, "--json")
	wantError(t, bad, 1, "CARD_CHANGED", 0, "not the card you were shown", shown)
	hb := e.run("card", site.URL(), "--trust", "--expect", shown)
	if hb.code != 1 || !strings.Contains(hb.stderr, "not the card you were shown") || !strings.Contains(hb.stderr, b.Iface()) {
		t.Fatalf("human: exit %d\n%s", hb.code, hb.stderr)
	}
	// --trust alone, without a terminal, accepts nothing either.
	wantError(t, e.run("card", site.URL(), "--trust", "--json"), 1, "CARD_CHANGED", 0)
	changedCard(t, e, site, a, b) // the pin is still k1 on a
	// Back to the card shown: --expect accepts it, and send goes through.
	site.serve(t, a.Iface(), []signer{k2}, k2)
	e.must("card", site.URL(), "--trust", "--expect", strings.ToUpper(shown))
	e.must("send", site.URL(), "hello", "--json")
	if a.sends.Load() != 2 || b.sends.Load() != 0 {
		t.Fatalf("a got %d, b got %d; want 2 and 0", a.sends.Load(), b.sends.Load())
	}
	wantError(t, e.run("card", site.URL(), "--expect", shown, "--json"), 2, "USAGE", 0, "--trust")
}
