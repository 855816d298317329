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
	"github.com/pact-cli/pact/iostreams"
)

// Login states, as login_status reports them.
const (
	StatusPending = "pending" // waiting for the User in the browser
	StatusGranted = "granted"
	StatusDenied  = "denied"  // the User refused (access_denied)
	StatusExpired = "expired" // the code expired first (expired_token)
	StatusFailed  = "failed"  // anything else went wrong
	// With URL elicitation, the User's answer in the client:
	StatusDeclined  = "declined"  // the User declined to open the Brand's page
	StatusCancelled = "cancelled" // the User dismissed the request without answering
)

// login is one device flow (RFC 8628, PACT §5.3) the server is polling.
type login struct {
	brand, iface string
	name         string // the card's name, cleaned
	asked        []string
	started      *LoginStarted
	cancel       context.CancelFunc

	// set when the flow ends (under Server.mu)
	done   chan struct{} // closed when the flow ends
	answer string        // StatusDeclined or StatusCancelled: the User's answer to the elicitation
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
	Brand        string  `json:"brand" jsonschema:"the card URL"`
	BrandName    string  `json:"brandName" jsonschema:"the card's name (the Brand's words)"`
	InterfaceURL string  `json:"interfaceUrl"`
	Status       string  `json:"status" jsonschema:"pending; with URL elicitation also declined or cancelled, the User's answer"`
	Scopes       []Scope `json:"scopes" jsonschema:"the scopes asked for, with the Brand's descriptions (the Brand's words)"`
	// AskedVia is how the link reached the User: "elicitation" (the MCP
	// client showed it to the User; no link or code in this result),
	// "browser" (pact opened it) or "assistant" (the assistant must show
	// it to the User).
	AskedVia string `json:"askedVia" jsonschema:"elicitation: the client showed the link to the User (not in this result); browser: pact opened it; assistant: show the link and code to the User"`
	// UserAnswer is the User's answer to the elicitation: accept,
	// decline or cancel (elicitation only).
	UserAnswer              string      `json:"userAnswer,omitempty" jsonschema:"the User's answer in the client: accept, decline or cancel (elicitation only)"`
	UserCode                string      `json:"userCode,omitempty" jsonschema:"the code the User sees on the Brand's page (absent with elicitation)"`
	VerificationURIComplete string      `json:"verificationUriComplete,omitempty" jsonschema:"the link the User opens to log in with the Brand and approve (absent with elicitation)"`
	ExpiresAt               time.Time   `json:"expiresAt" jsonschema:"when the link and code expire"`
	BrowserOpened           bool        `json:"browserOpened" jsonschema:"whether pact opened the link in the User's browser"`
	ThirdParty              *ThirdParty `json:"thirdParty,omitempty" jsonschema:"which members hold the Brand's words"`

	login         *login // the flow, for the User's answer to the elicitation
	elicitationID string
}

// describe writes what the assistant is to know about the login: the
// scopes (the Brand's descriptions, framed), then how the User was asked.
// With elicitation there is no link or code: the User has them.
func (l *LoginStarted) describe(r *reply) {
	src := brandSource(l.Brand)
	var scopes []string
	for _, sc := range l.Scopes {
		scopes = append(scopes, sc.ID+": "+sc.Description)
	}
	r.quote(src+", the scopes asked for with its descriptions", scopes...)
	exp := l.ExpiresAt.UTC().Format(time.RFC3339)
	switch {
	case l.AskedVia == "elicitation" && l.UserAnswer == "accept":
		r.say("pact: the User was asked directly, in your client, to log in with the Brand on its own page and approve or refuse; the User chose to open the page. " +
			"The link and code went to the User only. The decision is the User's: call login_status to learn it (the link expires at " + exp + ").")
	case l.AskedVia == "elicitation" && l.UserAnswer == "decline":
		r.say("pact: the User was asked directly, in your client, and declined to open the Brand's login page: nothing was granted. Do not ask again unless the User wants to.")
	case l.AskedVia == "elicitation":
		r.say("pact: the User was asked directly, in your client, and dismissed the request without answering: nothing was granted. Ask the User whether they want to log in before trying again.")
	default:
		how := "pact did not open a browser (--no-browser): show the User this link and code, and let the User decide."
		if l.BrowserOpened {
			how = "pact opened the Brand's login page in the User's browser; if the User does not see it, show the User this link and code."
		}
		r.say("pact: "+how,
			"For the User: open "+l.VerificationURIComplete+" , log in with the Brand there, check that the page shows the code "+l.UserCode+
				", and approve or refuse the scopes. The link expires at "+exp+". pact never sees the User's password.",
			"Then call login_status to learn the User's answer.")
	}
}

