// Package store keeps pact's local state: where files live (PACT_HOME or the
// XDG folders), the storage interface (storage.go: a Backend opens one
// User's Store), each profile's SQLite database, the default Backend (DB:
// conversations, turns, receipts, grants' metadata, card cache, pins),
// atomic writes, and locks that let several pact processes share one
// profile safely. The PostgreSQL Backend is package store/postgres.
//
// Configuration files (profiles' settings, the file keyring) are written
// through WriteFile: a temporary file in the same
// folder, fsynced, then renamed over the old one (renameio), so a crash or a
// full disk leaves either the old or the new content, never a torn file.
// Read-modify-write cycles go through Update, which holds an flock on a
// sibling ".lock" file for the whole cycle.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/adrg/xdg"
	"github.com/gofrs/flock"
)

// Dirs are the two roots pact writes under.
type Dirs struct {
	Config string // configuration (profiles' settings)
	Data   string // conversations, receipts, the file keyring
}

// DefaultDirs returns $PACT_HOME/{config,data} when PACT_HOME is set, else
// $XDG_CONFIG_HOME/pact and $XDG_DATA_HOME/pact.
func DefaultDirs() Dirs {
	if home := os.Getenv("PACT_HOME"); home != "" {
		return Dirs{Config: filepath.Join(home, "config"), Data: filepath.Join(home, "data")}
	}
	return Dirs{Config: filepath.Join(xdg.ConfigHome, "pact"), Data: filepath.Join(xdg.DataHome, "pact")}
}

// validProfileName reports whether name is a letter or digit followed by
// at most 63 letters, digits, '.', '_' or '-' (ASCII). Every pact process
// checks its profile name, so this is a loop rather than a regular
// expression compiled at package init (issue 21).
func validProfileName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case i > 0 && (c == '.' || c == '_' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// CheckProfileName refuses names that could escape the profiles folder.
func CheckProfileName(name string) error {
	if !validProfileName(name) {
		return fmt.Errorf("invalid profile name %q: use letters, digits, '.', '_' or '-' (at most 64)", name)
	}
	return nil
}

// ProfileConfigDir is Config/profiles/NAME.
func (d Dirs) ProfileConfigDir(name string) string {
	return filepath.Join(d.Config, "profiles", name)
}

// ProfileDataDir is Data/profiles/NAME.
func (d Dirs) ProfileDataDir(name string) string {
	return filepath.Join(d.Data, "profiles", name)
}

// LockTimeout bounds how long Update and Lock wait for another pact process.
var LockTimeout = 10 * time.Second

// WriteFile atomically replaces path with data, creating parent folders
// (0700). perm is applied to the new file (use 0600 for anything private).
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("saving %s: %w", path, err)
	}
	if err := writeAtomic(path, data, perm); err != nil {
		return fmt.Errorf("saving %s: %w (the previous version is unchanged)", path, err)
	}
	return nil
}

// ReadJSON decodes the JSON file at path into v. It reports false, nil when
// the file does not exist. A file that is not valid JSON is an error naming
// the path (it is never overwritten silently).
func ReadJSON(path string, v any) (bool, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return false, fmt.Errorf("%s is damaged (%v); move it aside to start fresh", path, err)
	}
	return true, nil
}

// WriteJSON writes v as indented JSON to path with WriteFile.
func WriteJSON(path string, v any, perm fs.FileMode) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return WriteFile(path, append(data, '\n'), perm)
}

// Lock takes an exclusive inter-process lock on path+".lock", waiting at most
// LockTimeout. Call the returned function to release it.
func Lock(path string) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	fl := flock.New(path + ".lock")
	ctx, cancel := context.WithTimeout(context.Background(), LockTimeout)
	defer cancel()
	ok, err := fl.TryLockContext(ctx, 10*time.Millisecond)
	if err != nil || !ok {
		return nil, fmt.Errorf("another pact process holds %s.lock (waited %s): %v", path, LockTimeout, err)
	}
	return func() { fl.Unlock() }, nil
}

// Update runs a locked read-modify-write cycle on the JSON file at path:
// it loads the current value into a fresh T (zero when the file is absent),
// calls fn, and writes the result atomically with perm. If fn returns an
// error nothing is written.
func Update[T any](path string, perm fs.FileMode, fn func(v *T) error) error {
	unlock, err := Lock(path)
	if err != nil {
		return err
	}
	defer unlock()
	var v T
	if _, err := ReadJSON(path, &v); err != nil {
		return err
	}
	if err := fn(&v); err != nil {
		return err
	}
	return WriteJSON(path, &v, perm)
}
