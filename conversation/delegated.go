package conversation

import (
	"context"
	"errors"
	"fmt"

	"github.com/pact-cli/pact/delegation"
	"github.com/pact-cli/pact/deviceflow"
	"github.com/pact-cli/pact/receipts"
)

// ErrNoDelegation means the Brand's card offers no delegated authority (§5.1).
var ErrNoDelegation = errors.New("this Brand does not let pact act on your account (its Agent Card offers no login)")

// flow is the device-flow client for this Brand's Provider: client_id is
// the issuer, and every call carries a fresh PA JWT for the Provider's
// audience (§5.3).
func (s *Session) flow() *deviceflow.Client {
	return &deviceflow.Client{
		HTTP:     s.opts.HTTP,
		ClientID: s.issuer,
		PAToken:  s.bound.Token,
		Clock:    s.opts.Clock,
	}
}

// Login runs the device flow of §5.3 for scopes (ids on the card; others are
// refused before any request): device authorization, then shown is called
// with the user_code and verification_uri_complete (the caller shows them and
// opens the link; pact never fetches the login page), then the token
// endpoint is polled until the User approves, refuses or the code expires.
// The token is verified (§5.4) and stored. The returned grant's Scopes are
// what the User approved, which may be fewer than asked.
// Errors: ErrNoDelegation, deviceflow errors (ErrAccessDenied and
// ErrExpiredToken are consent outcomes), verification errors.
func (s *Session) Login(ctx context.Context, scopes []string, shown func(*deviceflow.Authorization)) (*delegation.Grant, error) {
	d := s.Card.Delegation
	if d == nil {
		return nil, ErrNoDelegation
	}
	if s.mgr == nil {
		return nil, errors.New("delegation is not configured for this session")
	}
	if len(scopes) == 0 {
		return nil, fmt.Errorf("name at least one scope; this Brand offers: %v", d.ScopeIDs())
	}
	// The endpoint-origin rule, before the first byte is sent: every
	// endpoint the card names, then every one its metadata names, is under
	// the registration of the Provider whose audience the PA JWT carries.
	for _, ep := range []struct{ what, url string }{
		{"device authorization endpoint", d.DeviceAuthorizationURL},
		{"token endpoint", d.TokenURL},
		{"authorization server metadata", d.OAuth2MetadataURL},
	} {
		if err := s.bound.Check(ep.what, ep.url); err != nil {
			return nil, err
		}
	}
	md, err := deviceflow.FetchMetadata(ctx, s.opts.HTTP, d.OAuth2MetadataURL)
	if err != nil {
		return nil, err
	}
	for _, ep := range []struct{ what, url string }{
		{"token endpoint of the metadata", md.TokenEndpoint},
		{"jwks_uri of the metadata", md.JWKSURI},
	} {
		if err := s.bound.Check(ep.what, ep.url); err != nil {
			return nil, err
		}
	}
	if md.DeviceAuthorizationEndpoint != "" {
		if err := s.bound.Check("device authorization endpoint of the metadata", md.DeviceAuthorizationEndpoint); err != nil {
			return nil, err
		}
	}
	// The keys that will verify the delegation token are fetched (and
	// checked: size, JSON, usable keys) before the User is asked anything,
	// so an unusable jwks_uri fails now, not after the User approved.
	if s.opts.Keys != nil {
		if _, err := s.opts.Keys.Set(ctx, md.JWKSURI); err != nil {
			return nil, fmt.Errorf("the Brand's signing keys (jwks_uri %s) cannot be used, so pact cannot check what the Brand would grant; nothing was asked of you: %w", md.JWKSURI, err)
		}
	}
	// Authorize refuses scope ids the card does not list before any request.
	flow := s.flow()
	auth, err := flow.Authorize(ctx, d.DeviceAuthorizationURL, scopes, d.Scopes)
	if err != nil {
		return nil, err
	}
	if shown != nil {
		shown(auth)
	}
	tok, err := flow.Poll(ctx, d.TokenURL, auth)
	if err != nil {
		return nil, err
	}
	return s.mgr.Accept(ctx, delegation.Origin{Brand: s.Card.URL, InterfaceURL: s.Card.InterfaceURL,
		MetadataURL: d.OAuth2MetadataURL, Metadata: md}, tok)
}

