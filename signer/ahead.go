package signer

import (
	"sync"
	"time"
)

// DefaultMaxAge is how old a token minted ahead may be when it is handed
// out: far inside the Provider's checks (exp = iat + 120 s, §3.2).
const DefaultMaxAge = 15 * time.Second

// Ahead hands out PA JWTs for one (audience, sub) and mints the next one in
// the background as soon as one is taken, so that a request does not wait
// for a signature. Each token is still handed out once and only once, with
// its own random jti, and only while it is younger than MaxAge; an older
// one is dropped and a token minted on the spot. Safe for concurrent use.
type Ahead struct {
	s        *Signer
	aud, sub string
	MaxAge   time.Duration // 0 = DefaultMaxAge

	mu       sync.Mutex
	inflight bool        // a background mint is under way
	ready    chan minted // holds at most the one token minted ahead
}

type minted struct {
	tok string
	at  time.Time
	err error
}

// Ahead returns a minter of tokens for audience and sub.
func (s *Signer) Ahead(audience, sub string) *Ahead {
	return &Ahead{s: s, aud: audience, sub: sub, ready: make(chan minted, 1)}
}

// Token returns a token nobody else received, minted at most MaxAge ago,
// and starts minting the next one. When a token is being minted ahead it
// waits for that one rather than signing a second. A Signer with a Stock
// (WithStock) first takes one minted ahead by another process.
func (a *Ahead) Token() (string, error) {
	if a.s.stock != nil {
		if tok, ok := a.s.stock.Take(a.s.kid, a.s.issuer, a.aud, a.sub); ok {
			return tok, nil
		}
	}
	maxAge := a.MaxAge
	if maxAge == 0 {
		maxAge = DefaultMaxAge
	}
	a.mu.Lock()
	pending := a.inflight || len(a.ready) > 0
	a.mu.Unlock()
	if !pending {
		a.refill()
		return a.s.Mint(a.aud, a.sub)
	}
	m := <-a.ready
	a.refill()
	if m.err != nil || a.s.now().Sub(m.at) >= maxAge {
		return a.s.Mint(a.aud, a.sub)
	}
	return m.tok, nil
}

// refill starts minting the next token unless one is ready or under way.
// Every receive from ready is followed by a refill, so a caller waiting on
// ready is always served.
func (a *Ahead) refill() {
	a.mu.Lock()
	if a.inflight || len(a.ready) > 0 {
		a.mu.Unlock()
		return
	}
	a.inflight = true
	a.mu.Unlock()
	go func() {
		at := a.s.now()
		tok, err := a.s.Mint(a.aud, a.sub)
		a.mu.Lock()
		a.inflight = false
		a.ready <- minted{tok: tok, at: at, err: err} // never blocks: empty, and only this goroutine fills it
		a.mu.Unlock()
	}()
}
