package store

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// PendingFile is a file written in place of another, atomically: the data
// goes to a temporary file beside it, and CloseAtomicallyReplace fsyncs it
// and renames it over the target, so readers see the old content or the
// new, never a part. Works on every platform (os.Rename replaces the target
// on Windows too). Call Cleanup (deferred) to drop the temporary file of a
// write that did not finish.
type PendingFile struct {
	*os.File
	path string
	perm fs.FileMode
	done bool
}

// NewPendingFile starts a replacement of path with mode perm, creating the
// parent folders (0700).
func NewPendingFile(path string, perm fs.FileMode) (*PendingFile, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, err
	}
	return &PendingFile{File: f, path: path, perm: perm}, nil
}

// CloseAtomicallyReplace syncs the data, closes the file and renames it over
// the target. On error the target is unchanged.
func (p *PendingFile) CloseAtomicallyReplace() error {
	if err := p.Sync(); err != nil {
		return err
	}
	if err := p.Close(); err != nil {
		return err
	}
	if err := os.Chmod(p.Name(), p.perm); err != nil {
		return err
	}
	if err := os.Rename(p.Name(), p.path); err != nil {
		return fmt.Errorf("replacing %s: %w", p.path, err)
	}
	p.done = true
	return nil
}

// Cleanup removes the temporary file unless it replaced the target.
func (p *PendingFile) Cleanup() {
	if !p.done {
		p.Close()
		os.Remove(p.Name())
	}
}
