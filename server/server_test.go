package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pact-cli/pact/device"
	"github.com/pact-cli/pact/devicetoken"
	"github.com/pact-cli/pact/httpx"
	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/secrets"
	"github.com/pact-cli/pact/serverapi"
	"github.com/pact-cli/pact/store"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// syncBuffer collects log lines from the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

type testServer struct {
	t      *testing.T
	srv    *Server
	url    string
	st     store.ServerBackend
	admin  *Admin
	clock  *clock
	logs   *syncBuffer
	hc     *http.Client
	cancel context.CancelFunc
	done   chan error
	home   string
}

// startServer runs a server on 127.0.0.1 with a fresh profile (file
// keyring) whose issuer is the server's URL, and a fresh database.
func startServer(t *testing.T, mod func(*Options)) *testServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	issuer := "http://" + ln.Addr().String()
	home := t.TempDir()
	dirs := store.Dirs{Config: filepath.Join(home, "config"), Data: filepath.Join(home, "data")}
	sec, _ := secrets.Open("file", dirs.Data, 0)
	p := &profile.Profile{Name: "serve", Dirs: dirs, Secrets: sec}
	if _, err := p.Init(issuer, "", "ES256", false); err != nil {
		t.Fatal(err)
	}
	clk := &clock{t: time.Now()}
	id, err := NewIdentity(p, issuer, clk.Now)
	if err != nil {
		t.Fatal(err)
	}
	st, err := OpenStore(context.Background(), filepath.Join(home, "serve.db"))
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	opts := Options{Settings: Settings{Addr: ln.Addr().String()}.WithDefaults(""), Identity: id, Store: st,
		Logger: slog.New(slog.NewJSONHandler(logs, nil)), Version: "test", Now: clk.Now}
	if mod != nil {
		mod(&opts)
	}
	srv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ts := &testServer{t: t, srv: srv, url: issuer, st: st, admin: &Admin{Store: st, Now: clk.Now}, clock: clk, logs: logs,
		hc: httpx.NewClient(httpx.Options{Timeout: 10 * time.Second}), cancel: cancel, done: make(chan error, 1), home: home}
	go func() { ts.done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		ts.stop()
		st.Close()
	})
	return ts
}

func (ts *testServer) stop() error {
	if ts.cancel == nil {
		return nil
	}
	ts.cancel()
	ts.cancel = nil
	select {
	case err := <-ts.done:
		return err
	case <-time.After(30 * time.Second):
		ts.t.Fatal("the server did not stop")
		return nil
	}
}

// enrolDevice makes a User (or a new code for one) and enrols a device
// for them in a profile of its own; it returns the device's client.
func (ts *testServer) enrolDevice(user, name string) *device.Client {
	ts.t.Helper()
	ctx := context.Background()
	_, code, err := ts.admin.AddUser(ctx, user)
	if err != nil {
		if _, code, err = ts.admin.NewCode(ctx, user); err != nil {
			ts.t.Fatal(err)
		}
	}
	return ts.enrolWith(code.Code, name)
}

func (ts *testServer) enrolWith(code, name string) *device.Client {
	ts.t.Helper()
	ts.clock.Add(time.Millisecond) // devices listed in the order they enrolled
	dirs := store.Dirs{Config: filepath.Join(ts.t.TempDir(), "config"), Data: filepath.Join(ts.t.TempDir(), "data")}
	sec, _ := secrets.Open("file", dirs.Data, 0)
	p := &profile.Profile{Name: "default", Dirs: dirs, Secrets: sec}
	c, _, err := device.Enrol(context.Background(), ts.hc, p, device.EnrolOptions{Server: ts.url, Code: code, Name: name}, ts.clock.Now)
	if err != nil {
		ts.t.Fatalf("enrol: %v", err)
	}
	cl, err := device.NewClient(p, c, ts.hc)
	if err != nil {
		ts.t.Fatal(err)
	}
	cl.Now = ts.clock.Now
	return cl
}