// urlElicitation reports whether the client of req declared URL-mode
// elicitation (MCP 2025-11-25 elicitation.url).
func urlElicitation(req *mcp.CallToolRequest) bool {
	if req == nil || req.Session == nil {
		return false
	}
	c := req.ClientCapabilities()
	return c != nil && c.Elicitation != nil && c.Elicitation.URL != nil
}

func (s *Server) startLogin(ctx context.Context, req *mcp.CallToolRequest, in LoginInput) (*mcp.CallToolResult, *LoginStarted, error) {
	if req != nil && req.Params.RequestState != "" {
		res, out, err := s.resume(req)
		st, _ := out.(*LoginStarted)
		return res, st, err
	}
	if len(in.Scopes) == 0 {
		return nil, nil, errors.New("name the permissions to ask for in scopes (see get_agent_card for the Brand's scope ids)")
	}
	conv, err := s.open(ctx, in.Brand, agent.Start{})
	if err != nil {
		return nil, nil, toolError(err)
	}
	started, err := s.beginLogin(ctx, req, conv, in.Scopes)
	if err != nil {
		return nil, nil, toolError(err)
	}
	started.ThirdParty = thirdParty(brandSource(started.Brand), "/brandName", "/scopes/*/description")
	finish := func() (*mcp.CallToolResult, any) {
		r := newReply().say(fmt.Sprintf("pact: login started with %s (OAuth device flow). The scopes:", brandSource(started.Brand)))
		started.describe(r)
		return r.result(started), started
	}
	if started.AskedVia == "elicitation" {
		return s.askUser(started, finish), nil, nil
	}
	res, _ := finish()
	return res, started, nil
}

// elicitMessage is what the User reads in the client beside the link: the
// Brand (its host, and the name its card gives), the scopes with their
// descriptions, and the code to check; every remote piece on one line.
func elicitMessage(st *LoginStarted, code string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "pact: %s (its card calls it %q) asks to let pact act for you with these permissions:\n", brandSource(st.Brand), iostreams.SanitizeLine(st.BrandName))
	for _, sc := range st.Scopes {
		fmt.Fprintf(&b, "  • %s — %s\n", iostreams.SanitizeLine(sc.ID), iostreams.SanitizeLine(sc.Description))
	}
	fmt.Fprintf(&b, "Open the link to log in with the Brand on its own page, check that it shows the code %s, and approve or refuse. "+
		"It is your decision; your assistant does not see the link or the code.", iostreams.SanitizeLine(code))
	return b.String()
}

