package iostreams

import "strings"

// CommandHint builds a command line to show people in a hint ("run `…`
// and send again") from its words, each shell-quoted when it needs it
// (ShellQuote). Every command hint that holds a value from the other side
// (a scope id from a reply, a URL, a Brand's name) is built with it, so
// that copying the hint into a shell runs exactly that command and
// nothing a server slipped into it ($(…), `…`, ;, |).
func CommandHint(words ...string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = ShellQuote(w)
	}
	return strings.Join(q, " ")
}

// ShellQuote returns s as one POSIX shell word: unchanged when it holds
// only characters no shell treats specially (letters, digits and
// _@%+=:,./-), else in single quotes, a quote inside written as
//
//	'\''
//
// The result is not sanitised for the terminal: print it through Sanitize
// like any text that holds remote values.
func ShellQuote(s string) string {
	if s == "" {
		return "''"
	}
	plain := true
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_@%+=:,./-", r)) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
