package conversation

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pact-cli/pact/store"
)

// Part is a non-text part of a stored turn (an A2A data part, a file by bytes
// or by URL), as `pact conversations show --json` prints it. A file's bytes
// are kept once in the profile's database (by SHA-256, up to store.MaxBlob);
// FileBytes reads them.
type Part struct {
	Kind      string          `json:"kind"` // "data" or "file"
	Name      string          `json:"name,omitempty"`
	MediaType string          `json:"mediaType,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`   // a data part's value
	URL       string          `json:"url,omitempty"`    // a file by reference, never fetched
	SHA256    string          `json:"sha256,omitempty"` // a file's bytes, hex
	Size      int64           `json:"size,omitempty"`   // a file's size in bytes
	// Note says what was not kept (a file bigger than store.MaxBlob).
	Note string `json:"note,omitempty"`
}

// PartsOf converts an A2A message's non-text parts for storing: data as
// JSON, raw bytes as a file (given to the store with its bytes), a URL as a
// file by reference. Text parts are the turn's Text.
func PartsOf(ps []*a2a.Part) []store.Part {
	var out []store.Part
	for _, p := range ps {
		if p == nil {
			continue
		}
		switch c := p.Content.(type) {
		case a2a.Data:
			js, err := json.Marshal(c.Value)
			if err != nil {
				continue
			}
			out = append(out, store.Part{Kind: store.PartData, Name: p.Filename, MediaType: p.MediaType, JSON: string(js)})
		case a2a.Raw:
			out = append(out, store.Part{Kind: store.PartFile, Name: p.Filename, MediaType: p.MediaType, Data: append([]byte{}, c...)})
		case a2a.URL:
			out = append(out, store.Part{Kind: store.PartFile, Name: p.Filename, MediaType: p.MediaType, URL: string(c)})
		}
	}
	return out
}

func toParts(ps []store.Part) []Part {
	if len(ps) == 0 {
		return nil
	}
	out := make([]Part, len(ps))
	for i, p := range ps {
		out[i] = Part{Kind: p.Kind, Name: p.Name, MediaType: p.MediaType, URL: p.URL, SHA256: p.SHA256, Size: p.Size, Note: p.Note}
		if p.JSON != "" {
			out[i].Data = json.RawMessage(p.JSON)
		}
	}
	return out
}

// FileBytes returns the kept bytes of a stored file part; ok is false when
// they were not kept (a file by URL, or bigger than store.MaxBlob).
func (s *Store) FileBytes(p Part) (data []byte, ok bool, err error) {
	if p.SHA256 == "" {
		return nil, false, nil
	}
	return s.db.Blob(context.Background(), p.SHA256)
}

// Describe is the part on one line for people: "data {…}" (compact JSON) or
// "file NAME (TYPE, N bytes)" with its URL or the note on what was not kept.
// The caller sanitises it: every string in it is the Brand's.
func (p Part) Describe() string {
	if p.Kind == store.PartData {
		var buf bytes.Buffer
		if json.Compact(&buf, p.Data) != nil {
			return "data " + string(p.Data)
		}
		return "data " + buf.String()
	}
	name := p.Name
	if name == "" {
		name = "(unnamed)"
	}
	var about []string
	if p.MediaType != "" {
		about = append(about, p.MediaType)
	}
	if p.Size > 0 {
		about = append(about, fmt.Sprintf("%d bytes", p.Size))
	}
	s := "file " + name
	if len(about) > 0 {
		s += " (" + strings.Join(about, ", ") + ")"
	}
	if p.URL != "" {
		s += " at " + p.URL
	}
	if p.Note != "" {
		s += ": " + p.Note
	}
	return s
}

// FileBytes returns the kept bytes of a file part of the session's history; ok is false
// when they were not kept.
func (s *Session) FileBytes(p Part) (data []byte, ok bool, err error) {
	if s.opts.Store == nil {
		return nil, false, nil
	}
	return s.opts.Store.FileBytes(p)
}