// beginLogin starts the device flow on conv for scopes (agent.Login) and
// returns once the
// Brand has answered the device authorization request (link and code);
// polling goes on in the server until the User answers, the code expires or
// the server stops. A login already pending for the Brand is replaced.
//
// When the client declared URL elicitation, the result is marked
// AskedVia "elicitation" and no browser is opened: the caller sends the
// link to the User with askUser and resumes with the User's answer.
// Otherwise pact opens the User's browser (unless NoBrowser) and the
// result carries the link and code for the User.
func (s *Server) beginLogin(ctx context.Context, req *mcp.CallToolRequest, conv agent.Conversation, scopes []string) (*LoginStarted, error) {
	card := conv.Facts().Card
	d := card.Delegation
	if d == nil {
		return nil, conversation.ErrNoDelegation
	}
	pctx, cancel := context.WithCancel(s.ctx)
	l := &login{brand: card.URL, iface: card.InterfaceURL, name: clean(card.Name()), asked: append([]string(nil), scopes...), cancel: cancel, status: StatusPending}
	shown := make(chan *agent.LoginStart, 1)
	done := make(chan struct{})
	l.done = done
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(done)
		g, err := agent.Login(pctx, conv, scopes, func(a *agent.LoginStart) { shown <- a })
		s.mu.Lock()
		defer s.mu.Unlock()
		l.grant, l.err = g, err
		switch {
		case err == nil:
			l.status = StatusGranted
		case l.answer != "" && errors.Is(err, context.Canceled):
			l.status = l.answer
		case errors.Is(err, deviceflow.ErrAccessDenied):
			l.status = StatusDenied
		case errors.Is(err, deviceflow.ErrExpiredToken):
			l.status = StatusExpired
		default:
			l.status = StatusFailed
		}
		if err != nil && !errors.Is(err, context.Canceled) {
			s.logf("login with %s ended: %s", clean(card.Name()), clean(err.Error()))
		}
	}()
	var auth *agent.LoginStart
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
		UserCode: clean(auth.UserCode), VerificationURIComplete: clean(auth.VerificationURIComplete), ExpiresAt: seconds(auth.ExpiresAt), AskedVia: "assistant"}
	for _, id := range scopes {
		st.Scopes = append(st.Scopes, Scope{ID: clean(id), Description: clean(d.Scopes[id])})
	}
	l.started = st
	elicit := urlElicitation(req)
	if !elicit && !s.cfg.NoBrowser {
		// The browser is the User's: opening it is fire and forget (a
		// browser command may run for a while), reported on the log.
		st.BrowserOpened, st.AskedVia = true, "browser"
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
	s.logf("login with %s started; waiting for the User (code %s)", clean(card.Name()), st.UserCode)
	st.login = l
	if elicit {
		st.AskedVia = "elicitation" // askUser sends the link
	}
	return st, nil
}

// consent is a login whose link went to the User by elicitation, waiting
// for the User's answer: the tool call that asked is resumed with it.
type consent struct {
	st *LoginStarted
	// finish builds the tool's result once st holds the User's answer.
	finish func() (*mcp.CallToolResult, any)
}

// consentID names the input request (SEP-2322) that carries the User's
// answer.
const consentID = "consent"

// askUser is the result that sends st's link to the User by URL
// elicitation (elicitation/create, mode url) instead of to the model: an
// input-required result (multi round-trip, SEP-2322) that the SDK turns
// into elicitation/create for a 2025-11-25 client, or that a 2026-07-28
// client fulfils itself; either way the call comes back (resume) with the
// User's answer and finish gives the tool's result. The link and code
// leave st here: no result carries them.
func (s *Server) askUser(st *LoginStarted, finish func() (*mcp.CallToolResult, any)) *mcp.CallToolResult {
	p := &mcp.ElicitParams{Mode: "url", Message: elicitMessage(st, st.UserCode), URL: st.VerificationURIComplete, ElicitationID: "pact-login-" + newNonce()}
	st.UserCode, st.VerificationURIComplete = "", ""
	state := newNonce() + newNonce()
	s.mu.Lock()
	s.consents[state] = &consent{st: st, finish: finish}
	s.mu.Unlock()
	// A client that never comes back with the answer leaves nothing
	// behind once the link has expired.
	time.AfterFunc(time.Until(st.ExpiresAt)+time.Minute, func() {
		s.mu.Lock()
		delete(s.consents, state)
		s.mu.Unlock()
	})
	st.elicitationID = p.ElicitationID
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{consentID: p}, RequestState: state}
}

// resume finishes a call that asked the User (askUser) with the User's
// answer: accept keeps the login waiting for the Brand's page (the client
// is told when it is done), decline and cancel end it.
func (s *Server) resume(req *mcp.CallToolRequest) (*mcp.CallToolResult, any, error) {
	s.mu.Lock()
	c := s.consents[req.Params.RequestState]
	delete(s.consents, req.Params.RequestState)
	s.mu.Unlock()
	if c == nil {
		return nil, nil, errors.New("this request to the User is no longer pending (it was answered, or pact mcp restarted): call the tool again if the User wants to")
	}
	action := "cancel" // no answer is no consent
	if r, ok := req.Params.InputResponses[consentID].(*mcp.ElicitResult); ok && (r.Action == "accept" || r.Action == "decline") {
		action = r.Action
	}
	st, l := c.st, c.st.login
	st.UserAnswer = action
	if action == "accept" {
		ss, id := req.Session, st.elicitationID
		go func() {
			<-l.done
			if ss == nil {
				return
			}
			nctx, ncancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer ncancel()
			ss.NotifyElicitationComplete(nctx, &mcp.ElicitationCompleteParams{ElicitationID: id})
		}()
	} else {
		answer := StatusDeclined
		if action == "cancel" {
			answer = StatusCancelled
		}
		s.mu.Lock()
		l.answer = answer
		s.mu.Unlock()
		l.cancel()
		<-l.done
		st.Status = answer
	}
	res, out := c.finish()
	return res, out, nil
}

