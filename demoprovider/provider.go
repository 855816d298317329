package demoprovider

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pact-cli/pact/httpx"
)

// Policy is the Provider's personal-agent admission policy (§3.1).
type Policy int

const (
	// Open admits any personal agent whose issuer serves OIDC discovery
	// ({iss}/.well-known/openid-configuration → jwks_uri); registrations in
	// Config.Registered take precedence (and may disable an issuer).
	Open Policy = iota
	// AllowList admits only the issuers in Config.Registered.
	AllowList
)

// Registration is a personal agent known to the Provider (§3.1): its issuer
// (exact string match against iss), the URL of its JWKS, and whether it is
// disabled (its requests then get 401).
type Registration struct {
	Issuer   string
	JWKSURI  string
	Disabled bool
}

// Config configures Start. The zero value is a spec-default Open Provider on
// 127.0.0.1 with audience "pact-demo".
type Config struct {
	// Audience is the aud this Provider assigns to personal agents (§3.1);
	// default "pact-demo".
	Audience string
	// Policy is Open (default) or AllowList.
	Policy Policy
	// Registered are the known personal agents. AllowList: only these; Open:
	// these take precedence over discovery.
	Registered []Registration
	// HTTPClient fetches PA JWKS and OIDC discovery documents; it must allow
	// plain http to loopback. nil = httpx.NewClient with a 10 s timeout.
	HTTPClient *http.Client
	// Now is the clock; nil = time.Now.
	Now func() time.Time
	// Addr is the Provider's listen address; "" = 127.0.0.1:0.
	Addr string
	// SiteAddrs are the listen addresses of the Brand sites, in the order
	// of Brands (see BrandCount); a missing or "" entry = 127.0.0.1:0.
	// Fixed addresses give the same brand URLs on every start.
	SiteAddrs []string

	// DeviceCodeTTL is the device_code lifetime returned as expires_in
	// (RFC 8628 §3.2); 0 = 600 s.
	DeviceCodeTTL time.Duration
	// PollInterval is the minimum token polling interval returned as
	// interval (RFC 8628 §3.2); 0 = 5 s. Tests use 1 s.
	PollInterval time.Duration

	// Test knobs; the zero values give the spec's default behaviour.

	// RateLimit, when > 0, allows at most this many message:send per
	// second per (personal agent, sub); more get 429 with Retry-After: 1.
	RateLimit int
	// FailReplies, when > 0, makes the first FailReplies turns that
	// continue a context (request has a contextId) store their reply (§4.3)
	// but answer 500 INTERNAL, so a client's retry with the same messageId
	// and contextId must get the stored reply without a second agent run.
	FailReplies int
	// AgentDelay delays each agent run (to exercise in-flight duplicates).
	AgentDelay time.Duration
	// AgentGate, when non-nil, holds each agent run (after AgentDelay)
	// until a value is received from it or it is closed, so a test can
	// keep a reply on its way for as long as it needs, on any machine.
	AgentGate <-chan struct{}
	// StreamWordDelay is the pause between the words of a streamed reply;
	// 0 = DefaultStreamWordDelay, < 0 = none.
	StreamWordDelay time.Duration
	// RogueCard makes each brand site serve its real signed card once,
	// then a card signed by another key (also published at the site), so
	// the pin warning of `pact demo serve --rogue-card` can be seen.
	RogueCard bool
	// Faults are deliberate mistakes to make, by name (see Faults; for
	// `pact provider check`); none = a correct Provider.
	Faults []string
}

// Brand describes one Brand hosted by the demo Provider.
type Brand struct {
	ID           string // Provider-assigned brandId, e.g. "01JEXAMPLECO"
	Name         string // e.g. "Example Co."
	CardName     string // the name its Agent Card carries, e.g. "Example Co. Support"
	SiteURL      string // the Brand's own origin (its "domain"), e.g. http://127.0.0.1:41235; serves the card signed by the Brand
	CardURL      string // {provider}/a2a/{brandId}/.well-known/agent-card.json (§2.1), the Provider's unsigned copy
	InterfaceURL string // {provider}/a2a/{brandId}
	Delegation   bool   // the card declares delegated authority (§5.1)
}

