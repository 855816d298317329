package tui

import (
	"strings"
	"unicode"
)

// InputKind says what a submitted input is (see ParseInput).
type InputKind int

const (
	// InputText is a message: sent as typed (Text).
	InputText InputKind = iota
	// InputCommand is a known command (Name, Args).
	InputCommand
	// InputUnknown is a single line starting with an unknown /word: neither sent nor
	// run, it stays where it was typed with a hint.
	InputUnknown
)

// Input is what the User submitted, classified by ParseInput.
type Input struct {
	Kind InputKind
	// Text is the message to send (InputText): the input as typed, blank lines around it
	// and trailing spaces removed, "//" at its start sending one "/".
	Text string
	// Name is the command (InputCommand) or the unknown /word (InputUnknown); Args are
	// the words after it.
	Name string
	Args []string
}

// ParseInput classifies what the User submitted (the chat's Enter, a line of line-mode
// `pact chat`). A command is a single line whose first word is a known command
// (known(name) reports that); anything else is text: several lines, a path
// ("/home/jane/invoice.pdf says…"), a word that does not start with "/". A single line
// whose first word is an unknown "/word" (letters, digits, "-", "_", "?") is InputUnknown,
// so that a mistyped command is never sent. "//text" sends "/text". Nothing typed is
// dropped: an input of only blanks is InputText with Text "".
func ParseInput(s string, known func(name string) bool) Input {
	text := trimBlankLines(s)
	if strings.HasPrefix(text, "//") {
		return Input{Kind: InputText, Text: text[1:]}
	}
	if !strings.HasPrefix(text, "/") || strings.Contains(text, "\n") {
		return Input{Kind: InputText, Text: text}
	}
	f := strings.Fields(text)
	if known(f[0]) {
		return Input{Kind: InputCommand, Name: f[0], Args: f[1:]}
	}
	if isWord(f[0][1:]) {
		return Input{Kind: InputUnknown, Name: f[0], Args: f[1:]}
	}
	return Input{Kind: InputText, Text: text}
}

// trimBlankLines removes the lines of only blanks before and after s and the blanks at
// its end; the indentation of its first line is kept.
func trimBlankLines(s string) string {
	s = strings.TrimRightFunc(s, unicode.IsSpace)
	for {
		i := strings.IndexByte(s, '\n')
		if i < 0 || strings.TrimSpace(s[:i]) != "" {
			break
		}
		s = s[i+1:]
	}
	if strings.TrimSpace(s) == "" {
		return ""
	}
	return s
}

// isWord reports whether w could be a command name: letters, digits, '-', '_' or '?'.
func isWord(w string) bool {
	for _, r := range w {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' && r != '_' && r != '?' {
			return false
		}
	}
	return true
}

// isCommand reports whether name is a command of the chat.
func isCommand(name string) bool {
	if name == "/exit" {
		return true
	}
	for _, c := range commands {
		if c.name == name {
			return true
		}
	}
	return false
}
