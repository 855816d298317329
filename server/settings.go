package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/pact-cli/pact/errs"
	"github.com/pact-cli/pact/httpx"
	"github.com/pact-cli/pact/store/postgres"
)

// Settings configure `pact serve`. Each comes from a flag, else an
// environment variable, else the config file, else its default (Resolve).
// The names, as `pact serve --help` lists them:
//
//	flag                 environment                    config file key     default
//	--issuer URL         PACT_SERVE_ISSUER              issuer              the profile's issuer
//	--addr HOST:PORT     PACT_SERVE_ADDR                addr                127.0.0.1:8080
//	--database URL|PATH  PACT_DATABASE_URL              database            {data}/profiles/NAME/serve.db
//	--tls-cert FILE      PACT_SERVE_TLS_CERT            tls_cert            none (plain HTTP, loopback only)
//	--tls-key FILE       PACT_SERVE_TLS_KEY             tls_key             none
//	--rate-limit N       PACT_SERVE_RATE_LIMIT          rate_limit          600 requests per device per minute
//	--shutdown-timeout D PACT_SERVE_SHUTDOWN_TIMEOUT    shutdown_timeout    30s
//	--name TEXT          PACT_SERVE_NAME                name                "pact" (client_name of the metadata document)
//	--config FILE        PACT_SERVE_CONFIG              -                   {config}/serve.json when it exists
type Settings struct {
	Issuer          string   `json:"issuer,omitempty"`
	Addr            string   `json:"addr,omitempty"`
	Database        string   `json:"database,omitempty"`
	TLSCert         string   `json:"tls_cert,omitempty"`
	TLSKey          string   `json:"tls_key,omitempty"`
	RateLimit       int      `json:"rate_limit,omitempty"`
	ShutdownTimeout Duration `json:"shutdown_timeout,omitempty"`
	Name            string   `json:"name,omitempty"`
}

// Defaults of the settings that have one; Database's depends on the profile.
const (
	DefaultAddr            = "127.0.0.1:8080"
	DefaultRateLimit       = 600 // requests per device per minute
	DefaultShutdownTimeout = 30 * time.Second
	DefaultName            = "pact"
)

// Env names the environment variable of each setting.
var Env = struct {
	Issuer, Addr, Database, TLSCert, TLSKey, RateLimit, ShutdownTimeout, Name, Config string
}{
	"PACT_SERVE_ISSUER", "PACT_SERVE_ADDR", "PACT_DATABASE_URL", "PACT_SERVE_TLS_CERT", "PACT_SERVE_TLS_KEY",
	"PACT_SERVE_RATE_LIMIT", "PACT_SERVE_SHUTDOWN_TIMEOUT", "PACT_SERVE_NAME", "PACT_SERVE_CONFIG",
}

// Duration is a time.Duration written as Go writes it ("30s", "2m").
type Duration time.Duration

// UnmarshalJSON reads "30s".
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errors.New(`a duration is a string such as "30s"`)
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return fmt.Errorf("%q is not a duration such as \"30s\"", s)
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes "30s".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// Over returns s with every setting s leaves empty taken from lower.
func (s Settings) Over(lower Settings) Settings {
	pick := func(a, b string) string {
		if a != "" {
			return a
		}
		return b
	}
	out := Settings{
		Issuer: pick(s.Issuer, lower.Issuer), Addr: pick(s.Addr, lower.Addr), Database: pick(s.Database, lower.Database),
		TLSCert: pick(s.TLSCert, lower.TLSCert), TLSKey: pick(s.TLSKey, lower.TLSKey), Name: pick(s.Name, lower.Name),
		RateLimit: s.RateLimit, ShutdownTimeout: s.ShutdownTimeout,
	}
	if out.RateLimit == 0 {
		out.RateLimit = lower.RateLimit
	}
	if out.ShutdownTimeout == 0 {
		out.ShutdownTimeout = lower.ShutdownTimeout
	}
	return out
}

// FromEnv reads the settings from the environment (getenv); a value that
// does not parse is an error naming the variable.
func FromEnv(getenv func(string) string) (Settings, error) {
	s := Settings{
		Issuer: getenv(Env.Issuer), Addr: getenv(Env.Addr), Database: getenv(Env.Database),
		TLSCert: getenv(Env.TLSCert), TLSKey: getenv(Env.TLSKey), Name: getenv(Env.Name),
	}
	if v := getenv(Env.RateLimit); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return s, fmt.Errorf("%s=%q: give a number of requests per minute, such as 600", Env.RateLimit, v)
		}
		s.RateLimit = n
	}
	if v := getenv(Env.ShutdownTimeout); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return s, fmt.Errorf("%s=%q: give a duration such as 30s", Env.ShutdownTimeout, v)
		}
		s.ShutdownTimeout = Duration(d)
	}
	return s, nil
}