// Server is a running demo Provider with its Brand sites.
type Server struct {
	cfg      Config
	audience string
	now      func() time.Time
	url      string
	started  time.Time // when Start made the cards (their Last-Modified)
	verifier *paVerifier
	brands   []*brandDef
	byID     map[string]*brandDef
	sites    map[string]string // brandId → site origin
	as       *authServer

	httpSrv  *http.Server
	siteSrvs []*http.Server
	unused   unusedConns
	done     chan struct{}

	mu          sync.Mutex
	contexts    map[string]*conversation
	firsts      map[firstKey]*conversation // see claimTurn
	runs        int
	failReplies int
	rate        map[paIdentity]*rateWindow
	// streams and streamTasks are the streamed replies (stream.go), by
	// messageId and by task id.
	streams     map[streamKey]*streamTask
	streamTasks map[a2a.TaskID]*streamTask
	// siteCardHits counts card requests per brand site (RogueCard).
	siteCardHits map[string]int
	faults       faultSet // Config.Faults (faults.go)
	faultSends   int      // message:send requests seen (fault no-retry-after)

	closeOnce sync.Once
	closeErr  error
}

type rateWindow struct {
	start time.Time
	count int
}

// Start starts the Provider and one brand site per Brand, each on its own
// loopback listener, and returns once all are accepting connections. Close
// stops them; ctx only bounds start-up.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := &Server{
		cfg:         cfg,
		audience:    cfg.Audience,
		now:         cfg.Now,
		byID:        map[string]*brandDef{},
		sites:       map[string]string{},
		contexts:    map[string]*conversation{},
		firsts:      map[firstKey]*conversation{},
		failReplies: cfg.FailReplies,
		rate:        map[paIdentity]*rateWindow{},
		done:        make(chan struct{}),
	}
	if s.audience == "" {
		s.audience = "pact-demo"
	}
	var err error
	if s.faults, err = newFaultSet(cfg.Faults); err != nil {
		return nil, err
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.started = s.now().UTC()
	client := cfg.HTTPClient
	if client == nil {
		client = httpx.NewClient(httpx.Options{Timeout: 10 * time.Second})
	}
	reg := map[string]Registration{}
	for _, r := range cfg.Registered {
		reg[r.Issuer] = r
	}
	s.verifier = &paVerifier{
		audience:   s.audience,
		policy:     cfg.Policy,
		registered: reg,
		keys:       newKeySource(client, s.now),
		client:     client,
		now:        s.now,
		discovery:  map[string]discovered{},
		faults:     s.faults,
	}
	s.brands = newBrands()
	for _, b := range s.brands {
		s.byID[b.id] = b
	}

	addr := cfg.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, &ListenError{What: "the demo Provider", Addr: addr, Err: err}
	}
	s.url = "http://" + originHost(ln.Addr().(*net.TCPAddr))
	as, err := newAuthServer(s, cfg)
	if err != nil {
		ln.Close()
		return nil, err
	}
	s.as = as

	var siteLns []net.Listener
	for i, b := range s.brands {
		siteAddr := "127.0.0.1:0"
		if i < len(cfg.SiteAddrs) && cfg.SiteAddrs[i] != "" {
			siteAddr = cfg.SiteAddrs[i]
		}
		sl, err := lc.Listen(ctx, "tcp", siteAddr)
		if err != nil {
			ln.Close()
			for _, l := range siteLns {
				l.Close()
			}
			return nil, &ListenError{What: b.name + "'s site", Addr: siteAddr, Err: err}
		}
		siteLns = append(siteLns, sl)
		s.sites[b.id] = "http://" + sl.Addr().String()
	}

	s.httpSrv = &http.Server{Handler: http.HandlerFunc(s.serveProvider), ReadHeaderTimeout: 10 * time.Second}
	s.unused.watch(s.httpSrv)
	var wg sync.WaitGroup
	wg.Add(1 + len(siteLns))
	go func() { defer wg.Done(); _ = s.httpSrv.Serve(ln) }()
	for i, b := range s.brands {
		srv := &http.Server{Handler: s.siteHandler(b), ReadHeaderTimeout: 10 * time.Second}
		s.unused.watch(srv)
		s.siteSrvs = append(s.siteSrvs, srv)
		go func(l net.Listener) { defer wg.Done(); _ = srv.Serve(l) }(siteLns[i])
	}
	go func() { wg.Wait(); close(s.done) }()
	return s, nil
}

