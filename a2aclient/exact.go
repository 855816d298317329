package a2aclient

import (
	"bytes"
	"encoding/json"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// exactNumbers decodes again, from r.Raw, the value of every data part of
// the reply (the message's; the task's status message, artifacts and
// history) with json.Decoder.UseNumber, so that its numbers are kept as
// written (json.Number) instead of float64: {"orderId": 9007199254740993}
// prints exactly wherever the part is shown, not only under --json. A part
// whose raw value does not decode keeps what ParseReply gave it.
func exactNumbers(r *Response) {
	if !bytes.ContainsAny(r.Raw, "0123456789") {
		return
	}
	type xparts struct {
		Parts []struct {
			Data json.RawMessage `json:"data"`
		} `json:"parts"`
	}
	var doc struct {
		Message *xparts `json:"message"`
		Task    *struct {
			Status struct {
				Message *xparts `json:"message"`
			} `json:"status"`
			Artifacts []xparts `json:"artifacts"`
			History   []xparts `json:"history"`
		} `json:"task"`
	}
	if json.Unmarshal(r.Raw, &doc) != nil {
		return
	}
	fix := func(parts []*a2a.Part, raw *xparts) {
		if raw == nil || len(raw.Parts) != len(parts) {
			return
		}
		for i, p := range parts {
			if p == nil || len(raw.Parts[i].Data) == 0 {
				continue
			}
			if _, ok := p.Content.(a2a.Data); !ok {
				continue
			}
			dec := json.NewDecoder(bytes.NewReader(raw.Parts[i].Data))
			dec.UseNumber()
			var v any
			if dec.Decode(&v) == nil {
				p.Content = a2a.Data{Value: v}
			}
		}
	}
	if r.Message != nil {
		fix(r.Message.Parts, doc.Message)
	}
	if t := r.Task; t != nil && doc.Task != nil {
		if t.Status.Message != nil {
			fix(t.Status.Message.Parts, doc.Task.Status.Message)
		}
		for i, a := range t.Artifacts {
			if a != nil && i < len(doc.Task.Artifacts) {
				fix(a.Parts, &doc.Task.Artifacts[i])
			}
		}
		for i, m := range t.History {
			if m != nil && i < len(doc.Task.History) {
				fix(m.Parts, &doc.Task.History[i])
			}
		}
	}
}
