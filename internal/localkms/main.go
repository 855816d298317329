// Command localkms runs local-kms (github.com/nsmithuk/local-kms, an AWS
// KMS emulator) on 127.0.0.1 only, for pact's tests. local-kms's own main
// listens on every interface; this one serves the same handler and
// database on a loopback listener and prints "listening on ADDR" on
// stdout once it accepts connections.
//
// Environment (as local-kms): PORT (default 0: any free port),
// KMS_REGION (eu-west-2), KMS_ACCOUNT_ID (111122223333), KMS_DATA_PATH
// (required: a folder for the key database).
//
// It is its own module, so that pact's go.mod does not carry local-kms's
// dependencies: build it with `go build -C internal/localkms -o DIR/localkms .`.
package main

import (
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/nsmithuk/local-kms/src"
	"github.com/nsmithuk/local-kms/src/config"
	"github.com/nsmithuk/local-kms/src/data"
)

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func main() {
	config.AWSAccountId = env("KMS_ACCOUNT_ID", "111122223333")
	config.AWSRegion = env("KMS_REGION", "eu-west-2")
	dir := os.Getenv("KMS_DATA_PATH")
	if dir == "" {
		log.Fatal("localkms: set KMS_DATA_PATH to a folder for the key database")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		log.Fatal(err)
	}
	config.DatabasePath = abs
	db := data.NewDatabase(abs)
	defer db.Close()
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", env("PORT", "0")))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening on %s\n", ln.Addr())
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		src.HandleRequest(w, r, db)
	})}
	log.Fatal(srv.Serve(ln))
}
