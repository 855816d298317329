package providercheck

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/pact-cli/pact/deviceflow"
	"github.com/pact-cli/pact/discovery"
	"github.com/pact-cli/pact/iostreams"
	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/signer"
)

// Defaults of the request budget (Options).
const (
	DefaultMaxRequests   = 200                     // requests in one run, redirects and retries included
	DefaultInterval      = 50 * time.Millisecond   // at least this long between two requests (≤ 20/s)
	DefaultMaxRetryAfter = 30 * time.Second        // the longest Retry-After waited out
	checkText            = "pact provider check: " // the prefix of every message text sent
)

// Options are what Run needs. HTTP, Config, Signer, Sub and CardURL are
// required.
type Options struct {
	// HTTP is the hardened client (httpx); Run wraps its transport to
	// count, pace and confine the requests.
	HTTP *http.Client
	// Config is the profile's configuration: issuer and registrations.
	Config *profile.Config
	// Signer mints the profile's PA JWTs, and signs the deliberately wrong
	// ones (signer.SignJWS).
	Signer *signer.Signer
	// Sub returns the pairwise sub for a Provider's audience (§3.2).
	Sub func(audience string) (string, error)
	// CardURL is the Brand's card URL (discovery.CardURL of the argument).
	CardURL string
	// Scopes, when set, run the checks that need a User (§5.3 onwards):
	// the User logs in with the Brand and approves these scopes.
	Scopes []string
	// OtherCardURL is the card of another Brand of the same Provider, for
	// "a delegation token is refused on another Brand" (§5.4, §5.5).
	OtherCardURL string
	// StepUpText is a message needing a scope not in Scopes (§5.5 step-up).
	StepUpText string
	// Groups limits the run to these groups (all when empty).
	Groups []string
	// ShowLogin shows the User the device authorization (user_code, link)
	// and opens the browser, as `pact login` does; nil = not shown.
	ShowLogin func(card *discovery.Card, scopes []string, auth *deviceflow.Authorization)
	// LoginDone is called when the login ends (nil = nothing to stop).
	LoginDone func()
	// Progress is called as each check ends, in order.
	Progress func(Result)
	// MaxRequests, Interval, MaxRetryAfter bound the run (0 = defaults).
	MaxRequests   int
	Interval      time.Duration
	MaxRetryAfter time.Duration
	// Now is the clock; nil = time.Now.
	Now func() time.Time
}

// Report is the outcome of a run (the `--json` document, docs/json.md).
type Report struct {
	Brand        string                `json:"brand"`     // card URL
	BrandName    string                `json:"brandName"` // the card's name ("" when it could not be read)
	InterfaceURL string                `json:"interfaceUrl"`
	Provider     *profile.Registration `json:"provider"`
	Scopes       []string              `json:"scopes"`
	Requests     int                   `json:"requests"` // HTTP requests sent
	RateLimited  int                   `json:"rateLimited"`
	Passed       int                   `json:"passed"`
	Failed       int                   `json:"failed"`
	Skipped      int                   `json:"skipped"`
	Results      []Result              `json:"results"`
}

// ErrBudget ends a run that would exceed MaxRequests.
var ErrBudget = errors.New("the request budget of this run is spent")

// Run runs the checks of opts.Groups against the Brand at opts.CardURL and
// returns the report. A check that cannot run is skipped with the reason;
// a check whose rule is broken fails. Errors are for runs that could not
// start (bad options, unknown group: no report), and *NotRegisteredError
// (with the report of the card checks).
func Run(ctx context.Context, opts Options) (*Report, error) {
	checks, err := Select(opts.Groups)
	if err != nil {
		return nil, err
	}
	if opts.HTTP == nil || opts.Config == nil || opts.Signer == nil || opts.Sub == nil || opts.CardURL == "" {
		return nil, errors.New("providercheck: HTTP, Config, Signer, Sub and CardURL are required")
	}
	r := newRunner(opts)
	rep := &Report{Brand: opts.CardURL, Scopes: append([]string{}, opts.Scopes...), Results: []Result{}}
	for _, c := range checks {
		out := r.runOne(ctx, c)
		res := Result{ID: c.ID, Group: c.Group, Clause: c.Clause, Title: c.Title, Status: out.status,
			Sent: clean(out.sent), Got: clean(out.got), Reason: clean(out.cause)}
		switch res.Status {
		case Pass:
			rep.Passed++
		case Fail:
			rep.Failed++
		default:
			rep.Skipped++
		}
		rep.Results = append(rep.Results, res)
		if opts.Progress != nil {
			opts.Progress(res)
		}
	}
	if r.card != nil {
		rep.BrandName = clean(r.card.Name())
		rep.InterfaceURL = r.card.InterfaceURL
	}
	if r.reg != nil {
		reg := *r.reg
		rep.Provider = &reg
	}
	rep.Requests, rep.RateLimited = r.meter.counts()
	var nr *NotRegisteredError
	if errors.As(r.targetErr, &nr) {
		return rep, nr
	}
	return rep, nil
}

// NotRegisteredError is returned by Run, with the report, when the
// profile has no registration (§3.1) for the Provider of the Brand's
// interface URL: every check beyond the card was skipped.
type NotRegisteredError struct {
	Card *discovery.Card
}

