package iostreams

import (
	"runtime"
	"strings"
	"testing"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestColorFor(t *testing.T) {
	cases := []struct {
		name             string
		outTTY, errTTY   bool
		env              map[string]string
		wantOut, wantErr bool
	}{
		{"both terminals", true, true, map[string]string{"TERM": "xterm"}, true, true},
		{"stdout piped", false, true, map[string]string{"TERM": "xterm"}, false, true},
		{"stderr redirected", true, false, map[string]string{"TERM": "xterm"}, true, false},
		{"NO_COLOR set", true, true, map[string]string{"NO_COLOR": "1"}, false, false},
		{"NO_COLOR empty still counts", true, true, map[string]string{"NO_COLOR": ""}, false, false},
		{"dumb terminal", true, true, map[string]string{"TERM": "dumb"}, false, false},
		{"no terminals", false, false, nil, false, false},
	}
	// Issue 31 (10): a terminal whose TERM is unset gets no escape codes (Windows consoles
	// set no TERM and keep colour).
	cases = append(cases, struct {
		name             string
		outTTY, errTTY   bool
		env              map[string]string
		wantOut, wantErr bool
	}{"TERM unset", true, true, nil, runtime.GOOS == "windows", runtime.GOOS == "windows"})
	for _, c := range cases {
		out, err := colorFor(c.outTTY, c.errTTY, env(c.env))
		if out != c.wantOut || err != c.wantErr {
			t.Errorf("%s: colour out=%v err=%v, want %v %v", c.name, out, err, c.wantOut, c.wantErr)
		}
	}
}

// TestPerStreamColour: with stdout piped and stderr a terminal, only stderr
// gets escape sequences, and tables on stdout are plain text.
func TestPerStreamColour(t *testing.T) {
	io, _, out, errOut := Test()
	io.setColor(false, true)
	io.Table(io.Out, [][]string{{"KID", "ALG"}, {"abc", "ES256"}})
	io.Eprintf("%s\n", io.ErrStyles().Error.Render("error:"))
	if strings.Contains(out.String(), "\x1b[") {
		t.Errorf("stdout has escape sequences: %q", out.String())
	}
	if out.String() != "KID  ALG\nabc  ES256\n" {
		t.Errorf("table = %q", out.String())
	}
	if !strings.Contains(errOut.String(), "\x1b[") {
		t.Errorf("stderr has no colour: %q", errOut.String())
	}
}
