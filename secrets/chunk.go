package secrets

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Large values in the OS keyring (issue 9: a delegation token larger than a
// keyring's per-item limit must not fail after the User approved).
//
// A value of at most MaxValue bytes is one entry, as before. A larger one
// is split into entries "KEY#1", "KEY#2", … of at most ChunkSize bytes, and
// the entry KEY holds a manifest "pact-chunks:v1:N:SHA256HEX". Get joins the
// chunks and checks the digest, so a half-written value is never returned
// as valid. The chunks are written before the manifest, and chunks of an
// older, longer value are deleted after it. Every platform pact supports
// fits ChunkSize in one entry (Windows ~2.5 KB, macOS's 4 KB command line
// with base64, Secret Service without a practical limit).
const (
	// ChunkSize is the size of each chunk of a split value (bytes).
	ChunkSize = 2000
	// MaxTotal is the largest value any backend stores (64 KiB): the OS
	// keyring (split into chunks) and the file alike, so a secret that one
	// keyring holds every other holds too (CheckSize).
	MaxTotal = 64 << 10
)

// ErrTooLarge matches every *TooLargeError.
var ErrTooLarge = errors.New("secret too large")

// TooLargeError is a value over MaxTotal, refused by every backend before
// anything is written.
type TooLargeError struct {
	Key  string
	Size int
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the secret %q is %d bytes; pact keeps secrets of at most %d KiB, in every keyring", e.Key, e.Size, MaxTotal>>10)
}

// Is makes errors.Is(err, ErrTooLarge) true.
func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }

// CheckSize refuses a value that no backend stores (over MaxTotal). Call
// it before the first of several related writes so that none is made.
func CheckSize(key, value string) error {
	if len(value) > MaxTotal {
		return &TooLargeError{Key: key, Size: len(value)}
	}
	return nil
}

const manifestPrefix = "pact-chunks:v1:"

func chunkKey(key string, i int) string { return key + "#" + strconv.Itoa(i) }

// parseManifest reads a manifest entry; ok is false for an ordinary value.
func parseManifest(v string) (n int, sum string, ok bool) {
	rest, found := strings.CutPrefix(v, manifestPrefix)
	if !found {
		return 0, "", false
	}
	ns, sum, found := strings.Cut(rest, ":")
	n, err := strconv.Atoi(ns)
	if !found || err != nil || n < 1 || n > MaxTotal/ChunkSize+1 || len(sum) != 64 {
		return 0, "", false
	}
	return n, sum, true
}

func digest(v string) string {
	s := sha256.Sum256([]byte(v))
	return hex.EncodeToString(s[:])
}

// Get reads key, joining a split value.
func (s *osStore) Get(key string) (string, error) {
	v, err := s.getOne(key)
	if err != nil {
		return "", err
	}
	n, sum, ok := parseManifest(v)
	if !ok {
		return v, nil
	}
	var b strings.Builder
	for i := 1; i <= n; i++ {
		part, err := s.getOne(chunkKey(key, i))
		if errors.Is(err, ErrNotFound) {
			return "", fmt.Errorf("the secret %q in the OS keyring is damaged (part %d of %d is missing); store it again", key, i, n)
		}
		if err != nil {
			return "", err
		}
		b.WriteString(part)
	}
	if digest(b.String()) != sum {
		return "", fmt.Errorf("the secret %q in the OS keyring is damaged (its parts do not match); store it again", key)
	}
	return b.String(), nil
}

// Set writes key, splitting a value larger than MaxValue (or one that
// would read as a manifest) into chunks.
func (s *osStore) Set(key, value string) error {
	if err := CheckSize(key, value); err != nil {
		return err
	}
	oldN := s.chunkCount(key)
	newN := 0
	if len(value) <= MaxValue && !strings.HasPrefix(value, manifestPrefix) {
		if err := s.setOne(key, value); err != nil {
			return err
		}
	} else {
		for i := 0; i*ChunkSize < len(value); i++ {
			end := min((i+1)*ChunkSize, len(value))
			if err := s.setOne(chunkKey(key, i+1), value[i*ChunkSize:end]); err != nil {
				return err
			}
			newN = i + 1
		}
		if err := s.setOne(key, fmt.Sprintf("%s%d:%s", manifestPrefix, newN, digest(value))); err != nil {
			return err
		}
	}
	for i := newN + 1; i <= oldN; i++ {
		s.deleteOne(chunkKey(key, i)) // best effort: stale parts are unreachable
	}
	return nil
}

// Delete removes key and its chunks (absent is no error).
func (s *osStore) Delete(key string) error {
	n := s.chunkCount(key)
	if err := s.deleteOne(key); err != nil {
		return err
	}
	for i := 1; i <= n; i++ {
		if err := s.deleteOne(chunkKey(key, i)); err != nil {
			return err
		}
	}
	return nil
}

// chunkCount is the number of chunks of the value stored at key (0 when
// it is one entry, absent or unreadable).
func (s *osStore) chunkCount(key string) int {
	v, err := s.getOne(key)
	if err != nil {
		return 0
	}
	n, _, _ := parseManifest(v)
	return n
}
