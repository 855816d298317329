//go:build pactrelease

package main

import "errors"

// errNoDocGen: a release build has no Markdown or man page generator
// (gen_docs.go).
var errNoDocGen = errors.New("this build of pact has no documentation generator (built with -tags pactrelease): run `go run ./cmd/pact __gen` from a checkout")

func genMarkdown() (map[string][]byte, error) { return nil, errNoDocGen }

func genMan() (map[string][]byte, error) { return nil, errNoDocGen }
