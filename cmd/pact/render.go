package main

import (
	"os"
	"strings"
	"unicode"

	"github.com/charmbracelet/x/term"

	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/reply"
)

// printReply prints the agent's reply on stdout: Markdown on a colour
// terminal, plain text otherwise (NO_COLOR, a pipe); data parts as JSON and
// file parts as name, type and size. Inline files are saved to saveDir when
// it is set; otherwise a note on stderr says how.
func (a *app) printReply(res *conversation.Result, saveDir string) error {
	parts := res.Parts()
	o := reply.Options{Markdown: a.io.IsStdoutTTY() && a.io.Color(), Width: a.stdoutWidth()}
	if a.io.IsStdoutTTY() {
		o.Clean = termSafe
	}
	a.io.Printf("%s\n", reply.Render(parts, o))
	if !reply.HasFiles(parts) {
		return nil
	}
	st := a.io.ErrStyles()
	if saveDir == "" {
		a.io.Eprintf("%s the reply has files: save them with --save-files DIR\n", st.Faint.Render("·"))
		return nil
	}
	saved, err := reply.Save(parts, saveDir)
	for _, f := range saved {
		a.io.Eprintf("%s saved %s (%s) to %s\n", st.Success.Render("✓"), termSafe(f.Name), reply.Size(f.Size), f.Path)
	}
	return err
}

// stdoutWidth is the terminal's width for wrapping Markdown (at most 120
// columns), 80 when unknown. An ioctl, never a terminal query.
func (a *app) stdoutWidth() int {
	if f, ok := a.io.Out.(*os.File); ok {
		if w, _, err := term.GetSize(f.Fd()); err == nil && w > 0 {
			return min(w, 120)
		}
	}
	return 80
}

// termSafe shows control characters of remote text visibly instead of
// letting the terminal run them. (iostreams.Sanitize, from the trust
// work, is the one home of this rule; this stands in until it is merged.)
func termSafe(s string) string {
	if strings.IndexFunc(s, isUnsafe) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isUnsafe(r) {
			return '\uFFFD'
		}
		return r
	}, s)
}

func isUnsafe(r rune) bool {
	return r != '\n' && r != '\t' && unicode.IsControl(r)
}
