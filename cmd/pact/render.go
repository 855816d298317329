package main

import (
	"os"

	"github.com/charmbracelet/x/term"

	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/iostreams"
	"github.com/pact-cli/pact/reply"
)

// printReply prints the agent's reply on stdout: Markdown on a colour
// terminal, plain text otherwise (NO_COLOR, a pipe), always sanitised; data parts as JSON and
// file parts as name, type and size. Inline files are saved to saveDir when
// it is set; otherwise a note on stderr says how.
func (a *app) printReply(res *conversation.Result, saveDir string) error {
	parts := res.Parts()
	// Remote text is made safe on every human path, a pipe included: piped
	// output usually ends on a terminal too (`| less -R`, `| cat`).
	o := reply.Options{Markdown: a.io.IsStdoutTTY() && a.io.Color(), Width: a.stdoutWidth() - len([]rune(iostreams.GutterMark)), Clean: safe}
	if a.replyShown(res) {
		// The text was printed as it streamed (streamFront), its line ended:
		// show only the other parts.
		if rest := nonText(parts); len(rest) > 0 {
			a.printBrandText(reply.Render(rest, o))
		}
	} else {
		a.printBrandText(reply.Render(parts, o))
	}
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
		a.io.Eprintf("%s saved %s (%s) to %s\n", st.Success.Render("✓"), line(f.Name), reply.Size(f.Size), f.Path)
	}
	return err
}

// printBrandText prints text from the Brand (already sanitised) on
// stdout. On a terminal every line starts with a faint "│ " gutter, so
// that no line of the Brand's reads as one of pact's own (a forged "✓
// receipt … verified"): pact's verdicts go to stderr, never in the gutter.
// A pipe gets the text as is (scripts read it; the verdicts are on
// stderr).
func (a *app) printBrandText(text string) {
	if a.io.IsStdoutTTY() {
		text = iostreams.Gutter(text, a.io.OutStyles().Faint.Render(iostreams.GutterMark))
	}
	a.io.Printf("%s\n", text)
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
