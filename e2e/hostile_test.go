package e2e

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"
)

// streamBody writes prefix and then up to total bytes of filler, stopping
// as soon as the client goes away; it records how much it managed to write.
func streamBody(w http.ResponseWriter, prefix string, total int64, written *atomic.Int64) {
	w.Write([]byte(prefix))
	chunk := []byte(strings.Repeat("a", 64<<10))
	for n := int64(0); n < total; n += int64(len(chunk)) {
		if _, err := w.Write(chunk); err != nil {
			return
		}
		written.Add(int64(len(chunk)))
	}
}

const hundredMB = 100 << 20

// A 100 MB reply to message:send is cut at a2aclient.MaxReplySize (4 MiB):
// a reply pact cannot read, HTTP 200 (the Provider received the message:
// OUTCOME_UNKNOWN, issue 31), and pact stops reading long before 100 MB.
func TestHostile_ReplyBodyOf100MBIsCapped(t *testing.T) {
	t.Parallel()
	var written atomic.Int64
	f := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		streamBody(w, `{"message":{"messageId":"r","contextId":"c","role":"ROLE_AGENT","parts":[{"text":"`, hundredMB, &written)
	})
	e := hostileEnv(t, f)
	before := e.snapshot()
	r := e.run("send", f.URL(), "hello", "--json")
	wantError(t, r, 1, "OUTCOME_UNKNOWN", 200, "larger than 4 MiB", "may have been delivered")
	e.assertUnchanged(before)
	if n := written.Load(); n >= hundredMB/2 {
		t.Errorf("the server wrote %d MB before pact hung up: the body was not capped", n>>20)
	}
}

// A 100 MB Agent Card is cut at discovery.MaxCardSize (512 KiB).
func TestHostile_CardBodyOf100MBIsCapped(t *testing.T) {
	t.Parallel()
	var written atomic.Int64
	f := newFakeProvider(t, nil)
	f.Card = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		streamBody(w, `{"name":"`, hundredMB, &written)
	}
	e := hostileEnv(t, f)
	before := e.snapshot()
	wantError(t, e.run("send", f.URL(), "hello", "--json"), 1, "INVALID_CARD", 200, "larger than 512 KiB")
	wantError(t, e.run("card", f.URL(), "--json"), 1, "INVALID_CARD", 200, "larger than 512 KiB")
	e.assertUnchanged(before)
	if n := written.Load(); n >= hundredMB/2 {
		t.Errorf("the server wrote %d MB before pact hung up", n>>20)
	}
	if f.sends.Load() != 0 {
		t.Errorf("message:send reached after a bad card")
	}
}

// A card server that drips one byte per second is cut off by httpx's
// whole-exchange timeout (20 s) with a clear "timed out" error.
func TestHostile_OneBytePerSecondTimesOut(t *testing.T) {
	if testing.Short() {
		t.Skip("takes httpx.DefaultTimeout (20 s)")
	}
	t.Parallel()
	f := newFakeProvider(t, nil)
	f.Card = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(200)
		body := cardJSON(f.Iface(), nil)
		for i := 0; i < len(body); i++ {
			if _, err := w.Write([]byte{body[i]}); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(time.Second):
			}
		}
	}
	e := hostileEnv(t, f)
	before := e.snapshot()
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	r := e.runCtx(ctx, "send", f.URL(), "hello", "--json")
	wantError(t, r, 1, "INVALID_CARD", 200, "timed out")
	e.assertUnchanged(before)
}

// redirector serves /hop/N → /hop/N+1 … → the card, or a loop.
func redirectingProvider(t *testing.T, hops int, loop bool) *fakeProvider {
	f := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(agentReply("made it")))
	})
	f.Card = func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/hop/1", http.StatusFound)
	}
	f.mux.HandleFunc("/hop/", func(w http.ResponseWriter, r *http.Request) {
		var n int
		fmt.Sscanf(strings.TrimPrefix(r.URL.Path, "/hop/"), "%d", &n)
		switch {
		case loop:
			http.Redirect(w, r, r.URL.Path, http.StatusFound)
		case n < hops:
			http.Redirect(w, r, fmt.Sprintf("/hop/%d", n+1), http.StatusFound)
		default:
			w.Write([]byte(cardJSON(f.Iface(), nil)))
		}
	})
	return f
}

