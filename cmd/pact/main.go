// Command pact is a personal agent's client for PACT 1.0: it proves who it
// is to a Brand's support agent, holds conversations over A2A, and acts for
// the User with their consent. See README.md and docs/.
package main

import (
	"os"

	"github.com/pact-cli/pact/iostreams"
)

// Set by the linker (see .goreleaser.yaml).
var (
	version = "dev"
	commit  = "none"
	date    = "unknown"
)

// exit ends the process; a profiling build (profile_hook.go) stops its
// profile first.
var exit = os.Exit

func main() {
	exit(run(os.Args[1:], iostreams.System()))
}
