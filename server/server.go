// Package server is `pact serve`: one personal agent for many Users and
// their devices, over HTTP. It holds the routing and the plumbing every
// route shares, and no protocol logic:
//
//   - the live identity (identity.go): OIDC discovery, the JWKS
//     (Cache-Control: max-age=300) and the Client ID Metadata Document at
//     the issuer URL (PACT §3.1, §5.3);
//   - Users, devices and enrolment (enrol.go, devices.go, admin.go): one-time
//     codes, devices authenticated on every call by a device token
//     (package devicetoken; auth.go), revocation seen at once, replayed
//     token ids refused, all decided in the database (store.ServerState);
//   - the API's plumbing (server.go, errors.go, middleware.go): /v1 routes,
//     one error envelope, X-Request-Id on every answer and log line, body
//     size limits, per-device rate limits counted in the database, the
//     OpenAPI 3.1 document (openapi.go);
//   - operations (ops.go): /healthz, /readyz, Prometheus metrics, JSON
//     logs without secrets or message text, graceful stop.
//
// Turns (send, stream, login, grants, receipts, conversations, search,
// card) are mounted on the same Server by Handle, over the in-process
// agent of each User (agent.go: UserEnv, the construction point).
package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pact-cli/pact/httpx"
	"github.com/pact-cli/pact/seal"
	"github.com/pact-cli/pact/serverapi"
	"github.com/pact-cli/pact/store"
)

// DefaultMaxBody is the body limit of a route that sets none (1 MiB).
const DefaultMaxBody int64 = 1 << 20

// HandlerFunc answers one request; an error it returns is written as the
// error envelope (an *Error as it says, anything else as a 500).
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// Route is one route of the server.
type Route struct {
	Method  string // GET, POST, DELETE…
	Pattern string // a net/http pattern path: "/v1/devices/{id}"
	// Auth: the request must carry a valid device token; the handler finds
	// the caller with CallerFrom. Rate limits apply to these routes.
	Auth bool
	// MaxBody is the largest request body taken (0 = DefaultMaxBody).
	MaxBody int64
	Handler HandlerFunc
}

// Options configure New.
type Options struct {
	Settings Settings // resolved (Resolve, WithDefaults); CheckListen passed
	Identity *Identity
	Store    store.ServerBackend
	Logger   *slog.Logger // JSON lines; nil = discard
	Version  string       // pact's version
	Now      func() time.Time
	// HTTP is the client of every outbound request (Providers, Brands);
	// nil = an httpx client.
	HTTP *http.Client
	// DataKeys seal the tokens kept in the database (the server profile's,
	// conversation.DataKeys); CheckShared checks that replicas share them.
	DataKeys seal.Sealer
}

// Server is a running or ready `pact serve`.
type Server struct {
	opts     Options
	log      *slog.Logger
	now      func() time.Time
	metrics  *Metrics
	mux      *http.ServeMux
	mu       sync.Mutex
	routes   map[string]map[string]Route // pattern → method → route
	order    []string
	draining atomic.Bool
	stopping chan struct{}
	stopOnce sync.Once
	replica  string
}

// New makes the server and mounts its own routes: identity, operations,
// enrolment and devices.
func New(opts Options) (*Server, error) {
	if opts.Identity == nil || opts.Store == nil {
		return nil, errors.New("server: an identity and a store are needed")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.HTTP == nil {
		opts.HTTP = httpx.NewClient(httpx.Options{UserAgent: "pact/" + opts.Version})
	}
	if opts.Settings.RateLimit == 0 {
		opts.Settings.RateLimit = DefaultRateLimit
	}
	if opts.Settings.Name == "" {
		opts.Settings.Name = DefaultName
	}
	s := &Server{opts: opts, log: opts.Logger, now: opts.Now, metrics: newMetrics(), mux: http.NewServeMux(),
		routes: map[string]map[string]Route{}, stopping: make(chan struct{}), replica: newReplicaID()}
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, NotFound("route"))
	})
	s.mountIdentity()
	s.mountOps()
	s.mountDevices()
	return s, nil
}

// Identity is the server's identity.
func (s *Server) Identity() *Identity { return s.opts.Identity }

// Store is the server's database.
func (s *Server) Store() store.ServerBackend { return s.opts.Store }

// Metrics are the server's Prometheus collectors.
func (s *Server) Metrics() *Metrics { return s.metrics }

// Logger is the server's JSON logger.
func (s *Server) Logger() *slog.Logger { return s.log }

// Stopping is closed when the server begins to stop (SIGTERM): a long
// answer (a stream) finishes its turn and ends; new requests are refused.
func (s *Server) Stopping() <-chan struct{} { return s.stopping }