func (e *NotRegisteredError) Error() string {
	return fmt.Sprintf("this profile has no registration for the Provider of %s (interface %s): only the card could be checked; register with the audience the Provider assigned you (pact provider add PROVIDER_URL --audience AUD)",
		iostreams.SanitizeLine(e.Card.Name()), e.Card.InterfaceURL)
}

// runOne runs c, turning a panic-free error path into a skip: a check
// whose fixture failed is skipped with that reason; the request budget
// and a cancelled context skip the rest.
func (r *runner) runOne(ctx context.Context, c Check) (out outcome) {
	if err := ctx.Err(); err != nil {
		return skip("interrupted")
	}
	if c.NeedsUser && len(r.opts.Scopes) == 0 {
		return skip("needs a User: run with --scope ID (a scope on the card) to log in and check delegation")
	}
	if c.Group != GroupCard {
		if err := r.needTarget(ctx); err != nil {
			return skip("%s", err.Error())
		}
	}
	limited, _ := r.meter.unretriedCount()
	out = c.run(ctx, r)
	if out.status == Fail && errors.Is(r.meter.lastErr(), ErrBudget) {
		return skip("%s (at most %d requests)", ErrBudget, r.meter.max)
	}
	if n, why := r.meter.unretriedCount(); out.status == Fail && n > limited {
		// The Provider never judged what was sent: a 429 pact did not
		// retry (no usable Retry-After, one over MaxRetryAfter, or a 429
		// again after the wait) is errors.rate-limit's to judge, not
		// this check's.
		return skip("rate-limited: the Provider answered 429 (%s), so this was not checked; see errors.rate-limit (sent: %s; got: %s)", why, out.sent, out.got)
	}
	return out
}

// clean keeps Provider text to one printable line of at most 300 characters.
func clean(s string) string {
	s = iostreams.SanitizeLine(s)
	if r := []rune(s); len(r) > 300 {
		s = string(r[:299]) + "…"
	}
	return s
}

// runner holds what the checks share: the metered client and the fixtures
// (the card, the registration, the first turn, the login), each made once.
type runner struct {
	opts  Options
	meter *meter
	hc    *http.Client
	now   func() time.Time

	cardDone bool
	card     *discovery.Card
	cardErr  error

	targetDone bool
	targetErr  error
	reg        *profile.Registration
	sub        string
	bound      *profile.BoundMinter

	tasks *struct {
		sent string
		ex   exchange
	} // the answer to GET tasks, kept
	first   *turn // the first message of a conversation (§4.2)
	second  *turn // its continuation
	login   *loginState
	limited []exchange // 429 answers seen (§6)
	answers []exchange // answers of A2A operations (§2 media type)
}

func newRunner(opts Options) *runner {
	if opts.MaxRequests <= 0 {
		opts.MaxRequests = DefaultMaxRequests
	}
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.MaxRetryAfter <= 0 {
		opts.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	r := &runner{opts: opts, now: opts.Now}
	r.meter = newMeter(opts.HTTP.Transport, opts.MaxRequests, opts.Interval, opts.MaxRetryAfter, r.allowed)
	r.meter.onLimited = func(e exchange) { r.limited = append(r.limited, e) }
	hc := *opts.HTTP
	hc.Transport = r.meter
	r.hc = &hc
	return r
}

// fetchCard fetches and checks the Brand's card once (§2.1).
func (r *runner) fetchCard(ctx context.Context) (*discovery.Card, error) {
	if !r.cardDone {
		r.cardDone = true
		r.card, r.cardErr = discovery.Fetch(ctx, r.hc, r.opts.CardURL)
	}
	return r.card, r.cardErr
}

// needTarget resolves the card and the profile's registration for its
// interface URL; every check beyond the card needs them.
func (r *runner) needTarget(ctx context.Context) error {
	if r.targetDone {
		return r.targetErr
	}
	r.targetDone = true
	card, err := r.fetchCard(ctx)
	if err != nil {
		r.targetErr = fmt.Errorf("the card could not be used: %v", err)
		return r.targetErr
	}
	reg, ok := r.opts.Config.Match(card.InterfaceURL)
	if !ok {
		r.targetErr = &NotRegisteredError{Card: card}
		return r.targetErr
	}
	sub, err := r.opts.Sub(reg.Audience)
	if err != nil {
		r.targetErr = err
		return err
	}
	r.reg, r.sub = reg, sub
	r.bound = r.opts.Config.Bind(*reg, r.opts.Signer.Ahead(reg.Audience, sub))
	return nil
}

// allowed is the origin rule of the run: the Brand's origin (the card URL
// asked for, and the other Brand's when one is named) and the origins of the registered Providers; once the card is
// known, only the Brand's and its Provider's.
func (r *runner) allowed(origin string) bool {
	if origin == originOf(r.opts.CardURL) || (r.opts.OtherCardURL != "" && origin == originOf(r.opts.OtherCardURL)) {
		return true
	}
	if r.reg != nil {
		return origin == originOf(r.reg.URL)
	}
	for _, p := range r.opts.Config.Providers {
		if origin == originOf(p.URL) {
			return true
		}
	}
	return false
}
