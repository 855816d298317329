package main

import (
	"bytes"
	"encoding/json"
	"io"
	"sort"
)

// jsonDoc writes one --json document whose list member grows as a command
// goes (the results of `pact receipts verify --bundle` and `import`): the
// list's elements as they come, then the other members at the end, so that
// memory stays flat however long the list. The text is what printJSON
// writes for the same document (two-space indentation, times to the
// second), but for the order of the members (JSON objects have none): the
// list comes first.
type jsonDoc struct {
	w   io.Writer
	key string
	n   int
	err error
}

// newJSONDoc starts the document on w with its list member key.
func newJSONDoc(w io.Writer, key string) *jsonDoc {
	d := &jsonDoc{w: w, key: key}
	d.write([]byte("{\n  " + quoteJSON(key) + ": ["))
	return d
}

func (d *jsonDoc) write(b []byte) {
	if d.err == nil {
		_, d.err = d.w.Write(b)
	}
}

// add writes v as the list's next element.
func (d *jsonDoc) add(v any) error {
	b, err := marshalCompact(v)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if d.n == 0 {
		out.WriteString("\n    ")
	} else {
		out.WriteString(",\n    ")
	}
	if err := json.Indent(&out, b, "    ", "  "); err != nil {
		return err
	}
	d.n++
	d.write(out.Bytes())
	return d.err
}

// finish closes the list and writes the other members (by name).
func (d *jsonDoc) finish(members map[string]any) error {
	var out bytes.Buffer
	if d.n > 0 {
		out.WriteString("\n  ]")
	} else {
		out.WriteString("]")
	}
	keys := make([]string, 0, len(members))
	for k := range members {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b, err := marshalCompact(members[k])
		if err != nil {
			return err
		}
		out.WriteString(",\n  " + quoteJSON(k) + ": ")
		if err := json.Indent(&out, b, "  ", "  "); err != nil {
			return err
		}
	}
	out.WriteString("\n}\n")
	d.write(out.Bytes())
	return d.err
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
