package e2e

import (
	"net/http"
	"strings"
	"testing"
)

// Issue 31 (10): "Exam\u00adple Bank" (a soft hyphen) next to the pinned "Example Bank" on
// another origin is a look-alike, and its hidden character is named; a card named "…
// signed by HOST ✓" is quoted as the card's claim, with the card's real host, in pact card.
func TestIssue31_10_PactCardFlagsHiddenAndVerdictLikeNames(t *testing.T) {
	t.Parallel()
	named := func(name string) *fakeProvider {
		f := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(agentReply("hello")))
		})
		f.Card = func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(cardJSON(f.Iface(), map[string]any{"name": name})))
		}
		return f
	}
	real, hyphen := named("Example Bank"), named("Exam\u00adple Bank")
	e := hostileEnv(t, real)
	e.must("provider", "add", hyphen.URL(), "--audience", "hostile2", "--json")
	e.must("send", real.URL(), "hi") // the User uses the real one: pinned
	realHost := strings.TrimPrefix(real.URL(), "http://")

	out := e.must("card", hyphen.URL()).stdout
	for _, want := range []string{`“Exam\u00adple Bank”`, "invisible characters", "looks like that of the Brand at " + realHost} {
		if !strings.Contains(out, want) {
			t.Errorf("pact card of a name with a soft hyphen lacks %q:\n%s", want, out)
		}
	}

	verdict := named("Example Bank — signed by " + realHost + " ✓")
	e.must("provider", "add", verdict.URL(), "--audience", "hostile3", "--json")
	host := strings.TrimPrefix(verdict.URL(), "http://")
	out = e.must("card", verdict.URL()).stdout
	first, _, _ := strings.Cut(out, "\n")
	if want := "“Example Bank — signed by " + realHost + " ✓” (the name the card at " + host + " gives itself)"; first != want {
		t.Errorf("pact card's first line reads %q, want %q", first, want)
	}
	if !strings.Contains(out, "pact uses for its own findings") {
		t.Errorf("pact card does not flag a name in pact's words:\n%s", out)
	}
}
