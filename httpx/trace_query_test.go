package httpx

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Issue 31 item 12: a redirect's Location with ?code=… (an OAuth callback,
// say) was printed as it came by --debug. Every secret query value is
// redacted wherever a URL shows in the trace: a Location header (query or
// fragment), a body's links (HTML-escaped too), an error's URL. Other
// parameters stay readable.
func TestIssue31_12_TraceRedactsSecretQueryValuesEverywhere(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/start":
			w.Header().Set("Location", "/cb?state=visible-state&code=loc-secret-1")
			w.WriteHeader(http.StatusFound)
		case "/cb":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<a href="https://app.example/cb?x=1&amp;code=body-secret-2&amp;state=visible-2">go</a> `+
				`https://app.example/done#access_token=frag-secret-3&token_type=Bearer`)
		case "/implicit":
			w.Header().Set("Location", "https://127.0.0.1:1/x#access_token=loc-secret-4&state=visible-4")
			w.WriteHeader(http.StatusFound)
		}
	}))
	defer srv.Close()
	var trace bytes.Buffer
	c := NewClient(Options{Debug: &trace})
	resp, err := c.Get(srv.URL + "/start")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if _, err := c.Get(srv.URL + "/implicit"); err == nil {
		t.Fatal("the redirect to a closed port was followed")
	}
	if _, err := c.Get("http://127.0.0.1:1/gone?refresh_token=err-secret-5&page=visible-5"); err == nil {
		t.Fatal("a closed port answered")
	}
	out := trace.String()
	for i := 1; i <= 5; i++ {
		for _, secret := range []string{"loc-secret", "body-secret", "frag-secret", "err-secret"} {
			if strings.Contains(out, fmt.Sprintf("%s-%d", secret, i)) {
				t.Errorf("the trace shows %s-%d:\n%s", secret, i, out)
			}
		}
	}
	for _, shown := range []string{"Location: /cb?state=visible-state&code=[redacted]", "state=visible-2", "code=[redacted]", "access_token=[redacted]", "token_type=Bearer", "state=visible-4", "page=visible-5"} {
		if !strings.Contains(out, shown) {
			t.Errorf("the trace lacks %q:\n%s", shown, out)
		}
	}
}

// Issue 31 item 12, review: a redirect's Location and the request line that follows it kept
// their secrets hidden but came out scrambled ("GET access_token=[redacted]&http://…/cb?…":
// the whole URL read as a form and its pairs sorted), and the error of a refused redirect,
// printed without --debug, named the URL with its secrets. A URL keeps its order, and the
// refusal's URL is redacted.
func TestIssue31_12_RedactKeepsAURLWholeAndTheRedirectErrorRedacts(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:1/cb?code=S1&state=xyz&access_token=T1": "http://127.0.0.1:1/cb?code=[redacted]&state=xyz&access_token=[redacted]",
		"/cb?state=xyz&code=S1":                                   "/cb?state=xyz&code=[redacted]",
		"code=S1&state=xyz":                                       "code=[redacted]&state=xyz",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
	e := &RedirectError{URL: "http://127.0.0.1:1/x?client_secret=CS1&device_code=DC1&page=2", Reason: "more than 5 redirects"}
	if got := e.Error(); strings.Contains(got, "CS1") || strings.Contains(got, "DC1") || !strings.Contains(got, "page=2") {
		t.Errorf("RedirectError.Error() = %q", got)
	}
}
