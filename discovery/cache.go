package discovery

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pact-cli/pact/store"
)

// MaxCacheAge caps how long a card is reused, whatever the server says.
const MaxCacheAge = time.Hour

// Cache keeps fetched Agent Cards between runs, for as long as the card's
// response allows (Cache-Control max-age, RFC 9111 §5.2.2.1, at most
// MaxCacheAge), so that a message does not cost a card fetch every time.
// Entries are keyed by the card URL asked for, so a Brand's redirect to its
// Provider is followed again only when the card is fetched again. Cards are
// public documents.
type Cache struct {
	Dir string           // one file per card URL
	Now func() time.Time // nil = time.Now
}

type cached struct {
	URL      string    `json:"url"`
	FinalURL string    `json:"finalUrl"`
	Body     []byte    `json:"body"`
	Expires  time.Time `json:"expires"`
	// Signature is the signature check done when the card was fetched
	// (A2A §8.4); an entry without it is fetched again.
	Signature *keptSignature `json:"signature,omitempty"`
}

// keptSignature is a Signature with every field, as the cache keeps it.
type keptSignature struct {
	Verified    bool     `json:"verified"`
	KID         string   `json:"kid"`
	KeyURL      string   `json:"keyUrl"`
	Problems    []string `json:"problems"`
	Signer      string   `json:"signer"`
	Thumbprints []string `json:"thumbprints"`
	Signed      bool     `json:"signed"`
	Alg         string   `json:"alg"`
}

func (c *Cache) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Cache) path(cardURL string) string {
	h := sha256.Sum256([]byte(cardURL))
	return filepath.Join(c.Dir, hex.EncodeToString(h[:12])+".json")
}

// Forget drops the cached copy of cardURL (after it led to a failure).
func (c *Cache) Forget(cardURL string) {
	os.Remove(c.path(cardURL))
}

// Fetch returns the card at cardURL from the cache while it is fresh, and
// otherwise fetches it (see the package Fetch) and keeps it for the time
// the response allows. fromCache reports which. A damaged or stale entry is
// simply fetched again.
func (c *Cache) Fetch(ctx context.Context, client *http.Client, cardURL string) (card *Card, fromCache bool, err error) {
	var e cached
	if ok, err := store.ReadJSON(c.path(cardURL), &e); err == nil && ok && e.URL == cardURL && c.now().Before(e.Expires) && e.Signature != nil {
		if card, err := Parse(e.Body); err == nil {
			card.URL, card.FinalURL = cardURL, e.FinalURL
			sig := Signature(*e.Signature)
			card.Signature = &sig
			return card, true, nil
		}
	}
	card, maxAge, err := fetch(ctx, client, cardURL)
	if err != nil {
		return nil, false, err
	}
	if maxAge > 0 {
		if maxAge > MaxCacheAge {
			maxAge = MaxCacheAge
		}
		store.WriteJSON(c.path(cardURL), cached{URL: cardURL, FinalURL: card.FinalURL, Body: card.Raw,
			Expires: c.now().Add(maxAge), Signature: (*keptSignature)(card.Signature)}, 0o600)
	}
	return card, false, nil
}

// freshness is how long a response may be reused: its Cache-Control
// max-age, or 0 with no-store, no-cache, private or no max-age.
func freshness(h http.Header) time.Duration {
	var maxAge time.Duration
	for _, d := range strings.Split(strings.ToLower(h.Get("Cache-Control")), ",") {
		name, val, _ := strings.Cut(strings.TrimSpace(d), "=")
		switch name {
		case "no-store", "no-cache", "private":
			return 0
		case "max-age":
			if n, err := strconv.Atoi(strings.Trim(val, `"`)); err == nil && n > 0 {
				maxAge = time.Duration(n) * time.Second
			}
		}
	}
	return maxAge
}
