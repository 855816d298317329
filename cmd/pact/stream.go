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
	f.Waiting = func(c agent.Conversation) func() {
		stop := func() {}
		if wait != nil {
			stop = wait(c)
		}
		p = &streamShow{a: a, stop: stop}
		a.streamed = nil
		return func() {
			stop()
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
// streamed (then only a line end and the non-text parts are left to show).
func (a *app) replyShown(res *conversation.Result) bool {
	return a.streamed != nil && res != nil && a.streamed.printed == res.Text()
}

// printStepUpText prints a step-up reply's text, unless it streamed.
func (a *app) printStepUpText(res *conversation.Result) {
	if a.replyShown(res) {
		a.io.Printf("\n")
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
