package iostreams

//go:generate go run gen_confusables.go

import (
	"slices"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// confusableSkeleton is the skeleton of UTS #39 §4 (Unicode Security
// Mechanisms): s in NFD, each character replaced by what the confusables
// table maps it to (confusableFrom, confusableTo), then NFD again. It is
// github.com/mtibben/confusables' Skeleton with its table laid out by the
// linker (confusables_table.go, go generate) instead of built as a map at
// the start of every process.
func confusableSkeleton(s string) string {
	var b strings.Builder
	for _, r := range norm.NFD.String(s) {
		if i, ok := slices.BinarySearch(confusableFrom[:], r); ok {
			b.WriteString(confusableTo[i])
		} else {
			b.WriteRune(r)
		}
	}
	return norm.NFD.String(b.String())
}
