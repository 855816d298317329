package server

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/pact-cli/pact/serverapi"
)

// mountIdentity serves the server's identity where Providers look for it
// (PACT §3.1, §5.3): OIDC discovery at {issuer}/.well-known/openid-configuration,
// the JWKS at the jwks_uri (both with Cache-Control: public, max-age=300,
// jwks.Handler), and the Client ID Metadata Document at the issuer URL.
func (s *Server) mountIdentity() {
	id := s.opts.Identity
	keys := id.keysHandler()
	serveKeys := func(w http.ResponseWriter, r *http.Request) error { keys.ServeHTTP(w, r); return nil }
	seen := map[string]bool{}
	for _, p := range []string{"/.well-known/openid-configuration", "/.well-known/jwks.json", pathOf(discoveryURL(id.Issuer())), pathOf(id.JWKSURI())} {
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		s.Handle(Route{Method: http.MethodGet, Pattern: p, Handler: serveKeys})
	}
	pattern := id.MetadataPath()
	if pattern == "/" {
		pattern = "/{$}"
	}
	s.Handle(Route{Method: http.MethodGet, Pattern: pattern, Handler: id.metadataHandler(s.opts.Settings.Name, s.opts.Version)})
}

// Health is the body of /healthz and /readyz.
type Health struct {
	Status string            `json:"status"` // ok, ready, not ready
	Checks map[string]string `json:"checks,omitempty"`
}

// mountOps serves /healthz (the process answers), /readyz (it can serve:
// not stopping, the database answers with the current schema, the active
// key loads), /metrics (Prometheus), /v1/openapi.json and /v1/info.
func (s *Server) mountOps() {
	s.Handle(Route{Method: http.MethodGet, Pattern: serverapi.PathHealth, Handler: func(w http.ResponseWriter, r *http.Request) error {
		writeJSON(w, http.StatusOK, Health{Status: "ok"})
		return nil
	}})
	s.Handle(Route{Method: http.MethodGet, Pattern: serverapi.PathReady, Handler: s.ready})
	metrics := s.metrics.handler()
	s.Handle(Route{Method: http.MethodGet, Pattern: serverapi.PathMetrics, Handler: func(w http.ResponseWriter, r *http.Request) error {
		metrics.ServeHTTP(w, r)
		return nil
	}})
	s.Handle(Route{Method: http.MethodGet, Pattern: serverapi.PathOpenAPI, Handler: func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Content-Type", serverapi.ContentTypeJSON)
		w.Write(OpenAPI)
		return nil
	}})
	s.Handle(Route{Method: http.MethodGet, Pattern: serverapi.PathInfo, Handler: func(w http.ResponseWriter, r *http.Request) error {
		writeJSON(w, http.StatusOK, serverapi.Info{Issuer: s.opts.Identity.Issuer(), Name: s.opts.Settings.Name, Version: s.opts.Version, API: "v1"})
		return nil
	}})
}

// ready answers /readyz: 200 when every check passes, else 503 with the
// check that failed ("failing"; the detail goes to the log, not to the
// caller).
func (s *Server) ready(w http.ResponseWriter, r *http.Request) error {
	checks := map[string]string{"database": "ok", "key": "ok", "accepting": "ok"}
	ok := true
	if s.draining.Load() {
		checks["accepting"], ok = "stopping", false
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.opts.Store.ServerReady(ctx); err != nil {
		checks["database"], ok = "failing", false
		s.log.Warn("readyz: database", slog.String("request_id", RequestID(r.Context())), slog.String("error", err.Error()))
	}
	if _, err := s.opts.Identity.Signer(); err != nil {
		checks["key"], ok = "failing", false
		s.log.Warn("readyz: key", slog.String("request_id", RequestID(r.Context())), slog.String("error", err.Error()))
	}
	if !ok {
		writeJSON(w, http.StatusServiceUnavailable, Health{Status: "not ready", Checks: checks})
		return nil
	}
	writeJSON(w, http.StatusOK, Health{Status: "ready", Checks: checks})
	return nil
}
