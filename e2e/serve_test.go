//go:build !windows

// pact serve end to end: stopped by SIGTERM, which Windows processes do not take.

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pact-cli/pact/demoprovider"
	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/secrets"
	"github.com/pact-cli/pact/server"
	pasigner "github.com/pact-cli/pact/signer"
	"github.com/pact-cli/pact/store"
)

// serveEnv is a `pact serve` process on 127.0.0.1 with its own PACT_HOME
// (file keyring), the profile of which is the server's identity.
type serveEnv struct {
	*env
	url  string
	proc *exec.Cmd
	logs *syncBuf
	done chan struct{} // closed when the process has exited
	err  error         // its Wait error, once done
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func newSyncBuf() *syncBuf { return &syncBuf{} }
func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startServe makes the server's identity (pact init --issuer) and starts
// `pact serve` on it; it returns once /readyz answers 200.
func startServe(t *testing.T) *serveEnv {
	t.Helper()
	addr := freeAddr(t)
	url := "http://" + addr
	e := newEnv(t, url)
	s := &serveEnv{env: e, url: url, logs: newSyncBuf(), done: make(chan struct{})}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	s.proc = e.cmd(ctx, "serve", "--addr", addr)
	s.proc.Stderr = s.logs
	if err := s.proc.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.err = s.proc.Wait(); close(s.done) }()
	t.Cleanup(func() {
		s.proc.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(30 * time.Second):
			s.proc.Process.Kill()
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return s
			}
		}
		select {
		case <-s.done:
			t.Fatalf("pact serve exited: %v\n%s", s.err, s.logs.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("pact serve not ready in 30 s\n%s", s.logs.String())
		}
	}
}

// device is one device's own PACT_HOME.
func newDevice(t *testing.T) *env { return &env{t: t, home: t.TempDir()} }

type enrolled struct {
	Profile string `json:"profile"`
	Server  string `json:"server"`
	Issuer  string `json:"issuer"`
	User    struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"user"`
	Device struct {
		ID    string `json:"id"`
		Name  string `json:"name"`
		State string `json:"state"`
	} `json:"device"`
}

func decode[T any](t *testing.T, r result) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, r.stdout)
	}
	return v
}

type codeOut struct {
	User struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"user"`
	Code    string `json:"code"`
	Command string `json:"command"`
}

func (s *serveEnv) enrol(t *testing.T, d *env, code, name string) enrolled {
	t.Helper()
	return decode[enrolled](t, d.must("init", "--server", s.url, "--code", code, "--device-name", name, "--json"))
}

type deviceOut struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	State   string `json:"state"`
	Current bool   `json:"current"`
}

