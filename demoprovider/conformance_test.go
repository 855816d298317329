package demoprovider

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A2A 1.0 §3 through PACT §2 ("Requests SHOULD send A2A-Version: 1.0"): an
// unsupported version is VERSION_NOT_SUPPORTED (400, §6 envelope); no
// header, or 1.0, is served.
func TestA2A_VersionNotSupported(t *testing.T) {
	e := start(t, nil)
	iface := e.example().InterfaceURL
	send := func(version string) resp {
		h := []string{"Content-Type", "application/json", "Authorization", "Bearer " + e.jwt("u1")}
		if version != "" {
			h = append(h, "A2A-Version", version)
		}
		return do(t, http.MethodPost, iface+"/message:send", strings.NewReader(msgBody(randomID("m-"), "", "hi")), h...)
	}
	for _, v := range []string{"99.0", "0.3", "2.0", "1.0.0-x"} {
		msg := wantA2AError(t, send(v), 400, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED")
		if !strings.Contains(msg, "1.0") {
			t.Errorf("version %s: message %q does not name the supported version", v, msg)
		}
	}
	for _, v := range []string{"", "1.0", " 1.0 "} {
		if r := send(v); r.status != http.StatusOK {
			t.Errorf("A2A-Version %q: status %d, want 200: %s", v, r.status, r.body)
		}
	}
	// Every A2A operation checks it, tasks included; the public card does not.
	r := do(t, http.MethodGet, iface+"/tasks?pageSize=1", nil, "Authorization", "Bearer "+e.jwt("u1"), "A2A-Version", "99.0")
	wantA2AError(t, r, 400, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED")
	if r := do(t, http.MethodGet, e.example().CardURL, nil, "A2A-Version", "99.0"); r.status != 200 {
		t.Errorf("card with A2A-Version 99.0: status %d", r.status)
	}
}

// A2A 1.0 operations a demo card does not declare (Other Shop's
// capabilities.streaming, extendedAgentCard, pushNotifications are false): UNSUPPORTED_OPERATION or
// PUSH_NOTIFICATION_NOT_SUPPORTED, 400, with the PACT §6 body, after
// authentication; not a bare 404.
func TestA2A_UndeclaredOperationsAreUnsupported(t *testing.T) {
	e := start(t, nil)
	iface := e.other().InterfaceURL
	caps := e.srv.card(e.srv.byID[e.other().ID]).Capabilities
	if caps.Streaming || caps.ExtendedAgentCard || caps.PushNotifications {
		t.Fatalf("the demo card declares %+v: this test expects none", caps)
	}
	cases := []struct {
		method, path, reason string
	}{
		{http.MethodPost, "/message:stream", "UNSUPPORTED_OPERATION"},
		{http.MethodGet, "/tasks/t-1:subscribe", "UNSUPPORTED_OPERATION"},
		{http.MethodPost, "/tasks/t-1:subscribe", "UNSUPPORTED_OPERATION"},
		{http.MethodGet, "/extendedAgentCard", "UNSUPPORTED_OPERATION"},
		{http.MethodPost, "/tasks/t-1/pushNotificationConfigs", "PUSH_NOTIFICATION_NOT_SUPPORTED"},
		{http.MethodGet, "/tasks/t-1/pushNotificationConfigs", "PUSH_NOTIFICATION_NOT_SUPPORTED"},
		{http.MethodGet, "/tasks/t-1/pushNotificationConfigs/c-1", "PUSH_NOTIFICATION_NOT_SUPPORTED"},
		{http.MethodDelete, "/tasks/t-1/pushNotificationConfigs/c-1", "PUSH_NOTIFICATION_NOT_SUPPORTED"},
	}
	for _, c := range cases {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			r := do(t, c.method, iface+c.path, strings.NewReader(`{}`),
				"Authorization", "Bearer "+e.jwt("u1"), "A2A-Version", "1.0", "Content-Type", "application/json")
			wantA2AError(t, r, 400, "FAILED_PRECONDITION", c.reason)
			// Authentication still comes first (§3.4).
			want401(t, do(t, c.method, iface+c.path, strings.NewReader(`{}`)), challenge)
		})
	}
	// Wrong methods and malformed paths stay 405/404 without a body (§2.2).
	for _, c := range []struct {
		method, path string
		want         int
	}{
		{http.MethodPut, "/tasks/t-1/pushNotificationConfigs", 405},
		{http.MethodPost, "/tasks/t-1/pushNotificationConfigs/c-1", 405},
		{http.MethodGet, "/message:stream", 405},
		{http.MethodPost, "/extendedAgentCard", 405},
		{http.MethodGet, "/tasks/t-1/pushNotificationConfigs/c-1/x", 404},
		{http.MethodGet, "/tasks/:subscribe", 404},
		{http.MethodGet, "/tasks//pushNotificationConfigs", 404},
	} {
		r := do(t, c.method, iface+c.path, nil, "Authorization", "Bearer "+e.jwt("u1"))
		if r.status != c.want || len(r.body) != 0 {
			t.Errorf("%s %s: status %d body %q, want %d without body", c.method, c.path, r.status, r.body, c.want)
		}
	}
}