// LoadFile reads a config file: one JSON object of the keys of Settings
// (unknown keys are an error, so a typo does not go unnoticed). A missing
// file is an empty Settings when optional, else an error.
func LoadFile(path string, optional bool) (Settings, error) {
	var s Settings
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && optional {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("reading the config file: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return s, fmt.Errorf("config file %s: %v (known keys: %s)", path, err, FileKeys)
	}
	if s.RateLimit < 0 {
		return s, fmt.Errorf("config file %s: rate_limit must be a positive number of requests per minute", path)
	}
	return s, nil
}

// FileKeys lists the config file's keys, for messages and help.
const FileKeys = "issuer, addr, database, tls_cert, tls_key, rate_limit, shutdown_timeout, name"

// WithDefaults fills what is still empty with the defaults (database:
// defaultDB).
func (s Settings) WithDefaults(defaultDB string) Settings {
	return s.Over(Settings{Addr: DefaultAddr, Database: defaultDB, RateLimit: DefaultRateLimit,
		ShutdownTimeout: Duration(DefaultShutdownTimeout), Name: DefaultName})
}

// ErrPlainHTTP is returned by CheckListen for plain HTTP on an address
// that is not loopback.
var ErrPlainHTTP = errors.New("plain HTTP on a non-loopback address")

// CheckListen checks the listening settings: both TLS files or neither,
// an address HOST:PORT, and plain HTTP (no TLS files) only on a loopback
// host (127.0.0.0/8, ::1, localhost), where a reverse proxy on the same
// machine terminates TLS; every other address, all interfaces included
// (":8080", "0.0.0.0:8080"), needs --tls-cert and --tls-key. Each error is
// one sentence naming the fix.
func (s Settings) CheckListen() error {
	if (s.TLSCert == "") != (s.TLSKey == "") {
		return errors.New("give both --tls-cert and --tls-key (a certificate and its private key, PEM files), or neither")
	}
	host, port, err := net.SplitHostPort(s.Addr)
	if err != nil || port == "" {
		return fmt.Errorf("--addr %q is not HOST:PORT (for example 127.0.0.1:8080)", s.Addr)
	}
	if s.TLSCert == "" && !httpx.IsLoopback(host) {
		shown := s.Addr
		if host == "" {
			shown = s.Addr + " (every interface)"
		}
		return errs.New(fmt.Sprintf("refusing to serve plain HTTP on %s, which is not a loopback address: give --tls-cert and --tls-key, or listen on 127.0.0.1 behind a reverse proxy that terminates TLS", shown), ErrPlainHTTP)
	}
	return nil
}

// Database is a parsed --database value.
type Database struct {
	Kind string // "sqlite" or "postgres"
	Path string // the SQLite file
	URL  string // the PostgreSQL URL (with its password: never show it; RedactDatabase)
}

// ParseDatabase reads a --database value: a PostgreSQL URL (postgres://,
// postgresql://: what several replicas share), else a file path,
// "sqlite:PATH" or "file:PATH" for SQLite (one process).
func ParseDatabase(raw string) (Database, error) {
	switch {
	case raw == "":
		return Database{}, errors.New("no database given (--database or " + Env.Database + ")")
	case postgres.IsURL(raw):
		return Database{Kind: "postgres", URL: raw}, nil
	case strings.HasPrefix(raw, "sqlite:"):
		return Database{Kind: "sqlite", Path: strings.TrimPrefix(strings.TrimPrefix(raw, "sqlite:"), "//")}, nil
	case strings.HasPrefix(raw, "file:"):
		return Database{Kind: "sqlite", Path: strings.TrimPrefix(strings.TrimPrefix(raw, "file:"), "//")}, nil
	case strings.Contains(raw, "://"):
		return Database{}, fmt.Errorf("%s: unknown database kind; give a postgres:// URL, or a file path for SQLite", RedactDatabase(raw))
	}
	return Database{Kind: "sqlite", Path: raw}, nil
}

// RedactDatabase shows a database URL without its password, for messages
// and logs.
func RedactDatabase(raw string) string { return postgres.Redact(raw) }
