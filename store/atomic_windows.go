//go:build windows

package store

import (
	"io/fs"
	"os"
	"path/filepath"
)

// writeAtomic writes a temporary file beside path, syncs it and renames it
// over path. renameio has no Windows support; os.Rename there replaces the
// target with MoveFileEx(MOVEFILE_REPLACE_EXISTING).
func writeAtomic(path string, data []byte, perm fs.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp, perm); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