// Handle mounts a route. Each (method, pattern) once; a pattern may take
// several methods (others get 405 with Allow). The request passes, in
// order: method check, body limit, device authentication and rate limit
// (Auth), then h; the request id, the access log line and the metrics
// wrap them all (Handler).
func (s *Server) Handle(rt Route) {
	s.mu.Lock()
	defer s.mu.Unlock()
	byMethod, seen := s.routes[rt.Pattern]
	if !seen {
		byMethod = map[string]Route{}
		s.routes[rt.Pattern] = byMethod
		s.order = append(s.order, rt.Pattern)
		pattern := rt.Pattern
		s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) { s.dispatch(pattern, w, r) })
	}
	if _, dup := byMethod[rt.Method]; dup {
		panic(fmt.Sprintf("server: %s %s mounted twice", rt.Method, rt.Pattern))
	}
	byMethod[rt.Method] = rt
}

// Routes lists the mounted routes, by pattern then method.
func (s *Server) Routes() []Route {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Route
	for _, p := range s.order {
		ms := make([]string, 0, len(s.routes[p]))
		for m := range s.routes[p] {
			ms = append(ms, m)
		}
		sort.Strings(ms)
		for _, m := range ms {
			out = append(out, s.routes[p][m])
		}
	}
	return out
}

func (s *Server) dispatch(pattern string, w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	byMethod := s.routes[pattern]
	rt, ok := byMethod[r.Method]
	if !ok && r.Method == http.MethodHead {
		rt, ok = byMethod[http.MethodGet]
	}
	var allow []string
	if !ok {
		for m := range byMethod {
			allow = append(allow, m)
		}
	}
	s.mu.Unlock()
	if rec, isRec := w.(*recorder); isRec {
		rec.route = pattern
	}
	if !ok {
		sort.Strings(allow)
		for _, m := range allow {
			w.Header().Add("Allow", m)
		}
		s.writeError(w, r, &Error{Status: http.StatusMethodNotAllowed, Reason: serverapi.ReasonNotFound, Message: r.Method + " is not a method of this route"})
		return
	}
	limit := rt.MaxBody
	if limit == 0 {
		limit = DefaultMaxBody
	}
	if r.ContentLength > limit {
		s.writeError(w, r, tooLarge(limit))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	if rt.Auth {
		c, err := s.authenticate(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if rec, isRec := w.(*recorder); isRec {
			rec.caller = c
		}
		r = r.WithContext(withCaller(r.Context(), c))
	}
	if err := rt.Handler(w, r); err != nil {
		s.writeError(w, r, err)
	}
}

// Handler is the whole server: request id, access log and metrics, panic
// recovery, then the routes.
func (s *Server) Handler() http.Handler {
	return s.wrap(s.mux)
}

// Serve answers on ln until ctx ends, then stops gracefully: /readyz
// answers 503 at once, new connections are refused, requests in flight
// get up to the shutdown timeout to finish (Stopping is closed so that
// streams end their turn), and whatever is still running after it is cut.
// With TLS files in the settings it serves HTTPS (TLS 1.2 or later).
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	st := s.opts.Settings
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	if st.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(st.TLSCert, st.TLSKey)
		if err != nil {
			return fmt.Errorf("--tls-cert %s / --tls-key %s: %v", st.TLSCert, st.TLSKey, err)
		}
		srv.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
		ln = tls.NewListener(ln, srv.TLSConfig)
	}
	purgeCtx, stopPurge := context.WithCancel(ctx)
	defer stopPurge()
	go s.purgeLoop(purgeCtx)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.draining.Store(true)
	s.stopOnce.Do(func() { close(s.stopping) })
	timeout := time.Duration(st.ShutdownTimeout)
	if timeout <= 0 {
		timeout = DefaultShutdownTimeout
	}
	s.log.Info("stopping", slog.String("shutdown_timeout", timeout.String()))
	sctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	err := srv.Shutdown(sctx)
	if err != nil {
		s.log.Warn("requests still running at the shutdown timeout were cut", slog.String("error", err.Error()))
		srv.Close()
	}
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	s.log.Info("stopped")
	return nil
}

// purgeLoop forgets expired token ids and old rate-limit windows once a
// minute.
func (s *Server) purgeLoop(ctx context.Context) {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			now := s.now()
			if err := s.opts.Store.PurgeServer(ctx, now, now.Add(-2*rateWindow)); err != nil && ctx.Err() == nil {
				s.log.Warn("purge failed", slog.String("error", err.Error()))
			}
		}
	}
}