// The card carries a validator pair (ETag, Last-Modified) next to its
// Cache-Control, answers a matching conditional request with 304 and no
// body, and HEAD like GET without the body (RFC 9110 §9.3.2, §13).
func TestSection2_1_CardConditionalRequestsAndHEAD(t *testing.T) {
	e := start(t, nil)
	card := e.example().CardURL
	r := do(t, http.MethodGet, card, nil)
	etag, lastMod := r.header.Get("ETag"), r.header.Get("Last-Modified")
	if r.status != 200 || len(r.body) == 0 || etag == "" || lastMod == "" {
		t.Fatalf("GET: status %d, ETag %q, Last-Modified %q, %d bytes", r.status, etag, lastMod, len(r.body))
	}
	if !strings.HasPrefix(etag, `"`) || strings.HasPrefix(etag, "W/") {
		t.Errorf("ETag %s is not a strong validator", etag)
	}
	if _, err := http.ParseTime(lastMod); err != nil {
		t.Errorf("Last-Modified %q: %v", lastMod, err)
	}
	if cc := r.header.Get("Cache-Control"); !strings.Contains(cc, "max-age=") {
		t.Errorf("Cache-Control %q", cc)
	}
	if again := do(t, http.MethodGet, card, nil); again.header.Get("ETag") != etag {
		t.Errorf("ETag changed between two GETs of the same card: %s, %s", etag, again.header.Get("ETag"))
	}

	notModified := func(name string, headers ...string) {
		t.Helper()
		r := do(t, http.MethodGet, card, nil, headers...)
		if r.status != http.StatusNotModified || len(r.body) != 0 {
			t.Errorf("%s: status %d with %d bytes, want 304 without body", name, r.status, len(r.body))
		}
		if r.header.Get("ETag") != etag {
			t.Errorf("%s: 304 ETag %q, want %q", name, r.header.Get("ETag"), etag)
		}
	}
	notModified("If-None-Match", "If-None-Match", etag)
	notModified("If-None-Match list", "If-None-Match", `"other", `+etag)
	notModified("If-None-Match *", "If-None-Match", "*")
	notModified("If-Modified-Since = Last-Modified", "If-Modified-Since", lastMod)
	later := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
	notModified("If-Modified-Since later", "If-Modified-Since", later)

	full := func(name string, headers ...string) {
		t.Helper()
		if r := do(t, http.MethodGet, card, nil, headers...); r.status != 200 || len(r.body) == 0 {
			t.Errorf("%s: status %d with %d bytes, want 200 with the card", name, r.status, len(r.body))
		}
	}
	full("If-None-Match other", "If-None-Match", `"other"`)
	earlier := time.Now().Add(-24 * time.Hour).UTC().Format(http.TimeFormat)
	full("If-Modified-Since earlier", "If-Modified-Since", earlier)
	// If-None-Match wins over If-Modified-Since (RFC 9110 §13.1.3).
	full("If-None-Match other + If-Modified-Since later", "If-None-Match", `"other"`, "If-Modified-Since", later)

	h := do(t, http.MethodHead, card, nil)
	if h.status != 200 || len(h.body) != 0 {
		t.Fatalf("HEAD: status %d with %d bytes, want 200 without body", h.status, len(h.body))
	}
	for _, k := range []string{"ETag", "Last-Modified", "Content-Type", "Cache-Control"} {
		if h.header.Get(k) != r.header.Get(k) {
			t.Errorf("HEAD %s %q, GET %q", k, h.header.Get(k), r.header.Get(k))
		}
	}
	if n, _ := strconv.Atoi(h.header.Get("Content-Length")); n != len(r.body) {
		t.Errorf("HEAD Content-Length %q, GET body %d bytes", h.header.Get("Content-Length"), len(r.body))
	}
}

