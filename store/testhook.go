//go:build !pact_store_testhook

package store

// inWriteHook runs inside AppendTurns' transaction, after the rows are
// written and before the commit. Only binaries built with the
// pact_store_testhook tag do anything there (see testhook_on.go).
func inWriteHook() {}
