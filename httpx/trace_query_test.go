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
