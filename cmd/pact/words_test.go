package main

import "testing"

func TestPluralAndSentence(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{plural(1, "warning", "warnings"), "1 warning"},
		{plural(0, "warning", "warnings"), "0 warnings"},
		{plural(2, "warning", "warnings"), "2 warnings"},
		// key activate: "…: could not connect: is the server running?" is
		// not followed by a full stop.
		{sentence("could not connect: is the server running?"), "could not connect: is the server running?"},
		{sentence("the key is not served"), "the key is not served."},
		{sentence("done."), "done."},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