// TestIssue29_ServeTwoUsersEndToEnd: a `pact serve`, two Users with a
// device each (own PACT_HOME), the operator's commands while it runs:
// enrolment codes work once and for 15 minutes, a revoked device is
// refused at its next call, another User's device answers as a device
// that does not exist, and SIGTERM stops it cleanly.
func TestIssue29_ServeTwoUsersEndToEnd(t *testing.T) {
	s := startServe(t)
	alice := decode[codeOut](t, s.must("serve", "user", "add", "alice", "--json"))
	bob := decode[codeOut](t, s.must("serve", "user", "add", "bob", "--json"))
	if alice.Code == "" || !strings.Contains(alice.Command, "--server "+s.url) {
		t.Fatalf("user add: %+v", alice)
	}
	laptop, phone := newDevice(t), newDevice(t)
	a := s.enrol(t, laptop, alice.Code, "alice-laptop")
	b := s.enrol(t, phone, bob.Code, "bob-phone")
	if a.User.Name != "alice" || b.User.Name != "bob" || a.Issuer != s.url || a.Device.State != "active" {
		t.Fatalf("enrolled %+v / %+v", a, b)
	}

	// Once only: the same code again, on another device, is refused and
	// leaves that device's PACT_HOME as it was.
	other := newDevice(t)
	before := other.snapshot()
	wantError(t, other.run("init", "--server", s.url, "--code", alice.Code, "--json"), 3, "ENROLMENT_CODE_REFUSED", 400, "already used")
	other.assertUnchanged(before)

	// Expired: a code whose 15 minutes are over (aged in the database).
	late := decode[codeOut](t, s.must("serve", "user", "code", "alice", "--json"))
	ageCodes(t, filepath.Join(s.home, "data", "profiles", "default", "serve.db"))
	wantError(t, other.run("init", "--server", s.url, "--code", late.Code, "--json"), 3, "ENROLMENT_CODE_REFUSED", 400, "expired")

	// Each device sees its own User's devices only.
	ds := decode[[]deviceOut](t, laptop.must("devices", "--json"))
	if len(ds) != 1 || ds[0].ID != a.Device.ID || !ds[0].Current {
		t.Fatalf("alice's devices: %+v", ds)
	}

	// Another User's device id answers exactly as one that does not exist.
	other1 := phone.run("devices", "revoke", a.Device.ID, "--json")
	none := phone.run("devices", "revoke", "d_doesnotexist", "--json")
	e1 := wantError(t, other1, 5, "NOT_FOUND", 404)
	e2 := wantError(t, none, 5, "NOT_FOUND", 404)
	if stripRequest(e1.Message) != stripRequest(e2.Message) {
		t.Fatalf("another User's device: %q; a missing one: %q", e1.Message, e2.Message)
	}
	laptop.must("devices", "--json")

	// A second device for alice (pact devices add), then revoked by the
	// first: its very next call is refused.
	code2 := decode[codeOut](t, laptop.must("devices", "add", "--json"))
	desktop := newDevice(t)
	d2 := s.enrol(t, desktop, code2.Code, "alice-desktop")
	if d2.User.ID != a.User.ID {
		t.Fatalf("pact devices add enrolled for %+v, not alice", d2.User)
	}
	desktop.must("devices", "--json")
	rev := decode[deviceOut](t, laptop.must("devices", "revoke", d2.Device.ID, "--json"))
	if rev.State != "revoked" {
		t.Fatalf("revoke: %+v", rev)
	}
	wantError(t, desktop.run("devices", "--json"), 3, "UNAUTHENTICATED", 401, "revoked")
	laptop.must("devices", "--json")

	// The operator's view, while the server runs.
	users := decode[[]struct {
		Name    string `json:"name"`
		Devices int    `json:"devices"`
	}](t, s.must("serve", "user", "list", "--json"))
	if len(users) != 2 || users[0].Name != "alice" || users[0].Devices != 1 || users[1].Devices != 1 {
		t.Fatalf("user list: %+v", users)
	}

	// Removing a User ends their devices at once.
	s.must("serve", "user", "remove", "bob", "--json")
	wantError(t, phone.run("devices", "--json"), 3, "UNAUTHENTICATED", 401)

	// The logs: JSON lines with request ids; no code, no token.
	logs := s.logs.String()
	for _, secret := range []string{alice.Code, bob.Code, late.Code, code2.Code, "eyJ"} {
		if strings.Contains(logs, secret) {
			t.Fatalf("the server's log holds %q", secret)
		}
	}
	if !strings.Contains(logs, `"request_id":"`) {
		t.Fatalf("no request ids in the log:\n%s", logs)
	}

	// SIGTERM: a clean stop, exit 0.
	s.proc.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
		if s.err != nil {
			t.Fatalf("pact serve after SIGTERM: %v\n%s", s.err, s.logs.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("pact serve did not stop on SIGTERM")
	}
	if !strings.Contains(s.logs.String(), `"msg":"stopped"`) {
		t.Fatalf("no stop logged:\n%s", s.logs.String())
	}
}

// stripRequest removes the request id from a message's detail.
func stripRequest(msg string) string {
	if i := strings.Index(msg, ", request "); i >= 0 {
		return msg[:i]
	}
	return msg
}

// ageCodes moves every enrolment code's expiry into the past, as if 15
// minutes had gone by.
func ageCodes(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE server_enrolment_codes SET expires_ns = ? WHERE used_ns IS NULL`, time.Now().Add(-time.Second).UnixNano()); err != nil {
		t.Fatal(err)
	}
}

// TestIssue29_PlainHTTPOffLoopbackIsRefused: one sentence, exit 2, nothing
// listens.
func TestIssue29_PlainHTTPOffLoopbackIsRefused(t *testing.T) {
	e := newEnv(t, "http://127.0.0.1:9")
	r := e.run("serve", "--addr", "0.0.0.0:0")
	if r.code != 2 || !strings.Contains(r.stderr, "refusing to serve plain HTTP on 0.0.0.0:0, which is not a loopback address") ||
		strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	wantError(t, e.run("serve", "--addr", "[::]:0", "--json"), 2, "USAGE", 0, "--tls-cert")
	r = e.run("serve", "--addr", "127.0.0.1:0", "--tls-cert", "c.pem")
	if r.code != 2 || !strings.Contains(r.stderr, "both --tls-cert and --tls-key") {
		t.Fatalf("a certificate without a key: exit %d\n%s", r.code, r.stderr)
	}
}

// TestSection3_2_ServerIdentityVerifiedByTheDemoProvider: the identity
// documents as a Provider reads them. The demo Provider (open policy)
// finds the server's keys through its live discovery document, and
// accepts a PA JWT minted by the server's key for a User's pairwise sub;
// the two Users are two subs to it (a context started by one is not the
// other's, §4.2); a token signed by a key the server does not publish is
// refused. A key rotated on the running server is served within seconds.
func TestSection3_2_ServerIdentityVerifiedByTheDemoProvider(t *testing.T) {
	s := startServe(t)
	prov := startDemo(t, demoprovider.Config{})
	s.must("serve", "provider", "add", prov.URL(), "--audience", prov.Audience(), "--json")
	alice := decode[codeOut](t, s.must("serve", "user", "add", "alice", "--json"))
	bob := decode[codeOut](t, s.must("serve", "user", "add", "bob", "--json"))

	// The metadata document at the issuer URL: client_id is the issuer.
	var md map[string]any
	getJSON(t, s.url, &md, "application/json")
	if md["client_id"] != s.url || md["jwks_uri"] != s.url+"/.well-known/jwks.json" {
		t.Fatalf("Client ID Metadata Document: %v", md)
	}

	// The server's identity, as the running server holds it (same files).
	dirs := store.Dirs{Config: filepath.Join(s.home, "config"), Data: filepath.Join(s.home, "data")}
	sec, _ := secrets.Open("file", dirs.Data, 0)
	id, err := server.NewIdentity(&profile.Profile{Name: "default", Dirs: dirs, Secrets: sec}, s.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	sg, err := id.Signer()
	if err != nil {
		t.Fatal(err)
	}
	aud := prov.Audience()
	iface := prov.Brands()[0].InterfaceURL
	tokA, _ := sg.Mint(aud, id.Sub(alice.User.ID, aud))
	status, reply := messageSend(t, iface, tokA, "m-1", "", "hello")
	if status != 200 {
		t.Fatalf("the Provider refused alice's PA JWT: %d %s\n%s", status, reply, s.logs.String())
	}
	var got struct {
		Message struct {
			ContextID string `json:"contextId"`
		} `json:"message"`
	}
	json.Unmarshal(reply, &got)
	if got.Message.ContextID == "" {
		t.Fatalf("no contextId: %s", reply)
	}
	// Bob is another sub: alice's context is not his.
	tokB, _ := sg.Mint(aud, id.Sub(bob.User.ID, aud))
	if status, reply := messageSend(t, iface, tokB, "m-2", got.Message.ContextID, "hello"); status != 400 || !strings.Contains(string(reply), "INVALID_PARAMS") {
		t.Fatalf("bob continued alice's context: %d %s", status, reply)
	}
	// A key the server does not publish: refused.
	stranger, _ := pasigner.Generate(pasigner.ES256, 0)
	forger, _ := pasigner.New(s.url, stranger, nil)
	tokF, _ := forger.Mint(aud, id.Sub(alice.User.ID, aud))
	if status, _ := messageSend(t, iface, tokF, "m-3", "", "hello"); status != 401 {
		t.Fatalf("a token signed by an unpublished key: %d", status)
	}

	// Rotation on the running server: the staged key is served at once.
	kid := strings.TrimSpace(s.must("key", "rotate").stdout)
	deadline := time.Now().Add(10 * time.Second)
	for {
		var set struct {
			Keys []struct {
				KID string `json:"kid"`
			} `json:"keys"`
		}
		resp := getJSON(t, s.url+"/.well-known/jwks.json", &set, "application/json")
		if cc := resp.Header.Get("Cache-Control"); !strings.Contains(cc, "max-age=300") {
			t.Fatalf("JWKS Cache-Control %q", cc)
		}
		found := false
		for _, k := range set.Keys {
			found = found || k.KID == kid
		}
		if found {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the rotated key %s is not served", kid)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The retire message names the cache lifetime.
	r := s.must("key", "retire", "--", kid)
	if !strings.Contains(r.stderr, "5 minutes") {
		t.Fatalf("key retire says nothing of the JWKS cache lifetime:\n%s", r.stderr)
	}
}

func getJSON(t *testing.T, url string, v any, wantType string) *http.Response {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != wantType {
		t.Fatalf("GET %s: %d %s\n%s", url, resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp
}

// messageSend posts one A2A message:send with a PA JWT (PACT §4).
func messageSend(t *testing.T, iface, tok, messageID, contextID, text string) (int, []byte) {
	t.Helper()
	msg := map[string]any{"messageId": messageID, "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}}
	if contextID != "" {
		msg["contextId"] = contextID
	}
	body, _ := json.Marshal(map[string]any{"message": msg})
	req, _ := http.NewRequest("POST", iface+"/message:send", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Content-Type", "application/json")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(bufio.NewReader(resp.Body))
	return resp.StatusCode, b
}