// ListenError is a listener Start could not open (most often: the port is
// taken).
type ListenError struct {
	What string // "the demo Provider" or "Example Co.'s site"
	Addr string // host:port
	Err  error
}

func (e *ListenError) Error() string {
	return fmt.Sprintf("demoprovider: %s cannot listen on %s: %v", e.What, e.Addr, e.Err)
}
func (e *ListenError) Unwrap() error { return e.Err }

// BrandCount is how many Brands (and so Brand sites) the demo Provider
// hosts.
func BrandCount() int { return len(newBrands()) }

// originHost renders a listen address as a host:port usable in URLs; an
// unspecified address (0.0.0.0, ::) is shown as 127.0.0.1.
func originHost(a *net.TCPAddr) string {
	if a.IP == nil || a.IP.IsUnspecified() {
		return fmt.Sprintf("127.0.0.1:%d", a.Port)
	}
	return (&net.TCPAddr{IP: a.IP, Port: a.Port}).String()
}

// URL is the Provider origin, e.g. "http://127.0.0.1:41234" (no trailing slash).
func (s *Server) URL() string { return s.url }

// Audience is the aud personal agents must put in their JWTs (§3.1).
func (s *Server) Audience() string { return s.audience }

// Brands lists the hosted Brands, Example Co. first.
func (s *Server) Brands() []Brand {
	out := make([]Brand, 0, len(s.brands))
	for _, b := range s.brands {
		out = append(out, Brand{
			ID:           b.id,
			Name:         b.name,
			CardName:     b.cardName(),
			SiteURL:      s.sites[b.id],
			CardURL:      s.interfaceURL(b) + "/.well-known/agent-card.json",
			InterfaceURL: s.interfaceURL(b),
			Delegation:   len(b.scopes) > 0,
		})
	}
	return out
}

// AgentRuns is how many times a Brand agent actually ran a turn (stored
// replies returned for repeated messageIds do not count, §4.3).
func (s *Server) AgentRuns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runs
}

// Close stops the Provider and the brand sites. It is safe to call more than
// once.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.unused.drop()
		errs := []error{s.httpSrv.Shutdown(ctx)}
		for _, srv := range s.siteSrvs {
			errs = append(errs, srv.Shutdown(ctx))
		}
		s.closeErr = errors.Join(errs...)
		<-s.done
	})
	return s.closeErr
}

func (s *Server) interfaceURL(b *brandDef) string { return s.url + "/a2a/" + b.id }

// route is a matched Provider route.
type route int

const (
	routeNone route = iota
	routeCard
	routeSend
	routeListTasks
	routeGetTask
	routeCancelTask
	routeASMetadata
	routeASJWKS
	routeDeviceAuthorization
	routeToken
	routeDevice
	routeCallback
	routeConsent
	// A2A operations this Provider answers with an error (see
	// conformance.go).
	routeStream
	routeSubscribe
	routeExtendedCard
	routePushConfig
)

// matchRoute maps the part of a path after /a2a/{brandId}/ to a route and
// the methods it allows. taskID is set for the tasks/{id} routes.
func matchRoute(rest string) (rt route, methods []string, taskID string) {
	get, post := []string{http.MethodGet}, []string{http.MethodPost}
	switch rest {
	case ".well-known/agent-card.json":
		return routeCard, get, ""
	case "message:send":
		return routeSend, post, ""
	case "tasks":
		return routeListTasks, get, ""
	case "oauth/.well-known/oauth-authorization-server":
		return routeASMetadata, get, ""
	case "oauth/jwks.json":
		return routeASJWKS, get, ""
	case "oauth/device_authorization":
		return routeDeviceAuthorization, post, ""
	case "oauth/token":
		return routeToken, post, ""
	case "oauth/device":
		return routeDevice, get, ""
	case "oauth/callback":
		return routeCallback, post, ""
	case "oauth/consent":
		return routeConsent, []string{http.MethodGet, http.MethodPost}, ""
	case "message:stream":
		return routeStream, post, ""
	case "extendedAgentCard":
		return routeExtendedCard, get, ""
	}
	if rt, methods, id := matchPushConfigRoute(rest); rt != routeNone {
		return rt, methods, id
	}
	if id, ok := strings.CutPrefix(rest, "tasks/"); ok && id != "" && !strings.Contains(id, "/") {
		if id, ok := strings.CutSuffix(id, ":cancel"); ok {
			if id == "" {
				return routeNone, nil, ""
			}
			return routeCancelTask, post, id
		}
		if id, ok := strings.CutSuffix(id, ":subscribe"); ok {
			if id == "" {
				return routeNone, nil, ""
			}
			return routeSubscribe, []string{http.MethodGet, http.MethodPost}, id
		}
		if strings.Contains(id, ":") {
			return routeNone, nil, ""
		}
		return routeGetTask, get, id
	}
	return routeNone, nil, ""
}

