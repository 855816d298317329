package discovery

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/pact-cli/pact/store"
)

// MaxCacheAge caps how long a card is reused, whatever the server says.
const MaxCacheAge = time.Hour

// Cache keeps fetched Agent Cards between runs in the profile's database
// (store.DB). A card is reused without asking while it is fresh (its
// response's Cache-Control max-age, RFC 9111 §5.2.2.1, at most
// MaxCacheAge). A stale card that came with an ETag or Last-Modified is
// revalidated (If-None-Match / If-Modified-Since, RFC 9110 §13.1) and kept
// when the server answers 304 Not Modified. Entries are keyed by the card
// URL asked for, so a Brand's redirect to its Provider is followed again
// only when the card is fetched again. Cards are public documents.
type Cache struct {
	DB  *store.DB
	Now func() time.Time // nil = time.Now
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
// a 304). A damaged entry, or one whose database cannot be read, is simply
// fetched again; failing to keep a card is not an error.
func (c *Cache) Fetch(ctx context.Context, client *http.Client, cardURL string) (card *Card, fromCache bool, err error) {
	kept, ok, dbErr := c.DB.Card(ctx, cardURL)
	var keptCard *Card
	if dbErr == nil && ok && kept.URL == cardURL {
		if parsed, err := Parse(kept.Body); err == nil {
			parsed.URL, parsed.FinalURL = cardURL, kept.FinalURL
			keptCard = parsed
			if c.now().Before(kept.Expires) {
				return keptCard, true, nil
			}
		}
	}
	etag, lastMod := "", ""
	if keptCard != nil {
		etag, lastMod = kept.ETag, kept.LastModified
	}
	card, h, notModified, err := fetchIf(ctx, client, cardURL, etag, lastMod)
	if err != nil {
		return nil, false, err
	}
	if notModified {
		c.DB.ExtendCard(ctx, cardURL, c.now().Add(c.maxAge(h)))
		return keptCard, true, nil
	}
	maxAge := c.maxAge(h)
	et, lm := h.Get("ETag"), h.Get("Last-Modified")
	if dbErr == nil && (maxAge > 0 || et != "" || lm != "") && !noStore(h) {
		now := c.now()
		c.DB.PutCard(ctx, store.CachedCard{URL: cardURL, FinalURL: card.FinalURL, Body: card.Raw,
			Expires: now.Add(maxAge), ETag: et, LastModified: lm, FetchedAt: now})
	}
	return card, false, nil
}

// maxAge is the freshness a response grants, capped at MaxCacheAge.
func (c *Cache) maxAge(h http.Header) time.Duration {
	maxAge := freshness(h)
	if maxAge > MaxCacheAge {
		maxAge = MaxCacheAge
	}
	return maxAge
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
