package chatbackend

import (
	"context"
	"encoding/json"

	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/tui"
)

// storedParts converts a stored turn's parts for the chat; a kept file comes with its
// bytes (for /save), one not kept with the note saying why.
func (b *Backend) storedParts(ps []conversation.Part) []tui.Part {
	var out []tui.Part
	for _, p := range ps {
		if p.Kind == "data" {
			out = append(out, tui.Part{Kind: tui.PartData, JSON: json.RawMessage(p.Data), Name: p.Name, MediaType: p.MediaType})
			continue
		}
		tp := tui.Part{Kind: tui.PartFile, Name: p.Name, MediaType: p.MediaType, URL: p.URL, Note: p.Note}
		if data, ok, err := b.c.FileBytes(context.Background(), p); err == nil && ok {
			tp.Data = data
		} else if p.URL == "" && p.Note == "" {
			tp.Note = "its bytes were not kept"
		}
		out = append(out, tp)
	}
	return out
}

var _ tui.Drafts = (*Backend)(nil)

// LoadDraft returns what the chat had not sent when it was last left with this Brand
// (agent.Conversation.LoadDraft); nothing when it cannot be read.
func (b *Backend) LoadDraft() (input string, queue []string) {
	d, err := b.c.LoadDraft(context.Background())
	if err != nil {
		return "", nil
	}
	return d.Input, d.Queue
}

// SaveDraft keeps what the chat has not sent (the input and the queue) for the next chat
// with this Brand.
func (b *Backend) SaveDraft(input string, queue []string) error {
	return b.c.SaveDraft(context.Background(), conversation.Draft{Input: input, Queue: queue})
}
