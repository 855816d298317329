package tui

import "testing"

// Review of #23: /quit leaves without keeping "/quit" as the draft. It was kept (the
// command was still in the input when the chat saved what was not sent), so the reopened
// chat held "/quit" and a /quit typed there became "/quit/quit", sent as a message.
func TestReview6_QuitIsNotKeptAsADraft(t *testing.T) {
	for _, cmd := range []string{"/quit", "/exit"} {
		f, release := blockingFake()
		d := &draftFake{fake: f, input: "earlier draft"}
		h := newHarness(t, d, testOptions(), 80, 30)
		h.key("ctrl+u")
		h.typeText(cmd)
		h.key("enter")
		if !h.m.c.quitting {
			t.Fatalf("%s did not quit", cmd)
		}
		if err := h.m.c.keepDraft(); err != nil {
			t.Fatal(err)
		}
		if d.input != "" {
			t.Fatalf("%s was kept as the draft %q", cmd, d.input)
		}
		if got := f.sentTexts(); len(got) != 0 {
			t.Fatalf("%s sent %q", cmd, got)
		}
		close(release)
	}
}
