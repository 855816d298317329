package signer

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gofrs/flock"
)

// Stock keeps PA JWTs minted ahead by another process, for a key held
// elsewhere (a token, a KMS) whose every signature is a round trip: a
// `pact send` that finds one there sends at once instead of waiting for a
// signature. Take hands out a token signed by kid with exactly these iss,
// aud and sub claims, at most once.
type Stock interface {
	Take(kid, issuer, audience, sub string) (token string, ok bool)
}

// WithStock makes Ahead look in st before it signs (see Ahead.Token).
func (s *Signer) WithStock(st Stock) *Signer {
	s.stock = st
	return s
}

// Defaults of StockDir.
const (
	// StockMaxAge is how old a token in the stock may be when it is taken:
	// it then has at least 110 s of its 120 s left (§3.2). It is short so
	// that a key disabled, deleted or swapped is noticed by the next
	// sends: only a token minted in the last seconds, while the key still
	// signed, can still go out.
	StockMaxAge = 10 * time.Second
	// StockDepth is how many fresh tokens per (kid, claims) a refill
	// keeps at first; StockBurstDepth the most it keeps while tokens are
	// taken quickly (sends in a burst, a script).
	StockDepth      = 8
	StockBurstDepth = 32
	// StockLow is the count under which a Take starts a refill (unless
	// one is running).
	StockLow = 16
)

// StockDir is a Stock kept in one folder (0700), one file (0600) per token:
//
//	KID.CLAIMS.IATNANOS.RANDOM
//
// where CLAIMS is the first 16 hex digits of SHA-256(iss, aud, sub). A token is
// taken by removing its file: of two processes that read the same file,
// only the one whose remove succeeds uses it, so no token is handed out
// twice and no lock is needed. Files older than MaxAge are removed by
// every Take.
type StockDir struct {
	Dir    string
	MaxAge time.Duration // 0 = StockMaxAge
	Low    int           // 0 = StockLow
	// Refill is called by Take when fewer than Low fresh tokens remain for
	// (kid, claims), the one just taken excepted: it starts another
	// process that mints more (Fill). nil: nothing is refilled.
	Refill func(kid, audience string)
	Now    func() time.Time // nil = time.Now
}

func (d *StockDir) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

func (d *StockDir) maxAge() time.Duration {
	if d.MaxAge > 0 {
		return d.MaxAge
	}
	return StockMaxAge
}

func claimsHash(issuer, audience, sub string) string {
	h := sha256.Sum256([]byte(issuer + "\x00" + audience + "\x00" + sub))
	return hex.EncodeToString(h[:8])
}

type stocked struct {
	name string
	iat  time.Time
}

// fresh lists the fresh tokens' files for (kid, claims), oldest first,
// and removes every file that is stale or not a token's.
func (d *StockDir) fresh(kid, claims string) []stocked {
	ents, err := os.ReadDir(d.Dir)
	if err != nil {
		return nil
	}
	prefix := kid + "." + claims + "."
	now := d.now()
	var out []stocked
	for _, e := range ents {
		name := e.Name()
		parts := strings.Split(name, ".")
		if e.IsDir() || strings.HasPrefix(name, ".") || len(parts) != 4 {
			continue // temporary files being written, the refill lock
		}
		ns, err := strconv.ParseInt(parts[2], 10, 64)
		iat := time.Unix(0, ns)
		if err != nil || now.Sub(iat) >= d.maxAge() || iat.After(now.Add(time.Minute)) {
			os.Remove(filepath.Join(d.Dir, name))
			continue
		}
		if strings.HasPrefix(name, prefix) {
			out = append(out, stocked{name, iat})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].iat.Before(out[j].iat) })
	return out
}

// Take hands out the oldest fresh token signed by kid for these claims and
// removes it from the stock; ok is false when there is none. Either way
// it calls Refill when the stock runs low.
func (d *StockDir) Take(kid, issuer, audience, sub string) (string, bool) {
	list := d.fresh(kid, claimsHash(issuer, audience, sub))
	tok, ok := "", false
	for i, s := range list {
		p := filepath.Join(d.Dir, s.name)
		b, err := os.ReadFile(p)
		if err != nil || os.Remove(p) != nil {
			continue // another process took it
		}
		if t := strings.TrimSpace(string(b)); t != "" {
			tok, ok = t, true
			list = list[i+1:]
			break
		}
	}
	if ok {
		d.touch(lastTake)
	} else {
		list = nil
	}
	low := d.Low
	if low == 0 {
		low = StockLow
	}
	if len(list) < low && d.Refill != nil && !d.Refilling() {
		d.Refill(kid, audience)
	}
	return tok, ok
}

// Files of the stock folder besides the tokens (names starting with a dot
// are never tokens).
const (
	lastTake   = ".last-take"   // touched by every Take that hands out a token
	refillLock = ".refill.lock" // held by the one refill process running
)

func (d *StockDir) touch(name string) {
	p := filepath.Join(d.Dir, name)
	now := d.now()
	if os.Chtimes(p, now, now) == nil {
		return
	}
	if f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
		f.Close()
		os.Chtimes(p, now, now)
	}
}

