package receipts

import (
	"os"
	"runtime"
)

// isPrivate reports whether fi has mode 0600 (read and write for its owner
// only). Windows keeps no Unix permission bits (Go reports 0666 for every
// writable file, and a new file's ACL there is its owner's), so there it
// reports true: the mode checks run on Linux and macOS.
func isPrivate(fi os.FileInfo) bool {
	return runtime.GOOS == "windows" || fi.Mode().Perm() == 0o600
}
