package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pact-cli/pact/internal/testkeys"
)

// kmsLatency is how far away the KMS of row 14 is: each way of every
// exchange with it waits half of it (a round trip of 20 ms), and a new
// connection one round trip more (the TCP handshake).
const kmsLatency = 20 * time.Millisecond

// kmsRows is row 14 (issue 27): `pact send` with the signing key in AWS
// KMS 20 ms away, side by side with the same send with a keyring key. The
// KMS is local-kms behind a proxy on loopback that adds the latency; the
// pact-awskms plugin sits beside pact, as in the release archives. Both
// profiles share the issuer, whose JWKS then holds both keys. The warm-up
// sends fill the KMS profile's stock of PA JWTs minted ahead, as any send
// does: a send takes a token from there and a detached refill keeps it
// filled, so that no send waits for the KMS.
func kmsRows(tmp, pact, card string, jwks *atomic.Value) ([]row, error) {
	if err := sh(nil, "go", releaseBuild("-o", filepath.Join(tmp, "pact-awskms"), "./cmd/pact-awskms")...); err != nil {
		return nil, err
	}
	k, err := testkeys.StartLocalKMSIn(filepath.Join(tmp, "kmsdata"))
	if err != nil {
		return nil, err
	}
	defer k.Stop()
	proxy, err := delayProxy(k.URL[len("http://"):], kmsLatency)
	if err != nil {
		return nil, err
	}
	defer proxy.Close()
	for _, kv := range k.Env() {
		name, v, _ := strings.Cut(kv, "=")
		os.Setenv(name, v)
	}
	os.Setenv("AWS_ENDPOINT_URL", "http://"+proxy.Addr().String())

	// The KMS profile, with the default profile's issuer and Provider.
	var id struct{ Issuer string }
	out, err := exec1(pact, "whoami", "--json")
	if err != nil {
		return nil, err
	}
	json.Unmarshal(out, &id)
	if err := sh(nil, pact, "--profile", "kms", "init", "--issuer", id.Issuer, "--key", "awskms:alias/pact-bench"); err != nil {
		return nil, err
	}
	var regs []struct{ URL, Audience string }
	out, err = exec1(pact, "provider", "list", "--json")
	if err != nil {
		return nil, err
	}
	json.Unmarshal(out, &regs)
	for _, r := range regs {
		if err := sh(nil, pact, "--profile", "kms", "provider", "add", r.URL, "--audience", r.Audience); err != nil {
			return nil, err
		}
	}
	var set1, set2 struct {
		Keys []json.RawMessage `json:"keys"`
	}
	a, _ := exec1(pact, "jwks")
	b, _ := exec1(pact, "--profile", "kms", "jwks")
	json.Unmarshal(a, &set1)
	json.Unmarshal(b, &set2)
	both, _ := json.Marshal(struct {
		Keys []json.RawMessage `json:"keys"`
	}{append(set1.Keys, set2.Keys...)})
	jwks.Store(both)
	// The demo Provider fetched the JWKS before it held the KMS key, and
	// fetches it again on an unknown kid at most once a second.
	for try := 0; ; try++ {
		err := sh(nil, pact, "--profile", "kms", "send", card, "hello")
		if err == nil {
			break
		}
		if try == 5 {
			return nil, err
		}
		time.Sleep(300 * time.Millisecond)
	}
	// Twice, in both orders, so that the load of a shared machine drifting
	// during a run weighs on both sides alike.
	keyring := cmd{"pact send, keyring key", pact + " send " + card + " status-of-A-88213"}
	remote := cmd{"pact send, KMS key 20 ms away", pact + " --profile kms send " + card + " status-of-A-88213"}
	r1, err := hyperfine(tmp, *runs, keyring, remote)
	if err != nil {
		return nil, err
	}
	r2, err := hyperfine(tmp, *runs, remote, keyring)
	if err != nil {
		return nil, err
	}
	kr, rr := (r1[0]+r2[1])/2, (r1[1]+r2[0])/2
	return []row{{name: "14. pact send: KMS key 20 ms away vs keyring key", value: fmt.Sprintf("%.1f ms vs %.1f ms", rr*1e3, kr*1e3),
		ratio: rr / kr, target: 1.2}}, nil // issue 27: at most 1.2×
}

// delayProxy forwards every connection made to it to upstream, holding
// each piece of data half of rtt in either direction, and the first byte
// of a connection one rtt more (a handshake). It listens on 127.0.0.1.
func delayProxy(upstream string, rtt time.Duration) (net.Listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				time.Sleep(rtt) // the handshake
				u, err := net.Dial("tcp", upstream)
				if err != nil {
					return
				}
				defer u.Close()
				var wg sync.WaitGroup
				wg.Add(2)
				go func() { defer wg.Done(); delayed(u, c, rtt/2); u.(*net.TCPConn).CloseWrite() }()
				go func() { defer wg.Done(); delayed(c, u, rtt/2); c.(*net.TCPConn).CloseWrite() }()
				wg.Wait()
			}()
		}
	}()
	return ln, nil
}

// delayed copies src to dst, each chunk written d after it was read,
// in order.
func delayed(dst io.Writer, src io.Reader, d time.Duration) {
	type chunk struct {
		b   []byte
		due time.Time
	}
	ch := make(chan chunk, 1024)
	go func() {
		defer close(ch)
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 {
				ch <- chunk{buf[:n], time.Now().Add(d)}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range ch {
		time.Sleep(time.Until(c.due))
		if _, err := dst.Write(c.b); err != nil {
			for range ch {
			}
			return
		}
	}
}

// exec1 runs pact and returns its stdout.
func exec1(pact string, args ...string) ([]byte, error) {
	out, err := exec.Command(pact, args...).Output()
	if err != nil {
		return nil, fmt.Errorf("%s %v: %w", pact, args, err)
	}
	return out, nil
}
