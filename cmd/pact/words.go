package main

import (
	"fmt"
	"strings"
)

// plural is "1 warning" or "N warnings".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// sentence ends s with a full stop unless it already ends with
// punctuation ("is the server running?" stays as it is).
func sentence(s string) string {
	s = strings.TrimRight(s, " \n")
	if s == "" || strings.ContainsAny(s[len(s)-1:], ".?!:") {
		return s
	}
	return s + "."
}
