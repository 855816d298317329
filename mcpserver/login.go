package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pact-cli/pact/agent"
	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/delegation"
	"github.com/pact-cli/pact/deviceflow"
	"github.com/pact-cli/pact/discovery"
)

// Login states, as login_status reports them.
const (
	StatusPending = "pending" // waiting for the User in the browser
	StatusGranted = "granted"
	StatusDenied  = "denied"  // the User refused (access_denied)
	StatusExpired = "expired" // the code expired first (expired_token)
	StatusFailed  = "failed"  // anything else went wrong
)

// login is one device flow (RFC 8628, PACT §5.3) the server is polling.
type login struct {
	brand, iface string
	name         string // the card's name, cleaned
	asked        []string
	started      *LoginStarted
	cancel       context.CancelFunc

	// set when the flow ends (under Server.mu)
	status string
	grant  *delegation.Grant
	err    error
}

// LoginInput is start_login's input.
type LoginInput struct {
	Brand  string   `json:"brand" jsonschema:"the Brand: a domain, an origin or an Agent Card URL"`
	Scopes []string `json:"scopes" jsonschema:"scope ids from the Brand's card (get_agent_card) to ask the User for"`
}

// Scope is a scope id with the Brand's description of it.
type Scope struct {
	ID          string `json:"id"`
	Description string `json:"description"`
}

// LoginStarted is start_login's structured result (and a step-up's login).
type LoginStarted struct {
	Brand                   string    `json:"brand" jsonschema:"the card URL"`
	BrandName               string    `json:"brandName" jsonschema:"the card's name"`
	InterfaceURL            string    `json:"interfaceUrl"`
	Status                  string    `json:"status" jsonschema:"pending"`
	Scopes                  []Scope   `json:"scopes" jsonschema:"the scopes asked for, with the Brand's descriptions"`
	UserCode                string    `json:"userCode" jsonschema:"the code the User sees on the Brand's page"`
	VerificationURIComplete string    `json:"verificationUriComplete" jsonschema:"the link the User opens to log in with the Brand and approve"`
	ExpiresAt               time.Time `json:"expiresAt" jsonschema:"when the link and code expire"`
	BrowserOpened           bool      `json:"browserOpened" jsonschema:"whether pact opened the link in the User's browser"`
}

func (l *LoginStarted) instructions() string {
	how := "Ask the User to open " + l.VerificationURIComplete
	if l.BrowserOpened {
		how = "pact opened the Brand's login page in the User's browser (" + l.VerificationURIComplete + ")"
	}
	var ids []string
	for _, s := range l.Scopes {
		ids = append(ids, s.ID)
	}
	return fmt.Sprintf("%s; the User logs in with the Brand there, checks that the code is %s and approves %s. "+
		"The link expires at %s. Then call login_status; pact never sees the User's password.",
		how, l.UserCode, strings.Join(ids, ", "), l.ExpiresAt.UTC().Format(time.RFC3339))
}

func (s *Server) startLogin(ctx context.Context, _ *mcp.CallToolRequest, in LoginInput) (*mcp.CallToolResult, *LoginStarted, error) {
	if len(in.Scopes) == 0 {
		return nil, nil, errors.New("name the permissions to ask for in scopes (see get_agent_card for the Brand's scope ids)")
	}
	sess, err := s.open(ctx, in.Brand, agent.Start{})
	if err != nil {
		return nil, nil, toolError(err)
	}
	started, err := s.beginLogin(ctx, sess, in.Scopes)
	if err != nil {
		return nil, nil, toolError(err)
	}
	lines := []string{fmt.Sprintf("Login started with %s for:", clean(sess.Card.Name()))}
	for _, sc := range started.Scopes {
		lines = append(lines, "  "+sc.ID+": "+sc.Description)
	}
	lines = append(lines, "Code: "+started.UserCode, "Link: "+started.VerificationURIComplete, started.instructions())
	return textResult(lines...), started, nil
}

// beginLogin starts the device flow on sess for scopes and returns once the
// Brand has answered the device authorization request (link and code);
// polling goes on in the server until the User answers, the code expires or
// the server stops. A login already pending for the Brand is replaced.
func (s *Server) beginLogin(ctx context.Context, sess *conversation.Session, scopes []string) (*LoginStarted, error) {
	d := sess.Card.Delegation
	if d == nil {
		return nil, conversation.ErrNoDelegation
	}
	pctx, cancel := context.WithCancel(s.ctx)
	l := &login{brand: sess.Card.URL, iface: sess.Card.InterfaceURL, name: clean(sess.Card.Name()), asked: append([]string(nil), scopes...), cancel: cancel, status: StatusPending}
	shown := make(chan *deviceflow.Authorization, 1)
	done := make(chan struct{})
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(done)
		g, err := sess.Login(pctx, scopes, func(a *deviceflow.Authorization) { shown <- a })
		s.mu.Lock()
		defer s.mu.Unlock()
		l.grant, l.err = g, err
		switch {
		case err == nil:
			l.status = StatusGranted
		case errors.Is(err, deviceflow.ErrAccessDenied):
			l.status = StatusDenied
		case errors.Is(err, deviceflow.ErrExpiredToken):
			l.status = StatusExpired
		default:
			l.status = StatusFailed
		}
		if err != nil && !errors.Is(err, context.Canceled) {
			s.logf("login with %s ended: %s", clean(sess.Card.Name()), clean(err.Error()))
		}
	}()
	var auth *deviceflow.Authorization
	select {
	case auth = <-shown:
	case <-done:
		cancel()
		return nil, l.err
	case <-ctx.Done():
		cancel()
		return nil, ctx.Err()
	}
	st := &LoginStarted{Brand: l.brand, BrandName: l.name, InterfaceURL: l.iface, Status: StatusPending, Scopes: []Scope{},
		UserCode: clean(auth.UserCode), VerificationURIComplete: clean(auth.VerificationURIComplete), ExpiresAt: seconds(auth.ExpiresAt)}
	for _, id := range scopes {
		st.Scopes = append(st.Scopes, Scope{ID: clean(id), Description: clean(d.Scopes[id])})
	}
	l.started = st
	if !s.cfg.NoBrowser {
		// The browser is the User's: opening it is fire and forget (a
		// browser command may run for a while), reported on the log.
		st.BrowserOpened = true
		link := auth.VerificationURIComplete
		go func() {
			if err := s.cfg.Open(link); err != nil {
				s.logf("could not open a browser (%v); the link was returned to the client", err)
			}
		}()
	}
	s.mu.Lock()
	if old := s.logins[l.brand]; old != nil && old.status == StatusPending {
		old.cancel()
	}
	s.logins[l.brand] = l
	s.mu.Unlock()
	s.logf("login with %s started; waiting for the User (code %s)", clean(sess.Card.Name()), st.UserCode)
	return st, nil
}