// get fetches path without authentication.
func (ts *testServer) get(path string) (*http.Response, []byte) {
	ts.t.Helper()
	resp, err := ts.hc.Get(ts.url + path)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func apiErr(t *testing.T, err error, reason string, status int) *serverapi.APIError {
	t.Helper()
	var e *serverapi.APIError
	if !errors.As(err, &e) {
		t.Fatalf("want a %s answer, got %v", reason, err)
	}
	if e.Reason != reason || e.HTTPStatus != status || e.RequestID == "" {
		t.Fatalf("answer %+v, want %s %d with a request id", e, reason, status)
	}
	return e
}

// TestSection3_1_IdentityServedAsProvidersReadIt: discovery names the
// issuer and jwks_uri, the JWKS carries the active key with a five-minute
// cache lifetime, and the Client ID Metadata Document at the issuer URL
// has client_id = the issuer (PACT §5.3), as application/json.
func TestSection3_1_IdentityServedAsProvidersReadIt(t *testing.T) {
	ts := startServer(t, nil)
	resp, body := ts.get("/.well-known/openid-configuration")
	var disco struct{ Issuer, JWKS_URI string }
	json.Unmarshal(body, &disco)
	var raw map[string]string
	json.Unmarshal(body, &raw)
	if resp.StatusCode != 200 || raw["issuer"] != ts.url || raw["jwks_uri"] != ts.url+"/.well-known/jwks.json" {
		t.Fatalf("discovery %d %s", resp.StatusCode, body)
	}
	resp, body = ts.get("/.well-known/jwks.json")
	if cc := resp.Header.Get("Cache-Control"); !strings.Contains(cc, "max-age=300") {
		t.Fatalf("JWKS Cache-Control %q", cc)
	}
	sg, _ := ts.srv.Identity().Signer()
	if !strings.Contains(string(body), sg.KID()) || strings.Contains(string(body), `"d"`) {
		t.Fatalf("JWKS %s lacks the active kid %s or holds a private member", body, sg.KID())
	}
	resp, body = ts.get("/")
	var md map[string]any
	if err := json.Unmarshal(body, &md); err != nil || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("metadata %q %s", resp.Header.Get("Content-Type"), body)
	}
	if md["client_id"] != ts.url || md["jwks_uri"] != ts.url+"/.well-known/jwks.json" || md["client_name"] != "pact" {
		t.Fatalf("metadata %s", body)
	}
	if resp.Header.Get(serverapi.HeaderRequestID) == "" {
		t.Fatal("no X-Request-Id")
	}
}