// The identity engineer's `pact doctor` probes GET tasks?pageSize=1 with a
// valid PA JWT: an empty ListTasksResponse (§2.2).
func TestSection2_2_ListTasksPageSize1IsEmptyList(t *testing.T) {
	e := start(t, nil)
	r := do(t, http.MethodGet, e.example().InterfaceURL+"/tasks?pageSize=1", nil,
		"Authorization", "Bearer "+e.jwt("u1"), "A2A-Version", "1.0")
	m := r.json(t)
	tasks, ok := m["tasks"].([]any)
	if r.status != 200 || !ok || len(tasks) != 0 || m["pageSize"] != float64(1) {
		t.Fatalf("status %d body %s, want 200 {\"tasks\": [], \"pageSize\": 1}", r.status, r.body)
	}
}

// The closing reply names the Brand once, with one period: not
// "Example Co.." (Example Co.'s name ends with a period).
func TestSection4_2_ClosingReplyHasNoDoublePeriod(t *testing.T) {
	e := start(t, nil)
	text, _ := replyText(t, e.send(e.example().InterfaceURL, "u1", "m1", "", "bye"))
	if strings.Contains(text, "..") || !strings.Contains(text, "Example Co. Goodbye") {
		t.Fatalf("closing reply %q", text)
	}
}

// mustUnmarshal decodes data into v or fails the test: a set-up step that
// goes wrong must not pass silently.
func mustUnmarshal(t testing.TB, data []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("decoding %.200s: %v", data, err)
	}
}

// The Brand site's signed copy of the card revalidates the same way: a
// stable ETag (Ed25519 signatures are deterministic), 304 on a match, HEAD
// without a body.
func TestSection2_1_SiteCardConditionalRequests(t *testing.T) {
	e := start(t, nil)
	u := e.example().SiteURL + "/.well-known/agent-card.json"
	r := do(t, http.MethodGet, u, nil)
	etag := r.header.Get("ETag")
	if r.status != 200 || etag == "" || r.header.Get("Last-Modified") == "" {
		t.Fatalf("GET: status %d, ETag %q, Last-Modified %q", r.status, etag, r.header.Get("Last-Modified"))
	}
	if again := do(t, http.MethodGet, u, nil); again.header.Get("ETag") != etag || string(again.body) != string(r.body) {
		t.Fatalf("the signed card changed between two GETs")
	}
	if nm := do(t, http.MethodGet, u, nil, "If-None-Match", etag); nm.status != http.StatusNotModified || len(nm.body) != 0 {
		t.Errorf("If-None-Match: status %d with %d bytes, want 304 without body", nm.status, len(nm.body))
	}
	if h := do(t, http.MethodHead, u, nil); h.status != 200 || len(h.body) != 0 || h.header.Get("ETag") != etag {
		t.Errorf("HEAD: status %d, %d bytes, ETag %q", h.status, len(h.body), h.header.Get("ETag"))
	}
}

// Issue 31 item 22: a 405 names every method the route serves (RFC 9110
// §10.2.1): HEAD beside GET, since every GET route serves HEAD (the card
// copy among them).
func TestIssue31_22_MethodNotAllowedListsHEADBesideGET(t *testing.T) {
	e := start(t, nil)
	card := e.example().InterfaceURL + "/.well-known/agent-card.json"
	if r := do(t, http.MethodHead, card, nil); r.status != 200 {
		t.Fatalf("HEAD %s: %d, want 200", card, r.status)
	}
	for path, allow := range map[string]string{
		"/.well-known/agent-card.json": "GET, HEAD",
		"/tasks":                       "GET, HEAD",
		"/tasks/t-1:subscribe":         "GET, HEAD, POST",
		"/message:send":                "POST",
		"/oauth/.well-known/oauth-authorization-server": "GET, HEAD",
	} {
		r := do(t, http.MethodPut, e.example().InterfaceURL+path, nil)
		if r.status != 405 || r.header.Get("Allow") != allow {
			t.Errorf("PUT %s: %d, Allow %q; want 405, Allow %q", path, r.status, r.header.Get("Allow"), allow)
		}
	}
}
