package main

import "github.com/pact-cli/pact/iostreams"

// safe is iostreams.Sanitize: every piece of remote text (replies, card
// fields, scope descriptions, error messages, receipt claims) goes through
// it before human output. --json output never does (it keeps text exact).
func safe(s string) string { return iostreams.Sanitize(s) }

// line is iostreams.SanitizeLine, for a single-line field on a human path
// (a Brand's name, a skill, a scope id or description, a user_code, a
// link, a hint): remote text there must not start a row of its own.
func line(s string) string { return iostreams.SanitizeLine(s) }