// LastTake is when a token was last handed out (zero when never).
func (d *StockDir) LastTake() time.Time {
	fi, err := os.Stat(filepath.Join(d.Dir, lastTake))
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}

// LockRefill takes the stock's refill lock without waiting: ok is false
// when another refill holds it. unlock releases it.
func (d *StockDir) LockRefill() (unlock func(), ok bool) {
	if err := os.MkdirAll(d.Dir, 0o700); err != nil {
		return nil, false
	}
	l := flock.New(filepath.Join(d.Dir, refillLock))
	if got, err := l.TryLock(); err != nil || !got {
		return nil, false
	}
	return func() { l.Unlock() }, true
}

// Refilling reports whether a refill process holds the lock now.
func (d *StockDir) Refilling() bool {
	unlock, ok := d.LockRefill()
	if ok {
		unlock()
	}
	return !ok
}

// KeepFilled is a refill process's loop: it keeps the stock of tokens for
// (audience, sub) signed by s topped up, every poll, starting at
// StockDepth tokens and doubling up to StockBurstDepth while they are
// taken faster than a poll's worth; it returns when no token was taken
// for idle, after life in all, when still() is false (another key became
// the active one) or on the first error (the key no longer signs).
func (d *StockDir) KeepFilled(s *Signer, audience, sub string, poll, idle, life time.Duration, still func() bool) error {
	start := d.now()
	depth := StockDepth
	for round := 0; ; round++ {
		if !still() {
			return nil
		}
		n := d.Count(s.KID(), s.Issuer(), audience, sub)
		if round > 0 && n < depth/2 && depth < StockBurstDepth {
			depth *= 2
		}
		if n < depth {
			if _, err := d.Fill(s, audience, sub, depth); err != nil {
				return err
			}
		}
		last := d.LastTake()
		if last.Before(start) {
			last = start
		}
		if now := d.now(); now.Sub(last) > idle || now.Sub(start) > life {
			return nil
		}
		time.Sleep(poll)
	}
}

// Count is the number of fresh tokens signed by kid for these claims.
func (d *StockDir) Count(kid, issuer, audience, sub string) int {
	return len(d.fresh(kid, claimsHash(issuer, audience, sub)))
}

// Put adds tokens signed by kid for these claims, minted at iat, each
// written whole (a temporary file renamed into place) with mode 0600.
func (d *StockDir) Put(kid, issuer, audience, sub string, iat time.Time, tokens ...string) error {
	if err := os.MkdirAll(d.Dir, 0o700); err != nil {
		return err
	}
	for _, tok := range tokens {
		var r [8]byte
		if _, err := rand.Read(r[:]); err != nil {
			return err
		}
		name := fmt.Sprintf("%s.%s.%d.%s", kid, claimsHash(issuer, audience, sub), iat.UnixNano(), hex.EncodeToString(r[:]))
		f, err := os.CreateTemp(d.Dir, ".new-*")
		if err != nil {
			return err
		}
		_, werr := f.WriteString(tok)
		cerr := f.Close()
		if err := errors.Join(werr, cerr, os.Chmod(f.Name(), 0o600)); err != nil {
			os.Remove(f.Name())
			return err
		}
		if err := os.Rename(f.Name(), filepath.Join(d.Dir, name)); err != nil {
			os.Remove(f.Name())
			return err
		}
	}
	return nil
}

// Clear removes every token in the stock (a key retired, replaced, or
// found unable to sign). The refill lock stays: a process may hold it.
func (d *StockDir) Clear() error {
	ents, err := os.ReadDir(d.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	var errs []error
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".") || strings.HasPrefix(e.Name(), ".new-") {
			if err := os.Remove(filepath.Join(d.Dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(append(errs, err)...)
}

// Fill mints tokens for (audience, sub) with s until the stock holds
// depth fresh ones for them (0 = StockDepth), all at once, and returns
// how many it added. It is what a refill process runs.
func (d *StockDir) Fill(s *Signer, audience, sub string, depth int) (int, error) {
	if depth == 0 {
		depth = StockDepth
	}
	need := depth - d.Count(s.KID(), s.Issuer(), audience, sub)
	if need <= 0 {
		return 0, nil
	}
	type res struct {
		tok string
		at  time.Time
		err error
	}
	ch := make(chan res, need)
	for i := 0; i < need; i++ {
		go func() {
			at := s.now()
			tok, err := s.Mint(audience, sub)
			ch <- res{tok, at, err}
		}()
	}
	added := 0
	var errs []error
	for i := 0; i < need; i++ {
		r := <-ch
		if r.err != nil {
			errs = append(errs, r.err)
			continue
		}
		if err := d.Put(s.KID(), s.Issuer(), audience, sub, r.at, r.tok); err != nil {
			errs = append(errs, err)
			continue
		}
		added++
	}
	if len(errs) > 0 {
		return added, errs[0]
	}
	return added, nil
}
