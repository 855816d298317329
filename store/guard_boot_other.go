//go:build !linux && !darwin

package store

// bootID is "" where pact cannot name the boot: the write counter then
// refuses only a database behind its last complete checkpoint
// (checkWriteCounter).
func bootID() string { return "" }