// The CLI contract follows at most 5 redirects: a chain of 5 works, a
// chain of 6 and a loop fail with a clear error and touch no state.
func TestHostile_RedirectChainsAndLoops(t *testing.T) {
	t.Parallel()
	five := redirectingProvider(t, 5, false)
	e := hostileEnv(t, five)
	if r := e.run("send", five.URL(), "hello", "--json"); r.code != 0 {
		t.Errorf("a chain of 5 redirects: exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	for name, f := range map[string]*fakeProvider{"six": redirectingProvider(t, 6, false), "loop": redirectingProvider(t, 0, true)} {
		e := hostileEnv(t, f)
		before := e.snapshot()
		r := e.run("send", f.URL(), "hello", "--json")
		if je := wantError(t, r, 1, "REDIRECT", 0, "more than 5 redirects"); je.Reason != "REDIRECT" {
			t.Errorf("%s: reason %q, want REDIRECT", name, je.Reason)
		}
		e.assertUnchanged(before)
	}
}

// An https card URL that redirects to plain http is refused, even on
// loopback. The test CA reaches the binary through SSL_CERT_FILE.
func TestHostile_HTTPSToHTTPRedirectRefused(t *testing.T) {
	t.Parallel()
	plain := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(agentReply("downgraded"))) })
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, plain.URL()+"/.well-known/agent-card.json", http.StatusFound)
	}))
	t.Cleanup(tlsSrv.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsSrv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	e := hostileEnv(t, plain)
	e.extra = []string{"SSL_CERT_FILE=" + ca}
	before := e.snapshot()
	r := e.run("send", tlsSrv.URL, "hello", "--json")
	wantError(t, r, 1, anyReason, 0, "https to http")
	e.assertUnchanged(before)
	if plain.sends.Load() != 0 {
		t.Errorf("message:send reached over the downgraded route")
	}
}

func nested(depth int) string {
	return strings.Repeat("[", depth) + strings.Repeat("]", depth)
}

// JSON nested 10,000 deep, in an unknown member of the reply and of the
// card: refused cleanly (encoding/json's depth limit), never a crash.
func TestHostile_JSONNested10000Deep(t *testing.T) {
	t.Parallel()
	deep := nested(10000)
	f := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"deep":` + deep + `,` + strings.TrimPrefix(agentReply("hi"), "{")))
	})
	e := hostileEnv(t, f)
	before := e.snapshot()
	wantError(t, e.run("send", f.URL(), "hello", "--json"), 1, "OUTCOME_UNKNOWN", 200, "not JSON")
	e.assertUnchanged(before)

	g := newFakeProvider(t, nil)
	g.Card = func(w http.ResponseWriter, r *http.Request) {
		c := cardJSON(g.Iface(), nil)
		w.Write([]byte(`{"deep":` + deep + `,` + strings.TrimPrefix(c, "{")))
	}
	e2 := hostileEnv(t, g)
	before = e2.snapshot()
	wantError(t, e2.run("send", g.URL(), "hello", "--json"), 1, "INVALID_CARD", 200, "depth")
	e2.assertUnchanged(before)
}

// Invalid UTF-8 in the agent's text is delivered (as U+FFFD), and stdout
// stays valid UTF-8 JSON.
func TestHostile_InvalidUTF8InReply(t *testing.T) {
	t.Parallel()
	f := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("{\"message\":{\"messageId\":\"r\",\"contextId\":\"c\xff\",\"role\":\"ROLE_AGENT\",\"parts\":[{\"text\":\"bad \xff\xfe bytes\"}]}}"))
	})
	e := hostileEnv(t, f)
	r := e.run("send", f.URL(), "hello", "--json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	if !utf8.ValidString(r.stdout) {
		t.Errorf("stdout is not valid UTF-8: %q", r.stdout)
	}
	var out struct {
		ContextID string `json:"contextId"`
		Reply     struct {
			Message struct {
				Parts []struct {
					Text string `json:"text"`
				} `json:"parts"`
			} `json:"message"`
		} `json:"reply"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%q", err, r.stdout)
	}
	if len(out.Reply.Message.Parts) != 1 || out.Reply.Message.Parts[0].Text != "bad \ufffd\ufffd bytes" {
		t.Errorf("reply parts %+v", out.Reply.Message.Parts)
	}
	plain := e.run("send", f.URL(), "again")
	if plain.code != 0 || !utf8.ValidString(plain.stdout) || !strings.Contains(plain.stdout, "bad") {
		t.Errorf("plain output: exit %d %q", plain.code, plain.stdout)
	}
	if r := e.run("conversations", "--json"); r.code != 0 || !json.Valid([]byte(r.stdout)) {
		t.Errorf("conversations after invalid UTF-8: exit %d %q", r.code, r.stdout)
	}
}

