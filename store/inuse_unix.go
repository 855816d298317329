//go:build unix

package store

import (
	"os"
	"syscall"
)

// shmDMS is the byte of a WAL database's -shm file on which every SQLite
// connection holds a shared lock while it has the database open (the
// "dead man switch" of SQLite's unix VFS: UNIX_SHM_DMS, offset 128).
const shmDMS = 128

// inUseBy reports the pid of another process that has the WAL database at
// path open, found by a write lock on its -shm file's DMS byte that would
// conflict (F_GETLK); 0 when none has, or when it cannot be told (no -shm
// file: nobody has it open in WAL mode). The lock is only tested, never
// taken, so this process's own connections keep theirs.
func inUseBy(path string) int {
	f, err := os.Open(path + "-shm")
	if err != nil {
		return 0
	}
	defer f.Close()
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: shmDMS, Len: 1}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_GETLK, &lk); err != nil {
		return 0
	}
	if lk.Type == syscall.F_UNLCK || int(lk.Pid) == os.Getpid() {
		return 0
	}
	return int(lk.Pid)
}
