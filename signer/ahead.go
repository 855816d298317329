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

	mu      sync.Mutex
	next    string
	nextAt  time.Time
	minting bool
}

// Ahead returns a minter of tokens for audience and sub.
func (s *Signer) Ahead(audience, sub string) *Ahead {
	return &Ahead{s: s, aud: audience, sub: sub}
}

// Token returns a token nobody else received, minted at most MaxAge ago,
// and starts minting the next one.
func (a *Ahead) Token() (string, error) {
	maxAge := a.MaxAge
	if maxAge == 0 {
		maxAge = DefaultMaxAge
	}
	a.mu.Lock()
	tok, at := a.next, a.nextAt
	a.next = ""
	fresh := tok != "" && a.s.now().Sub(at) < maxAge
	a.refillLocked()
	a.mu.Unlock()
	if fresh {
		return tok, nil
	}
	return a.s.Mint(a.aud, a.sub)
}

// refillLocked starts minting the next token unless one is under way.
func (a *Ahead) refillLocked() {
	if a.minting {
		return
	}
	a.minting = true
	go func() {
		at := a.s.now()
		tok, err := a.s.Mint(a.aud, a.sub)
		a.mu.Lock()
		defer a.mu.Unlock()
		a.minting = false
		if err == nil && a.next == "" {
			a.next, a.nextAt = tok, at
		}
	}()
}
