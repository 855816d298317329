package main

import (
	"encoding/json"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pact-cli/pact/a2aclient"
	"github.com/pact-cli/pact/agent"
	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/iostreams"
)

// streamEventLine is one line of `pact send --json-stream` (docs/json.md):
// an event of the streamed reply as the Provider sent it.
type streamEventLine struct {
	Event   json.RawMessage `json:"event"`
	Resumed bool            `json:"resumed,omitempty"`
}

// streamShow shows a reply that streams, as it arrives: for people the
// text on stdout as it grows (made safe), under --json-stream one JSON
// line per event. Plain --json does not stream (streamFront).
type streamShow struct {
	a       *app
	stop    func() // the spinner, stopped at the first text
	printed string // the text printed so far (raw, before Sanitize)
	broken  bool   // the text changed other than by growing
	ended   bool   // the line of the printed text was ended
}

// end ends the line of the text printed so far, once: what pact prints next (the reply's
// other parts, the whole reply when it differs, an error) starts on a line of its own.
func (p *streamShow) end() {
	if p.printed != "" && !p.ended && !p.broken {
		p.a.io.Printf("\n")
		p.ended = true
	}
}

// cutNote says, on stderr, that the text printed as it streamed is not the reply: the
// stream broke and the reply came otherwise. Without it the broken text reads as part of
// the Brand's reply (issue 31: it was glued to the reply on one line).
func (a *app) cutNote() {
	a.io.Eprintf("%s the text above was cut off: the stream broke, and the whole reply follows\n", a.io.ErrStyles().Faint.Render("·"))
}

func (p *streamShow) event(ev a2aclient.StreamEvent) {
	a := p.a
	if a.jsonStreamOut {
		a.printJSONLine(streamEventLine{Event: ev.Raw, Resumed: ev.Resumed})
		return
	}
	if p.broken || ev.Text == "" {
		return
	}
	if !strings.HasPrefix(ev.Text, p.printed) {
		// A resumed stream told another text than the one shown: stop
		// here; the whole reply is printed when it is complete.
		p.broken = true
		a.io.Printf("\n")
		a.cutNote()
		return
	}
	delta := safe(ev.Text[len(p.printed):])
	if a.io.IsStdoutTTY() {
		// Brand text on a terminal: every line behind the gutter, as
		// printBrandText draws it.
		mark := a.io.OutStyles().Faint.Render(iostreams.GutterMark)
		delta = strings.ReplaceAll(delta, "\n", "\n"+mark)
		if p.printed == "" {
			delta = mark + delta
		}
	}
	if p.stop != nil {
		p.stop()
		p.stop = nil
	}
	a.io.Printf("%s", delta)
	p.printed = ev.Text
}

// streamFront makes the turn of f show a reply that streams as it
// arrives (agent.Front.Stream): a fresh streamShow for each request,
// stopping the spinner of f.Waiting at the first text; a.streamed records
// what was shown, so that printing the result does not repeat it. Plain
// --json does not stream (the one document, by message:send as before).
func (a *app) streamFront(f *agent.Front) {
	if a.json && !a.jsonStreamOut {
		return
	}
	var p *streamShow
	wait := f.Waiting
	f.Waiting = func(s *conversation.Session) func() {
		stop := func() {}
		if wait != nil {
			stop = wait(s)
		}
		p = &streamShow{a: a, stop: stop}
		a.streamed = nil
		return func() {
			stop()
			p.end()
			if !p.broken && p.printed != "" {
				a.streamed = p
			}
		}
	}
	f.Stream = func(ev a2aclient.StreamEvent) {
		if p != nil {
			p.event(ev)
		}
	}
}

// replyShown reports whether res's text was already printed as it
// streamed (then only the non-text parts are left to show). When other
// text was printed as it streamed (the stream broke and the reply came
// otherwise), it says so on stderr: the whole reply is printed next.
func (a *app) replyShown(res *conversation.Result) bool {
	if a.streamed == nil || res == nil {
		return false
	}
	if a.streamed.printed == res.Text() {
		return true
	}
	a.cutNote()
	a.streamed = nil
	return false
}

// printStepUpText prints a step-up reply's text, unless it streamed.
func (a *app) printStepUpText(res *conversation.Result) {
	if a.replyShown(res) {
		return
	}
	a.printBrandText(safe(res.Text()))
}

// nonText is parts without the text parts.
func nonText(parts []*a2a.Part) []*a2a.Part {
	var out []*a2a.Part
	for _, p := range parts {
		if p != nil && p.Text() == "" {
			out = append(out, p)
		}
	}
	return out
}