// A reply with both message and task is not a valid reply (§4.2, §5.5).
func TestHostile_ReplyWithMessageAndTask(t *testing.T) {
	t.Parallel()
	f := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"message":{"messageId":"r","contextId":"c","role":"ROLE_AGENT","parts":[{"text":"hi"}]},"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}`))
	})
	e := hostileEnv(t, f)
	before := e.snapshot()
	wantError(t, e.run("send", f.URL(), "hello", "--json"), 1, "OUTCOME_UNKNOWN", 200, "both a message and a task")
	e.assertUnchanged(before)
}

// Unknown members at every level of the card and of the reply are ignored.
func TestHostile_UnknownFieldsEverywhereAreIgnored(t *testing.T) {
	t.Parallel()
	f := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"x-top":{"a":[1,{"b":null}]},"message":{"x-msg":true,"messageId":"r","contextId":"c","role":"ROLE_AGENT","extensions":["urn:x"],` +
			`"parts":[{"text":"still here","x-part":{"deep":[]}}],"metadata":{"x-meta":1}},"x-tail":"z"}`))
	})
	f.Card = func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"x-top":1,"name":"Hostile Co.","description":"d","version":"1","x-obj":{"y":[]},` +
			`"supportedInterfaces":[{"url":"` + f.Iface() + `","protocolBinding":"HTTP+JSON","protocolVersion":"1.0","x-iface":{"z":1}}],` +
			`"capabilities":{"x-cap":true},"securitySchemes":{"paJwt":{"x-s":1,"httpAuthSecurityScheme":{"scheme":"Bearer","bearerFormat":"JWT","x-h":2}}},` +
			`"securityRequirements":[{"schemes":{"paJwt":{"list":[]}},"x-req":1}],"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],` +
			`"skills":[{"id":"s","name":"S","description":"d","tags":[],"x-skill":1}]}`))
	}
	e := hostileEnv(t, f)
	r := e.run("send", f.URL(), "hello")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "still here" {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// An A2A error reason pact has never heard of is reported as sent (§6:
// details[0].reason), with the Provider's status, exit 1.
func TestHostile_UnknownErrorReason(t *testing.T) {
	t.Parallel()
	f := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusConflict)
		w.Write([]byte(`{"error":{"code":409,"status":"ABORTED","message":"the moon is in the wrong phase","details":[` +
			`{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"MOON_PHASE_WRONG","domain":"brand.example","metadata":{"x":"y"}},` +
			`{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"SECOND"}]}}`))
	})
	e := hostileEnv(t, f)
	before := e.snapshot()
	wantError(t, e.run("send", f.URL(), "hello", "--json"), 1, "MOON_PHASE_WRONG", 409, "moon")
	e.assertUnchanged(before)
	if n := f.sends.Load(); n != 1 {
		t.Errorf("a 4xx A2A error was sent %d times, want 1 (not retried)", n)
	}
}

// A 429 asking to wait a year is not honoured: pact reports RATE_LIMITED
// at once instead of sleeping (a2aclient.MaxRetryAfter bounds the wait).
func TestHostile_RetryAfterOfAYear(t *testing.T) {
	t.Parallel()
	for name, value := range map[string]string{
		"seconds":   "31536000",
		"http-date": time.Now().AddDate(1, 0, 0).UTC().Format(http.TimeFormat),
	} {
		f := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", value)
			w.WriteHeader(http.StatusTooManyRequests)
		})
		e := hostileEnv(t, f)
		before := e.snapshot()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		r := e.runCtx(ctx, "send", f.URL(), "hello", "--json")
		cancel()
		je := wantError(t, r, 1, "RATE_LIMITED", 429, "429")
		// The asked wait is stated: about a year (8,760 h; 8,784 in a leap
		// year; a second less for an HTTP-date read a moment later).
		m := regexp.MustCompile(`wait (\d+)h`).FindStringSubmatch(je.Message)
		if hours, _ := strconv.Atoi(append(m, "", "")[1]); hours < 8759 || hours > 8784 {
			t.Errorf("%s: message %q does not state the asked wait of a year", name, je.Message)
		}
		e.assertUnchanged(before)
		if n := f.sends.Load(); n != 1 {
			t.Errorf("%s: %d attempts, want 1 (a year is beyond the bound)", name, n)
		}
	}
}
