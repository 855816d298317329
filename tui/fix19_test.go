package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// A retry whose outcome is unknown (ErrSentUnanswered) stays unanswered: labelled so,
// never "not sent", and never kept as a draft or queue entry (PACT §4.3). On reopen, Enter
// with a kept draft in the input does not set the held message off with the draft.
func TestFix19_UnknownOutcomeStaysOnRecordNotADraft(t *testing.T) {
	f := newFake()
	f.history = []Turn{{ID: "m-1", Role: RoleUser, Text: "dup test A-88213", At: t0, State: Unanswered}}
	f.reply = func(context.Context, string) (Reply, error) {
		return Reply{}, fmt.Errorf("connection refused: %w", ErrSentUnanswered)
	}
	d := &draftFake{fake: f, input: "my draft"}
	h := newHarness(t, d, testOptions(), 80, 30)
	h.key("enter") // the draft joins the held queue; nothing goes
	if got := f.sentTexts(); len(got) != 0 {
		t.Fatalf("Enter with a draft sent %q with the held message", got)
	}
	if p := plain(h.view()); !strings.Contains(p, "queued 2 · my draft") {
		t.Fatalf("the draft did not join the held queue:\n%s", p)
	}
	h.key("enter") // an empty input: the held queue goes, and the first fails
	h.until("the retry", func() bool { return slices.Equal(f.sentTexts(), []string{"dup test A-88213"}) })
	h.until("the failure shown", h.screenHas("unanswered 1 · dup test A-88213"))
	if p := plain(h.view()); strings.Contains(p, "not sent") {
		t.Errorf("a message that may have reached the Brand is labelled not sent:\n%s", p)
	}
	if err := h.m.c.keepDraft(); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(d.queue, "dup test A-88213") || d.input != "" {
		t.Fatalf("the message on record was also kept as a draft: input %q queue %q", d.input, d.queue)
	}
	if !slices.Equal(d.queue, []string{"my draft"}) {
		t.Errorf("kept queue %q, want the draft only", d.queue)
	}
}
