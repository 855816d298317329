// Package secrets stores pact's secrets: private signing keys, the
// pairwise-sub secret, delegation access and refresh tokens.
//
// Two backends, chosen explicitly with PACT_KEYRING (never by silent
// fallback):
//
//   - "os" (default): the OS keyring through go-keyring (Secret Service on
//     Linux, Keychain on macOS, Credential Manager on Windows). Every call is
//     bounded by a timeout because a D-Bus service can hang.
//   - "file": one JSON file, mode 0600, for headless machines.
//
// Values are stored compactly, one entry per secret, so they fit the
// platforms' size limits (about 2.5 KB on Windows). A larger value (a big
// delegation token) is split across entries transparently in the OS
// keyring (see chunk.go); the file backend stores it whole. Both refuse a
// value over MaxTotal (64 KiB), so the limit does not depend on the backend.
package secrets

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/zalando/go-keyring"

	"github.com/pact-cli/pact/store"
)

// Service is the keyring service name of every entry pact writes.
const Service = "pact"

// MaxValue is the largest value kept in one OS keyring entry (Windows
// Credential Manager holds about 2.5 KB per secret); larger values are
// split into chunks of ChunkSize, up to MaxTotal.
const MaxValue = 2400

// ErrNotFound means no secret is stored under that key.
var ErrNotFound = errors.New("secret not found")

// ErrUnavailable means the backend did not answer or refused; its message
// names PACT_KEYRING=file as the way out.
var ErrUnavailable = errors.New("keyring unavailable")

// Store is a secret store. Keys are short paths such as "default/key/KID".
type Store interface {
	Get(key string) (string, error) // ErrNotFound when absent
	Set(key, value string) error
	Delete(key string) error // absent keys are not an error
	Kind() string            // "os" or "file"
	Where() string           // a human description of where secrets live
}

// Open returns the backend named by kind ("" or "os", or "file"). dataDir is
// where the file backend keeps secrets.json. timeout bounds each OS keyring
// call (0 = 5 s).
func Open(kind, dataDir string, timeout time.Duration) (Store, error) {
	switch kind {
	case "", "os":
		if timeout == 0 {
			timeout = 5 * time.Second
		}
		return &osStore{timeout: timeout}, nil
	case "file":
		return &fileStore{path: filepath.Join(dataDir, "secrets.json")}, nil
	}
	return nil, fmt.Errorf("PACT_KEYRING=%q: use \"os\" or \"file\"", kind)
}

// FromEnv opens the backend PACT_KEYRING names.
func FromEnv(dataDir string) (Store, error) {
	return Open(os.Getenv("PACT_KEYRING"), dataDir, 0)
}

type osStore struct{ timeout time.Duration }

func (s *osStore) Kind() string  { return "os" }
func (s *osStore) Where() string { return "the OS keyring (service \"" + Service + "\")" }

// call runs fn with the timeout; go-keyring has no context support.
func (s *osStore) call(op, key string, fn func() error) error {
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		if err == nil || errors.Is(err, keyring.ErrNotFound) {
			return err
		}
		if errors.Is(err, keyring.ErrSetDataTooBig) {
			return fmt.Errorf("OS keyring refused %s of %q: value too large for this platform's keyring", op, key)
		}
		return fmt.Errorf("%w: %s %q failed: %v. Is a keyring running and unlocked? "+
			"On a headless machine set PACT_KEYRING=file to keep secrets in a 0600 file instead", ErrUnavailable, op, key, oneLine(err))
	case <-time.After(s.timeout):
		return fmt.Errorf("%w: the OS keyring did not answer within %s (%s %q). "+
			"Is it locked? Unlock it, or set PACT_KEYRING=file to keep secrets in a 0600 file instead", ErrUnavailable, s.timeout, op, key)
	}
}

func (s *osStore) getOne(key string) (string, error) {
	var v string
	err := s.call("reading", key, func() (err error) { v, err = keyring.Get(Service, key); return })
	if errors.Is(err, keyring.ErrNotFound) {
		return "", fmt.Errorf("%w: %s", ErrNotFound, key)
	}
	return v, err
}

func (s *osStore) setOne(key, value string) error {
	return s.call("writing", key, func() error { return keyring.Set(Service, key, value) })
}

func (s *osStore) deleteOne(key string) error {
	err := s.call("deleting", key, func() error { return keyring.Delete(Service, key) })
	if errors.Is(err, keyring.ErrNotFound) {
		return nil
	}
	return err
}

type fileStore struct{ path string }

func (s *fileStore) Kind() string  { return "file" }
func (s *fileStore) Where() string { return "the file " + s.path + " (mode 0600)" }

// Path is the secrets file (file backend).
func (s *fileStore) Path() string { return s.path }

func (s *fileStore) Get(key string) (string, error) {
	var m map[string]string
	if _, err := store.ReadJSON(s.path, &m); err != nil {
		return "", err
	}
	v, ok := m[key]
	if !ok {
		return "", fmt.Errorf("%w: %s", ErrNotFound, key)
	}
	return v, nil
}

func (s *fileStore) Set(key, value string) error {
	if err := CheckSize(key, value); err != nil { // the OS keyring's limit too
		return err
	}
	return store.Update(s.path, 0o600, func(m *map[string]string) error {
		if *m == nil {
			*m = map[string]string{}
		}
		(*m)[key] = value
		return nil
	})
}

func (s *fileStore) Delete(key string) error {
	return store.Update(s.path, 0o600, func(m *map[string]string) error {
		delete(*m, key)
		return nil
	})
}

// Keys lists the keys under prefix (file backend only; used by tests).
func (s *fileStore) Keys(prefix string) []string {
	var m map[string]string
	store.ReadJSON(s.path, &m)
	var out []string
	for k := range m {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
