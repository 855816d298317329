package server

import (
	"context"
	"errors"
	"net/http"

	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/signer"
	"github.com/pact-cli/pact/store"
)

// UserEnv is what one User's in-process agent is built from: the
// construction point of the turn routes (send, stream, login, grants,
// receipts, conversations, card), which build the agent interface's
// in-process implementation from it for each request's Caller.UserID.
//
//   - Signer: the server's active key; every PA JWT's iss is the server's
//     issuer (PACT §3.2).
//   - Sub: the User's pairwise sub at a Provider, from that Provider's
//     audience (signer.UserPairwiseSub): stable per (User, Provider),
//     unlinkable across Providers and Users.
//   - Registrations: the server's Provider registrations (PACT §3.1), read
//     from the database on each call, so `pact serve provider add|remove`
//     take effect while the server runs; Registrations.Match finds the one
//     of an interface URL (profile.Config's longest-prefix rule).
//   - HTTP: the hardened outbound client (httpx).
//   - Store: the User's own store (conversations, turns, sends, receipts,
//     grants, drafts, cards, pins; the storage interface's store.Store) in
//     the server's database, which reads and writes that User's rows only.
type UserEnv struct {
	UserID        string
	Store         store.Store
	Issuer        string
	Signer        *signer.Signer
	Sub           func(audience string) string
	Registrations *profile.Config
	HTTP          *http.Client
}

// UserEnv builds the environment of User userID; a User that does not
// exist (removed meanwhile) is NotFound.
func (s *Server) UserEnv(ctx context.Context, userID string) (UserEnv, error) {
	if _, err := s.opts.Store.ServerUser(ctx, userID); errors.Is(err, store.ErrServerNotFound) {
		return UserEnv{}, NotFound("User")
	} else if err != nil {
		return UserEnv{}, err
	}
	sg, err := s.opts.Identity.Signer()
	if err != nil {
		return UserEnv{}, err
	}
	regs, err := s.opts.Store.Registrations(ctx)
	if err != nil {
		return UserEnv{}, err
	}
	c := &profile.Config{Issuer: s.opts.Identity.Issuer(), JWKSURI: s.opts.Identity.JWKSURI(), Providers: []profile.Registration{}}
	for _, r := range regs {
		c.Providers = append(c.Providers, profile.Registration{URL: r.URL, Audience: r.Audience})
	}
	id := s.opts.Identity
	return UserEnv{
		UserID: userID, Store: s.opts.Store.ForUser(userID), Issuer: id.Issuer(), Signer: sg,
		Sub:           func(audience string) string { return id.Sub(userID, audience) },
		Registrations: c, HTTP: s.opts.HTTP,
	}, nil
}
