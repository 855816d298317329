package tui

import (
	"regexp"
	"strings"
)

var sgrRE = regexp.MustCompile(`\x1b\[([0-9;]*)m`)

// colourSGR returns the first SGR sequence in s that sets a colour, or "".
func colourSGR(s string) string {
	for _, m := range sgrRE.FindAllStringSubmatch(s, -1) {
		for _, p := range strings.Split(m[1], ";") {
			switch {
			case len(p) == 2 && (p[0] == '3' || p[0] == '4' || p[0] == '9') && p[1] >= '0' && p[1] <= '8':
				return m[0]
			case len(p) == 3 && p[:2] == "10" && p[2] >= '0' && p[2] <= '7':
				return m[0]
			}
		}
	}
	return ""
}