// LoginStatus is login_status' structured result; when granted, the
// `pact login --json` shape plus status.
type LoginStatus struct {
	Brand           string      `json:"brand"`
	BrandName       string      `json:"brandName" jsonschema:"the card's name (\"\" when not known)"`
	InterfaceURL    string      `json:"interfaceUrl"`
	Status          string      `json:"status" jsonschema:"pending, granted, denied, expired or failed; declined or cancelled: the User's answer to the client's request (URL elicitation)"`
	ScopesRequested []string    `json:"scopesRequested"`
	ScopesGranted   []string    `json:"scopesGranted"`
	GrantID         string      `json:"grantId,omitempty"`
	ExpiresAt       *time.Time  `json:"expiresAt,omitempty" jsonschema:"pending: when the code expires; granted: when the delegation token expires; absent otherwise"`
	Message         string      `json:"message,omitempty" jsonschema:"what went wrong, for failed (may quote the Brand or its Provider)"`
	ThirdParty      *ThirdParty `json:"thirdParty" jsonschema:"which members hold the Brand's words"`
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
		case StatusDeclined, StatusCancelled:
		default:
			out.Message = clean(l.err.Error())
		}
	}
	s.mu.Unlock()
	if l == nil {
		// No login in this server: the stored delegation, if any.
		grants, err := s.cfg.Agent.Grants(ctx)
		if err != nil {
			return nil, LoginStatus{}, toolError(err)
		}
		for _, g := range grants {
			if g.Brand == cardURL {
				out = LoginStatus{Brand: g.Brand, BrandName: clean(g.BrandName), InterfaceURL: g.InterfaceURL, Status: StatusGranted, ScopesRequested: []string{},
					ScopesGranted: nonNil(g.Scopes), GrantID: g.GrantID, ExpiresAt: ptr(seconds(g.ExpiresAt))}
			}
		}
		if out.Status == "" {
			return nil, LoginStatus{}, fmt.Errorf("no login was started for %s and no delegation is stored for it; call start_login", clean(in.Brand))
		}
	}
	out.ThirdParty = thirdParty(brandSource(out.Brand), "/brandName", "/scopesGranted/*", "/message")
	r := newReply()
	if out.Status == StatusFailed {
		r.say("pact: the login with " + brandSource(out.Brand) + " failed. pact's message, which may quote the Brand or its Provider:")
		r.quote("pact's error message, which may quote the Brand or its Provider", out.Message)
	} else {
		r.say("pact: " + out.describe())
	}
	return r.result(out), out, nil
}

func (o LoginStatus) describe() string {
	switch o.Status {
	case StatusDeclined:
		return "The User declined, in the client, to open the Brand's login page: nothing was granted. Do not ask again unless the User wants to."
	case StatusCancelled:
		return "The User dismissed the login request in the client without answering: nothing was granted. Ask the User before trying again."
	case StatusPending:
		return "Waiting for the User to approve in the browser (the code expires at " + o.ExpiresAt.Format(time.RFC3339) + "). Check again shortly."
	case StatusGranted:
		msg := "Granted: " + one(strings.Join(o.ScopesGranted, " ")) + " (the delegation expires at " + o.ExpiresAt.Format(time.RFC3339) + "; pact refreshes it)."
		missing := agent.CompareGrant(o.ScopesRequested, o.ScopesGranted).Missing
		sort.Strings(missing)
		if len(missing) > 0 {
			msg += " The User did not grant: " + one(strings.Join(missing, " ")) + "."
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
