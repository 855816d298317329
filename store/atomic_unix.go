//go:build !windows

package store

import (
	"io/fs"

	"github.com/google/renameio/v2"
)

// writeAtomic writes a temporary file beside path, fsyncs it and renames it
// over path (renameio).
func writeAtomic(path string, data []byte, perm fs.FileMode) error {
	return renameio.WriteFile(path, data, perm)
}
