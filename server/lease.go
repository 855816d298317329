package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/pact-cli/pact/store"
)

// Leases across replicas (issue 30). Several `pact serve` processes share
// one PostgreSQL database; what one of them is doing that no other may do
// at the same time (a turn in flight for a messageId, the token request of
// a login being polled) is a lease in the database (store.ServerState:
// AcquireLease, RenewLease, ReleaseLease), never a lock in memory. A lease
// expires on its own: when a replica dies, what it held is free again
// after the lease's time to live, and the next replica that asks takes it
// over with the next fencing token.
//
// Hold is the way a handler takes one: it renews the lease in the
// background and ends the Held's context when the lease is lost, so that
// work done under it stops before another replica can take it over.

// DefaultLeaseTTL is the time to live of a lease held with Hold unless
// another is given: a replica's death frees what it held within it.
const DefaultLeaseTTL = 30 * time.Second

// Replica is this process's name among the replicas sharing the database:
// the host name, the process id and 32 random bits ("host/1234/9f3a2c1b").
// Every lease it holds names it (with a suffix unique to the acquisition),
// and it is logged when the server starts.
func (s *Server) Replica() string { return s.replica }

func newReplicaID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "host"
	}
	if len(host) > 64 {
		host = host[:64]
	}
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), randomHex(4))
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Held is a lease this replica holds: renewed every third of its time to
// live until Release, or until it is lost (a renewal refused because
// another holder took it over, or no renewal succeeded before it
// expired), which ends Context.
type Held struct {
	s      *Server
	ttl    time.Duration
	ctx    context.Context
	cancel context.CancelCauseFunc
	done   chan struct{}

	mu    sync.Mutex
	lease store.Lease
}

// ErrLeaseLost is the cause of a Held's context ending because the lease
// was lost (context.Cause).
var ErrLeaseLost = store.ErrLeaseLost

// Hold takes the lease name for this replica (ttl 0: DefaultLeaseTTL) and
// keeps it until Release or until ctx ends. Held by another replica (or by
// another request of this one): an error matching store.ErrLeaseHeld, and
// the lease as held, so that the caller can say until when.
func (s *Server) Hold(ctx context.Context, name string, ttl time.Duration) (*Held, store.Lease, error) {
	if ttl <= 0 {
		ttl = DefaultLeaseTTL
	}
	holder := s.replica + "/" + randomHex(4)
	l, err := s.opts.Store.AcquireLease(ctx, name, holder, s.now(), ttl)
	if err != nil {
		return nil, l, err
	}
	hctx, cancel := context.WithCancelCause(ctx)
	h := &Held{s: s, ttl: ttl, ctx: hctx, cancel: cancel, done: make(chan struct{}), lease: l}
	go h.renew()
	return h, l, nil
}

// Context ends when the lease is lost or released, or when the context
// Hold was given ends; context.Cause says which (ErrLeaseLost when lost).
func (h *Held) Context() context.Context { return h.ctx }

// Lease is the lease as last acquired or renewed (its Token is the fencing
// token of this acquisition).
func (h *Held) Lease() store.Lease {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lease
}

// renew renews the lease every ttl/3; a renewal that fails for another
// reason than the lease being lost (the database not answering) is tried
// again at the next tick if that comes before the lease expires, else the
// lease counts as lost.
func (h *Held) renew() {
	defer close(h.done)
	t := time.NewTicker(h.ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-h.ctx.Done():
			return
		case <-t.C:
		}
		h.mu.Lock()
		l := h.lease
		h.mu.Unlock()
		now := h.s.now()
		rctx, cancel := context.WithTimeout(h.ctx, h.ttl/3)
		nl, err := h.s.opts.Store.RenewLease(rctx, l, now, h.ttl)
		cancel()
		switch {
		case err == nil:
			h.mu.Lock()
			h.lease = nl
			h.mu.Unlock()
		case h.ctx.Err() != nil:
			return
		case errors.Is(err, store.ErrLeaseLost) || l.Expires.Sub(now) <= h.ttl/3:
			// Lost, or the next try would come after it expires: stop now,
			// before another replica can take it over.
			h.s.log.Warn("lease lost", slog.String("lease", l.Name), slog.Int64("token", l.Token), slog.String("error", err.Error()))
			h.cancel(ErrLeaseLost)
			return
		default:
			h.s.log.Warn("lease not renewed; trying again", slog.String("lease", l.Name), slog.String("error", err.Error()))
		}
	}
}

// Release frees the lease at once for the next holder and ends Context.
// A lease already lost is ErrLeaseLost.
func (h *Held) Release() error {
	lost := errors.Is(context.Cause(h.ctx), ErrLeaseLost)
	h.cancel(context.Canceled)
	<-h.done
	if lost {
		return ErrLeaseLost
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(h.ctx), 5*time.Second)
	defer cancel()
	return h.s.opts.Store.ReleaseLease(ctx, h.Lease())
}