// Grant returns the stored delegation grant for this Brand, or
// delegation.ErrNoGrant.
func (s *Session) Grant() (*delegation.Grant, error) {
	if s.mgr == nil {
		return nil, delegation.ErrNoGrant
	}
	return s.mgr.Grant(s.Card.InterfaceURL)
}

// Logout forgets this Brand's delegation token (both tokens and the grant).
func (s *Session) Logout() error {
	if s.mgr == nil {
		return delegation.ErrNoGrant
	}
	// Read as stored: a grant refused for its endpoints is forgotten too.
	if _, ok, err := s.mgr.Store.Get(s.Card.InterfaceURL); err != nil {
		return err
	} else if !ok {
		return fmt.Errorf("delegation: %s: %w", s.Card.InterfaceURL, delegation.ErrNoGrant)
	}
	return s.mgr.Forget(s.Card.InterfaceURL)
}

// keepReceipt verifies the receipt in a reply's metadata (§5.6) against the
// grant used and archives it: verified receipts with the key that verified
// them, failures apart with their reasons. nil when there is no receipt.
// messageID is the User's message the reply answers: a receipt the archive
// already holds for another turn is kept but is not verified for this one
// (replayed).
func (s *Session) keepReceipt(ctx context.Context, metadata map[string]any, g *delegation.Grant, messageID string) *ReceiptStatus {
	rc, ok, err := receipts.FromMetadata(metadata)
	if !ok {
		return nil
	}
	if err != nil {
		return &ReceiptStatus{Problems: []string{"malformed pact.receipt: " + err.Error()}}
	}
	var exp receipts.Expect
	if g != nil {
		exp = receipts.ExpectFromGrant(g, s.issuer)
	} else {
		exp = receipts.Expect{PA: s.issuer, Brand: s.Card.InterfaceURL, Card: s.Card.URL}
	}
	var res *receipts.Result
	if g == nil {
		res = &receipts.Result{ID: rc.ID(), Receipt: rc, Expect: exp,
			Problems: []string{"a receipt arrived on a message sent without a delegation token"}}
	} else {
		res, _ = receipts.Verify(ctx, s.opts.Keys, rc, exp)
	}
	st := &ReceiptStatus{ID: res.ID, Verified: res.Verified(), Problems: res.Problems}
	if s.opts.Receipts != nil {
		if _, others, err := s.opts.Receipts.PutTurn(res, TurnKey(s.Card.InterfaceURL, messageID)); err != nil {
			st.Problems = append(st.Problems, "archiving failed: "+err.Error())
			st.JWS = rc.JWS // not kept: give it to the User
			st.ArchiveError = err.Error()
		} else if others > 0 {
			st.Verified, st.Replayed = false, true
			st.Problems = append(st.Problems, receipts.ReplayNote(others))
		}
	}
	return st
}

// TurnKey names one turn for the receipt archive: the interface URL and the
// User's messageId (a resend of the same message keeps it, PACT §4.3).
func TurnKey(interfaceURL, messageID string) string { return interfaceURL + " " + messageID }

// ListGrants returns the stored delegation grants of the profile.
func ListGrants(opts Options) ([]delegation.Grant, error) {
	if opts.Grants == nil {
		return nil, nil
	}
	return opts.Grants.List()
}

// ForgetBrand removes, without contacting the Brand, every grant whose card
// URL is cardURL or whose interface URL is iface, with its tokens. It
// returns how many were removed.
func ForgetBrand(opts Options, cardURL, iface string) (int, error) {
	if opts.Grants == nil {
		return 0, nil
	}
	grants, err := opts.Grants.List()
	if err != nil {
		return 0, err
	}
	m := &delegation.Manager{Store: opts.Grants, Secrets: opts.tokens(), SecretPrefix: opts.Profile.Name + "/"}
	n := 0
	for _, g := range grants {
		if g.Brand == cardURL || g.InterfaceURL == iface {
			if err := m.Forget(g.InterfaceURL); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}