// LoginStatus is login_status' structured result; when granted, the
// `pact login --json` shape plus status.
type LoginStatus struct {
	Brand           string     `json:"brand"`
	BrandName       string     `json:"brandName" jsonschema:"the card's name (\"\" when not known)"`
	InterfaceURL    string     `json:"interfaceUrl"`
	Status          string     `json:"status" jsonschema:"pending, granted, denied, expired or failed"`
	ScopesRequested []string   `json:"scopesRequested"`
	ScopesGranted   []string   `json:"scopesGranted"`
	GrantID         string     `json:"grantId,omitempty"`
	ExpiresAt       *time.Time `json:"expiresAt,omitempty" jsonschema:"pending: when the code expires; granted: when the delegation token expires; absent otherwise"`
	Message         string     `json:"message,omitempty" jsonschema:"what went wrong, for failed"`
}

func (s *Server) loginStatus(ctx context.Context, _ *mcp.CallToolRequest, in BrandInput) (*mcp.CallToolResult, LoginStatus, error) {
	cardURL, err := discovery.CardURL(in.Brand)
	if err != nil {
		return nil, LoginStatus{}, toolError(err)
	}
	s.mu.Lock()
	l := s.logins[cardURL]
	var out LoginStatus
	if l != nil {
		out = LoginStatus{Brand: l.brand, BrandName: l.name, InterfaceURL: l.iface, Status: l.status, ScopesRequested: cleanAll(l.asked), ScopesGranted: []string{}}
		switch l.status {
		case StatusPending:
			out.ExpiresAt = ptr(seconds(l.started.ExpiresAt))
		case StatusGranted:
			out.ScopesGranted, out.GrantID, out.ExpiresAt = nonNil(l.grant.Scopes), l.grant.GrantID, ptr(seconds(l.grant.ExpiresAt))
		default:
			out.Message = clean(l.err.Error())
		}
	}
	s.mu.Unlock()
	if l == nil {
		// No login in this server: the stored delegation, if any.
		grants, err := conversation.ListGrants(s.cfg.Options)
		if err != nil {
			return nil, LoginStatus{}, toolError(err)
		}
		ix := conversation.KnownBrands(s.cfg.Options)
		for _, g := range grants {
			if g.Brand == cardURL {
				ref, _ := ix.Lookup(g.Brand)
				out = LoginStatus{Brand: g.Brand, BrandName: clean(ref.Name), InterfaceURL: g.InterfaceURL, Status: StatusGranted, ScopesRequested: []string{},
					ScopesGranted: nonNil(g.Scopes), GrantID: g.GrantID, ExpiresAt: ptr(seconds(g.ExpiresAt))}
			}
		}
		if out.Status == "" {
			return nil, LoginStatus{}, fmt.Errorf("no login was started for %s and no delegation is stored for it; call start_login", clean(in.Brand))
		}
	}
	return textResult(out.describe()), out, nil
}

func (o LoginStatus) describe() string {
	switch o.Status {
	case StatusPending:
		return "Waiting for the User to approve in the browser (the code expires at " + o.ExpiresAt.Format(time.RFC3339) + "). Check again shortly."
	case StatusGranted:
		msg := "Granted: " + strings.Join(o.ScopesGranted, " ") + " (the delegation expires at " + o.ExpiresAt.Format(time.RFC3339) + "; pact refreshes it)."
		missing := agent.CompareGrant(o.ScopesRequested, o.ScopesGranted).Missing
		sort.Strings(missing)
		if len(missing) > 0 {
			msg += " The User did not grant: " + strings.Join(missing, " ") + "."
		}
		return msg
	case StatusDenied:
		return "The User refused: nothing was granted. Do not ask again unless the User wants to."
	case StatusExpired:
		return "The login link expired before the User approved it. Start a new login if the User still wants to."
	}
	return "The login failed: " + o.Message
}

// seconds is t in UTC to the second: every time in the tools' JSON is
// RFC 3339 without fractional seconds, as in the CLI's --json.
func seconds(t time.Time) time.Time { return t.UTC().Truncate(time.Second) }