// TestIssue29_EnrolmentCodeOnceAndFor15Minutes: a code enrols one device
// once; the same code again is refused; a code older than 15 minutes is
// refused; refusals are one envelope.
func TestIssue29_EnrolmentCodeOnceAndFor15Minutes(t *testing.T) {
	ts := startServer(t, nil)
	ctx := context.Background()
	_, code, err := ts.admin.AddUser(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if left := code.Expires.Sub(ts.clock.Now()); len(NormaliseCode(code.Code)) != 32 || left > 15*time.Minute || left < 15*time.Minute-time.Second {
		t.Fatalf("code %q expires %v", code.Code, code.Expires)
	}
	cl := ts.enrolWith(code.Code, "laptop")
	if cl.Link.UserName != "alice" || !strings.HasPrefix(cl.Link.DeviceID, "d_") || cl.Link.Issuer != ts.url {
		t.Fatalf("link %+v", cl.Link)
	}
	p := newDeviceProfile(t)
	_, _, err = device.Enrol(ctx, ts.hc, p, device.EnrolOptions{Server: ts.url, Code: code.Code, Name: "again"}, ts.clock.Now)
	apiErr(t, err, serverapi.ReasonCodeRefused, 400)
	if p.Exists() {
		t.Fatal("a refused enrolment left a profile behind")
	}
	// Typed as people do: upper case, spaces.
	_, code2, _ := ts.admin.NewCode(ctx, "alice")
	ts.clock.Add(15 * time.Minute)
	_, _, err = device.Enrol(ctx, ts.hc, newDeviceProfile(t), device.EnrolOptions{Server: ts.url, Code: code2.Code, Name: "late"}, ts.clock.Now)
	apiErr(t, err, serverapi.ReasonCodeRefused, 400)
	_, code3, _ := ts.admin.NewCode(ctx, "alice")
	ts.clock.Add(15*time.Minute - time.Second)
	ts.enrolWith(strings.ToUpper(strings.ReplaceAll(code3.Code, "-", " ")), "desktop")
	ds, _ := cl.Devices(ctx)
	if len(ds) != 2 {
		t.Fatalf("%d devices, want 2", len(ds))
	}
}

func newDeviceProfile(t *testing.T) *profile.Profile {
	dirs := store.Dirs{Config: filepath.Join(t.TempDir(), "config"), Data: filepath.Join(t.TempDir(), "data")}
	sec, _ := secrets.Open("file", dirs.Data, 0)
	return &profile.Profile{Name: "default", Dirs: dirs, Secrets: sec}
}

// TestIssue29_RevokedDeviceIsRefusedAtOnce: the call after the revocation
// is refused, by the device itself as by another.
func TestIssue29_RevokedDeviceIsRefusedAtOnce(t *testing.T) {
	ts := startServer(t, nil)
	ctx := context.Background()
	laptop := ts.enrolDevice("alice", "laptop")
	phone := ts.enrolDevice("alice", "phone")
	if _, err := phone.Me(ctx); err != nil {
		t.Fatal(err)
	}
	d, err := laptop.Revoke(ctx, phone.Link.DeviceID)
	if err != nil || d.State != serverapi.StateRevoked {
		t.Fatalf("revoke: %+v %v", d, err)
	}
	_, err = phone.Me(ctx)
	e := apiErr(t, err, serverapi.ReasonUnauthenticated, 401)
	if !strings.Contains(e.Message, "revoked") {
		t.Fatalf("message %q does not say the device was revoked", e.Message)
	}
	if _, err := laptop.Me(ctx); err != nil {
		t.Fatalf("the other device was refused too: %v", err)
	}
	ds, _ := laptop.Devices(ctx)
	if len(ds) != 2 || ds[1].State != serverapi.StateRevoked || !ds[0].Current || ds[1].Current {
		t.Fatalf("devices %+v", ds)
	}
}

// TestIssue29_DeviceTokenReplayIsRefused: a token answered once is refused
// the second time, decided in the database; a token minted for another
// server is refused.
func TestIssue29_DeviceTokenReplayIsRefused(t *testing.T) {
	ts := startServer(t, nil)
	cl := ts.enrolDevice("alice", "laptop")
	tok, _ := devicetoken.Mint(cl.Key, cl.Link.DeviceID, cl.Link.Issuer, ts.clock.Now())
	send := func(tok string) (int, serverapi.Error) {
		req, _ := http.NewRequest("GET", ts.url+serverapi.PathMe, nil)
		req.Header.Set("Authorization", devicetoken.Header(tok))
		resp, err := ts.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var env serverapi.Envelope
		json.Unmarshal(b, &env)
		if resp.StatusCode == 401 && resp.Header.Get("WWW-Authenticate") == "" {
			t.Fatal("401 without WWW-Authenticate")
		}
		return resp.StatusCode, env.Error
	}
	if code, _ := send(tok); code != 200 {
		t.Fatalf("first use: %d", code)
	}
	if code, e := send(tok); code != 401 || !strings.Contains(e.Message, "used before") {
		t.Fatalf("replay: %d %+v", code, e)
	}
	other, _ := devicetoken.Mint(cl.Key, cl.Link.DeviceID, "https://other.example", ts.clock.Now())
	if code, _ := send(other); code != 401 {
		t.Fatalf("a token for another server: %d", code)
	}
	if code, e := send(""); code != 401 || e.Reason != serverapi.ReasonUnauthenticated {
		t.Fatalf("no token: %d %+v", code, e)
	}
}

// TestIssue29_AnotherUsersDeviceAnswersAsNonExistent: Bob's device asking
// for, or revoking, Alice's device gets exactly the answer of an id that
// does not exist, and Alice's device is untouched.
func TestIssue29_AnotherUsersDeviceAnswersAsNonExistent(t *testing.T) {
	ts := startServer(t, nil)
	ctx := context.Background()
	alice := ts.enrolDevice("alice", "laptop")
	bob := ts.enrolDevice("bob", "laptop")
	strip := func(e *serverapi.APIError) serverapi.APIError { c := *e; c.RequestID = ""; return c }
	for _, path := range []string{serverapi.PathDevice, serverapi.PathDeviceRevoke} {
		method := "GET"
		if strings.HasSuffix(path, "revoke") {
			method = "POST"
		}
		errOther := bob.Do(ctx, method, strings.Replace(path, "{id}", alice.Link.DeviceID, 1), nil, nil)
		errNone := bob.Do(ctx, method, strings.Replace(path, "{id}", "d_doesnotexist", 1), nil, nil)
		a, b := apiErr(t, errOther, serverapi.ReasonNotFound, 404), apiErr(t, errNone, serverapi.ReasonNotFound, 404)
		if strip(a) != strip(b) {
			t.Fatalf("%s %s: another User's id answers %+v, a missing one %+v", method, path, a, b)
		}
	}
	if _, err := alice.Me(ctx); err != nil {
		t.Fatalf("Alice's device was affected: %v", err)
	}
	ds, _ := bob.Devices(ctx)
	if len(ds) != 1 || ds[0].ID != bob.Link.DeviceID {
		t.Fatalf("Bob sees %+v", ds)
	}
}

// TestIssue29_RateLimitPerDeviceInTheDatabase: past the limit a device
// gets 429 RATE_LIMITED with Retry-After; another device is not affected;
// the next window admits it again.
func TestIssue29_RateLimitPerDeviceInTheDatabase(t *testing.T) {
	ts := startServer(t, func(o *Options) { o.Settings.RateLimit = 3 })
	ctx := context.Background()
	ts.clock.t = ts.clock.t.Truncate(time.Minute).Add(time.Second)
	a := ts.enrolDevice("alice", "laptop")
	b := ts.enrolDevice("bob", "laptop")
	for i := 0; i < 3; i++ {
		if _, err := a.Me(ctx); err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
	}
	req, _ := http.NewRequest("GET", ts.url+serverapi.PathMe, nil)
	a.Authorize(req)
	resp, err := ts.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("4th request: %d Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if _, err := b.Me(ctx); err != nil {
		t.Fatalf("another device was limited: %v", err)
	}
	ts.clock.Add(time.Minute)
	if _, err := a.Me(ctx); err != nil {
		t.Fatalf("next window: %v", err)
	}
}

// TestIssue29_EnvelopeRequestIDAndBodyLimit: an unknown route, a wrong
// method and an oversized body each get the one envelope, whose requestId
// is the X-Request-Id answered; a reverse proxy's request id is kept, a
// forged one replaced.
func TestIssue29_EnvelopeRequestIDAndBodyLimit(t *testing.T) {
	ts := startServer(t, nil)
	check := func(resp *http.Response, body []byte, status int, reason string) {
		t.Helper()
		var env serverapi.Envelope
		if err := json.Unmarshal(body, &env); err != nil || resp.StatusCode != status || env.Error.Reason != reason ||
			env.Error.HTTPStatus != status || env.Error.RequestID == "" || env.Error.RequestID != resp.Header.Get(serverapi.HeaderRequestID) {
			t.Fatalf("%d %s, want %d %s with the request id", resp.StatusCode, body, status, reason)
		}
	}
	resp, body := ts.get("/v1/nothing-here")
	check(resp, body, 404, serverapi.ReasonNotFound)
	resp, body = ts.get(serverapi.PathEnrol)
	check(resp, body, 405, serverapi.ReasonNotFound)
	if resp.Header.Get("Allow") != "POST" {
		t.Fatalf("Allow %q", resp.Header.Get("Allow"))
	}
	big := `{"code": "` + strings.Repeat("a", 20<<10) + `"}`
	resp, err := ts.hc.Post(ts.url+serverapi.PathEnrol, "application/json", strings.NewReader(big))
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	check(resp, body, 413, serverapi.ReasonTooLarge)
	resp, err = ts.hc.Post(ts.url+serverapi.PathEnrol, "application/json", strings.NewReader(`{"code": 1}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	check(resp, body, 400, serverapi.ReasonUsage)
	for in, kept := range map[string]bool{"proxy-1234.abc": true, "bad\"id": false, strings.Repeat("x", 65): false} {
		req, _ := http.NewRequest("GET", ts.url+serverapi.PathHealth, nil)
		req.Header.Set(serverapi.HeaderRequestID, in)
		resp, err := ts.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get(serverapi.HeaderRequestID); (got == in) != kept || got == "" {
			t.Fatalf("X-Request-Id %q answered as %q", in, got)
		}
	}
}

// TestIssue29_LogsCarryRequestIDsAndNoSecrets: every access log line is
// JSON with a request id; no enrolment code, device token or proof is in
// the logs.
func TestIssue29_LogsCarryRequestIDsAndNoSecrets(t *testing.T) {
	ts := startServer(t, nil)
	ctx := context.Background()
	_, code, _ := ts.admin.AddUser(ctx, "alice")
	cl := ts.enrolWith(code.Code, "laptop")
	cl.Devices(ctx)
	cl.Do(ctx, "GET", "/v1/devices/d_nope", nil, nil)
	logs := ts.logs.String()
	lines := strings.Split(strings.TrimSpace(logs), "\n")
	requests := 0
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("a log line is not JSON: %q", l)
		}
		if m["msg"] == "request" {
			requests++
			if id, _ := m["request_id"].(string); id == "" {
				t.Fatalf("a request line without request_id: %s", l)
			}
		}
	}
	if requests < 4 {
		t.Fatalf("%d request lines:\n%s", requests, logs)
	}
	for _, secret := range []string{code.Code, NormaliseCode(code.Code), "eyJ", devicetoken.Scheme} {
		if strings.Contains(logs, secret) {
			t.Fatalf("the logs hold %q:\n%s", secret, logs)
		}
	}
	if !strings.Contains(logs, `"device_id":"`+cl.Link.DeviceID+`"`) {
		t.Fatalf("authenticated requests are not logged with their device:\n%s", logs)
	}
}

// TestIssue29_HealthReadyAndMetrics: /healthz answers, /readyz checks the
// database and the key (503 when the database is gone), /metrics counts
// requests by route pattern.
func TestIssue29_HealthReadyAndMetrics(t *testing.T) {
	ts := startServer(t, nil)
	if resp, _ := ts.get(serverapi.PathHealth); resp.StatusCode != 200 {
		t.Fatalf("healthz %d", resp.StatusCode)
	}
	if resp, body := ts.get(serverapi.PathReady); resp.StatusCode != 200 {
		t.Fatalf("readyz %d %s", resp.StatusCode, body)
	}
	ts.get("/v1/devices/d_x")
	resp, body := ts.get(serverapi.PathMetrics)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `pact_http_requests_total{code="401",method="GET",route="/v1/devices/{id}"} 1`) {
		t.Fatalf("metrics:\n%s", body)
	}
	ts.st.Close()
	if resp, body := ts.get(serverapi.PathReady); resp.StatusCode != 503 || !strings.Contains(string(body), `"database":"failing"`) {
		t.Fatalf("readyz with the database closed: %d %s", resp.StatusCode, body)
	}
}

// TestIssue29_GracefulStopLetsRequestsInFlightFinish: on stop, a request
// in flight finishes and is answered; the listener is closed.
func TestIssue29_GracefulStopLetsRequestsInFlightFinish(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{})
	ts := startServer(t, nil)
	ts.srv.Handle(Route{Method: "GET", Pattern: "/v1/test-slow", Handler: func(w http.ResponseWriter, r *http.Request) error {
		close(entered)
		select {
		case <-ts.srv.Stopping():
		case <-r.Context().Done():
			return r.Context().Err()
		}
		<-release
		WriteJSON(w, 200, map[string]string{"finished": "yes"})
		return nil
	}})
	got := make(chan string, 1)
	go func() {
		resp, err := ts.hc.Get(ts.url + "/v1/test-slow")
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got <- string(b)
	}()
	<-entered
	stopped := make(chan error, 1)
	go func() { stopped <- ts.stop() }()
	<-ts.srv.Stopping()
	close(release)
	if body := <-got; !strings.Contains(body, "finished") {
		t.Fatalf("the request in flight got %q", body)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("stop: %v", err)
	}
	if _, err := net.DialTimeout("tcp", strings.TrimPrefix(ts.url, "http://"), time.Second); err == nil {
		t.Fatal("still accepting connections after the stop")
	}
}
