package main

import "github.com/pact-cli/pact/iostreams"

// safe is iostreams.Sanitize: every piece of remote text (replies, card
// fields, scope descriptions, error messages, receipt claims) goes through
// it before human output. --json output never does (it keeps text exact).
func safe(s string) string { return iostreams.Sanitize(s) }
