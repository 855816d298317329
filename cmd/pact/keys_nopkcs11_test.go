//go:build !pkcs11

package main

import (
	"fmt"
	"os"
)

// hsmTool needs PKCS#11 (go test -tags pkcs11); the stories that run it
// skip without it ([!pkcs11] skip).
func hsmTool() {
	fmt.Fprintln(os.Stderr, "pact-hsm: this test binary was built without -tags pkcs11")
	os.Exit(2)
}
