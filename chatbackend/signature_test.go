package chatbackend

import (
	"net/url"
	"testing"

	"github.com/pact-cli/pact/demoprovider"
)

// A2A §8.4: the header says who signed the card the chat talks through
// (the demo Brand signs its card with a key on its own site).
func TestA2A_8_4_HeaderShowsTheCardSignature(t *testing.T) {
	r := newRig(t, demoprovider.Config{})
	u, _ := url.Parse(r.srv.Brands()[0].SiteURL)
	if h := r.b.Header(); h.Signature != "signed by "+u.Host+" ✓" {
		t.Fatalf("header signature %q, want %q", h.Signature, "signed by "+u.Host+" ✓")
	}
}
