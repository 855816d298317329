package demoprovider

import (
	"strings"
	"testing"
)

// A message about Markdown gets the Markdown answer, with each construct a
// client renders.
func TestMarkdownHelp(t *testing.T) {
	b := newBrands()[0]
	got := b.respond(turn{text: "show me some markdown"}).text
	for _, want := range []string{"## What I can do", "**Example Co** support", "   - say its number", "> Your assistant", "| --- | --- | :---: |", "```sh\npact send BRAND", "[PACT](https://"} {
		if !strings.Contains(got, want) {
			t.Errorf("answer lacks %q:\n%s", want, got)
		}
	}
}
