package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics are the server's Prometheus collectors, on a registry of its own
// (with the Go runtime's and the process's), served at /metrics. Labels
// are bounded: route patterns, methods, status codes, reasons; never an
// id, a name or a URL.
//
//	pact_http_requests_total{method,route,code}        requests answered
//	pact_http_request_duration_seconds{method,route}   their duration
//	pact_http_requests_in_flight                       requests being answered
//	pact_http_errors_total{reason}                     error answers by envelope reason
//	pact_device_auth_failures_total{why}               refused device tokens: no_token, refused, revoked, replay
//	pact_rate_limited_total                            requests refused by the per-device limit
//	pact_enrolments_total{outcome}                     enrolments: enrolled, refused
//	pact_turn_duration_seconds{outcome}                one turn, request to result (ObserveTurn)
//	pact_provider_errors_total{reason}                 Provider errors by A2A/OAuth reason (ProviderError)
//	pact_logins_total{outcome}                         device-flow logins (Login)
type Metrics struct {
	reg          *prometheus.Registry
	requests     *prometheus.CounterVec
	duration     *prometheus.HistogramVec
	inFlight     prometheus.Gauge
	errors       *prometheus.CounterVec
	authFailures *prometheus.CounterVec
	rateLimited  prometheus.Counter
	enrolments   *prometheus.CounterVec
	turns        *prometheus.HistogramVec
	provider     *prometheus.CounterVec
	logins       *prometheus.CounterVec
}

func newMetrics() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pact_http_requests_total",
			Help: "HTTP requests answered, by method, route pattern and status code."}, []string{"method", "route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "pact_http_request_duration_seconds",
			Help: "Time to answer an HTTP request, by method and route pattern.", Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16)},
			[]string{"method", "route"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{Name: "pact_http_requests_in_flight", Help: "HTTP requests being answered."}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pact_http_errors_total",
			Help: "Error answers, by the reason of the error envelope."}, []string{"reason"}),
		authFailures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pact_device_auth_failures_total",
			Help: "Device tokens refused: no_token, refused, revoked, replay."}, []string{"why"}),
		rateLimited: prometheus.NewCounter(prometheus.CounterOpts{Name: "pact_rate_limited_total",
			Help: "Requests refused by the per-device rate limit."}),
		enrolments: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pact_enrolments_total",
			Help: "Device enrolments: enrolled, refused."}, []string{"outcome"}),
		turns: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "pact_turn_duration_seconds",
			Help: "One turn with a Brand, from request to result, by outcome.", Buckets: prometheus.ExponentialBuckets(0.005, 2, 14)},
			[]string{"outcome"}),
		provider: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pact_provider_errors_total",
			Help: "Errors answered by Providers, by A2A or OAuth reason."}, []string{"reason"}),
		logins: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pact_logins_total",
			Help: "Device-flow logins with Brands, by outcome."}, []string{"outcome"}),
	}
	m.reg.MustRegister(m.requests, m.duration, m.inFlight, m.errors, m.authFailures, m.rateLimited, m.enrolments,
		m.turns, m.provider, m.logins,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *Metrics) observe(method, route string, status int, reason string, d time.Duration) {
	m.requests.WithLabelValues(method, route, strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(method, route).Observe(d.Seconds())
	if reason != "" {
		m.errors.WithLabelValues(reason).Inc()
	}
}

// ObserveTurn records one turn's duration; outcome is a small fixed word
// ("replied", "step_up", "error"…).
func (m *Metrics) ObserveTurn(outcome string, d time.Duration) {
	m.turns.WithLabelValues(outcome).Observe(d.Seconds())
}

// ProviderError counts one error a Provider answered, by its reason
// (a2aclient's reasons, OAuth error codes in upper case).
func (m *Metrics) ProviderError(reason string) { m.provider.WithLabelValues(reason).Inc() }

// Login counts one device-flow login by outcome ("granted", "denied",
// "expired"…).
func (m *Metrics) Login(outcome string) { m.logins.WithLabelValues(outcome).Inc() }

// Registry is the registry /metrics serves (tests read it).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

func (m *Metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}
