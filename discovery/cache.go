package discovery

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/pact-cli/pact/store"
)

// MaxCacheAge caps how long a card is reused, whatever the server says.
const MaxCacheAge = time.Hour

// Cache keeps fetched Agent Cards between runs in the User's store
// (store.Cards). A card is reused without asking while it is fresh (its
// response's Cache-Control max-age, RFC 9111 §5.2.2.1, at most
// MaxCacheAge), with the signature check done when it was fetched (A2A
// §8.4). A stale card that came with an ETag or Last-Modified is
// revalidated (If-None-Match / If-Modified-Since, RFC 9110 §13.1): on 304
// Not Modified the kept body is checked again (Parse and Verify, as a
// fetched one) and kept. Entries are keyed by the card URL asked for, so a
// Brand's redirect to its Provider is followed again only when the card is
// fetched again. Cards are public documents.
type Cache struct {
	DB  store.Cards
	Now func() time.Time // nil = time.Now
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

// Forget drops the kept copy of cardURL (after it led to a failure).
func (c *Cache) Forget(cardURL string) {
	c.DB.ForgetCard(context.Background(), cardURL)
}

// Fetch returns the card at cardURL from the cache while it is fresh;
// otherwise it revalidates the kept copy or fetches the card (see the
// package Fetch) and keeps it for the time the response allows. fromCache
// reports that the card's body came from the cache (fresh, or confirmed by
// a 304). A damaged entry, one without its signature check, or one whose
// database cannot be read is simply fetched again; failing to keep a card
// is not an error.
func (c *Cache) Fetch(ctx context.Context, client *http.Client, cardURL string) (card *Card, fromCache bool, err error) {
	kept, ok, dbErr := c.DB.Card(ctx, cardURL)
	usable := dbErr == nil && ok && kept.URL == cardURL
	if usable && c.now().Before(kept.Expires) {
		var ks keptSignature
		if json.Unmarshal(kept.Signature, &ks) == nil && len(kept.Signature) > 0 {
			if parsed, err := Parse(kept.Body); err == nil {
				parsed.URL, parsed.FinalURL = cardURL, kept.FinalURL
				sig := Signature(ks)
				parsed.Signature = &sig
				return parsed, true, nil
			}
		}
	}
	etag, lastMod := "", ""
	if usable {
		etag, lastMod = kept.ETag, kept.LastModified
	}
	card, h, notModified, err := fetchIf(ctx, client, cardURL, etag, lastMod)
	if err != nil {
		return nil, false, err
	}
	fromCache = notModified
	if notModified {
		if card, err = checkCard(ctx, client, cardURL, kept.FinalURL, kept.Body); err != nil {
			c.Forget(cardURL)
			return nil, false, err
		}
	}
	maxAge := freshness(h)
	if maxAge > MaxCacheAge {
		maxAge = MaxCacheAge
	}
	et, lm := h.Get("ETag"), h.Get("Last-Modified")
	if notModified {
		// A 304 may omit the validators: the kept ones still stand.
		if et == "" {
			et = kept.ETag
		}
		if lm == "" {
			lm = kept.LastModified
		}
	}
	if dbErr == nil && (maxAge > 0 || et != "" || lm != "") && !noStore(h) {
		sig, _ := json.Marshal((*keptSignature)(card.Signature))
		now := c.now()
		c.DB.PutCard(ctx, store.CachedCard{URL: cardURL, FinalURL: card.FinalURL, Body: card.Raw,
			Expires: now.Add(maxAge), ETag: et, LastModified: lm, FetchedAt: now, Signature: sig})
	}
	return card, fromCache, nil
}

// noStore reports Cache-Control: no-store (the response must not be kept).
func noStore(h http.Header) bool {
	for _, d := range strings.Split(strings.ToLower(h.Get("Cache-Control")), ",") {
		if strings.TrimSpace(d) == "no-store" {
			return true
		}
	}
	return false
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
