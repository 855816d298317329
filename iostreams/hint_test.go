package iostreams

import (
	"os/exec"
	"testing"
)

// Trust finding 2: a remote value in a printed command hint cannot run
// anything when the hint is pasted into a shell. Checked with a real
// shell: each quoted word comes back as exactly one argument, unchanged.
func TestCommandHint_RemoteValuesAreShellQuoted(t *testing.T) {
	words := []string{"pact", "login", "http://127.0.0.1:8080/a2a/b", "--scope", "orders:read$(id>/tmp/PWNED)",
		"a b", "it's", "`id`", "x;rm -rf ~", "", "ok:scope_1", "$HOME", "tab\there", "new\nline", "é"}
	if got, want := CommandHint("pact", "login", "https://b.example/x", "--scope", "orders:read"),
		"pact login https://b.example/x --scope orders:read"; got != want {
		t.Fatalf("plain words are quoted needlessly: %q", got)
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	line := CommandHint(words...)
	got, err := exec.Command(sh, "-c", `set -- `+line+`; for a in "$@"; do printf '%s\0' "$a"; done`).Output()
	if err != nil {
		t.Fatalf("sh -c %q: %v", line, err)
	}
	var args []string
	start := 0
	for i, b := range got {
		if b == 0 {
			args = append(args, string(got[start:i]))
			start = i + 1
		}
	}
	if len(args) != len(words) {
		t.Fatalf("%q split into %d words, want %d: %q", line, len(args), len(words), args)
	}
	for i := range words {
		if args[i] != words[i] {
			t.Errorf("word %d: shell saw %q, want %q", i, args[i], words[i])
		}
	}
}
