// Command pact-awskms is pact's key plugin for AWS KMS: pact starts it when
// a profile's signing key is an awskms: URI and asks it, over its standard
// input and output (package keyplugin), for public keys, signatures and
// new keys. It uses the AWS SDK for Go v2 with its standard configuration:
// credentials from the environment, ~/.aws, SSO or an instance or
// container role; AWS_REGION; AWS_ENDPOINT_URL.
//
// It is not meant to be run by hand; it ships beside pact in every release
// archive, where pact looks for it first (then on PATH).
package main

import (
	"fmt"
	"os"

	"github.com/pact-cli/pact/signer/awskms"
)

func main() {
	if len(os.Args) > 1 {
		fmt.Fprintln(os.Stderr, "pact-awskms is started by pact for awskms: keys; it takes no arguments (see `pact help init`)")
		os.Exit(2)
	}
	if err := awskms.ServePlugin(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "pact-awskms:", err)
		os.Exit(1)
	}
}