// allowHeader is the Allow of a 405 (RFC 9110 §10.2.1): the route's
// methods, and HEAD wherever GET is, since every GET route serves HEAD.
func allowHeader(methods []string) string {
	out := slices.Clone(methods)
	if slices.Contains(out, http.MethodGet) && !slices.Contains(out, http.MethodHead) {
		i := slices.Index(out, http.MethodGet)
		out = slices.Insert(out, i+1, http.MethodHead)
	}
	return strings.Join(out, ", ")
}

// serveProvider routes every Provider request. Routing happens before
// authentication (§2.2): an unknown Brand or route is 404, a known route
// with the wrong method 405, both with no A2A body.
func (s *Server) serveProvider(w http.ResponseWriter, r *http.Request) {
	w = s.faultWriter(w)
	if fw, ok := w.(*faultyWriter); ok {
		defer fw.finish()
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/a2a/")
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	brandID, rest, _ := strings.Cut(rest, "/")
	b, ok := s.byID[brandID]
	if !ok {
		if s.faultRoute(w, r, false, routeNone) {
			return
		}
		w.WriteHeader(http.StatusNotFound)
		return
	}
	rt, methods, taskID := matchRoute(rest)
	if s.faultRoute(w, r, true, rt) {
		return
	}
	if rt == routeNone {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	allowed := false
	for _, m := range methods {
		if r.Method == m || (m == http.MethodGet && r.Method == http.MethodHead) {
			allowed = true
		}
	}
	if !allowed {
		w.Header().Set("Allow", allowHeader(methods))
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	switch rt {
	case routeCard:
		s.serveCard(w, r, b)
		return
	case routeASMetadata:
		s.as.serveMetadata(w, r, b)
		return
	case routeASJWKS:
		s.as.serveJWKS(w, r)
		return
	case routeDevice:
		s.as.serveDevice(w, r, b)
		return
	case routeCallback:
		s.as.serveCallback(w, r, b)
		return
	case routeConsent:
		s.as.serveConsent(w, r, b)
		return
	}

	// A2A operations: the protocol version first (A2A 1.0 §3, see
	// checkA2AVersion).
	if isA2AOperation(rt) && !checkA2AVersion(w, r) {
		return
	}

	// Everything else carries a PA JWT, checked before the body is read
	// (§3.2, §3.4).
	id, err := s.verifier.verify(r.Context(), r)
	if err != nil && rt == routeDeviceAuthorization && s.fault("device-no-auth") && r.Header.Get("Authorization") == "" {
		id, err = paIdentity{Issuer: r.FormValue("client_id"), Sub: "anonymous"}, nil
	}
	if err != nil {
		writeUnauthorized(w, "")
		return
	}
	switch rt {
	case routeStream:
		if b.streaming {
			s.serveStream(w, r, b, id)
			return
		}
		s.serveUnsupported(w, rt, b)
	case routeSubscribe:
		if b.streaming {
			s.serveSubscribe(w, r, b, id, taskID)
			return
		}
		s.serveUnsupported(w, rt, b)
	case routeExtendedCard:
		if b.extendedCard {
			s.serveExtendedCard(w, r, b, id)
			return
		}
		s.serveUnsupported(w, rt, b)
	case routePushConfig:
		s.serveUnsupported(w, rt, b)
	case routeSend:
		s.serveSend(w, r, b, id)
	case routeListTasks:
		s.serveListTasks(w, r)
	case routeGetTask, routeCancelTask:
		writeA2AError(w, ReasonTaskNotFound, "Task "+taskID+" not found")
	case routeDeviceAuthorization:
		s.as.serveDeviceAuthorization(w, r, b, id)
	case routeToken:
		s.as.serveToken(w, r, b, id)
	}
}
