package keyplugin

import (
	"bufio"
	"context"
	"crypto"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"
)

// CallTimeout bounds one request to the plugin, its retries against the
// service included.
const CallTimeout = 30 * time.Second

// Program is the file name of the plugin for kind: "pact-awskms".
func Program(kind string) string {
	if runtime.GOOS == "windows" {
		return "pact-" + kind + ".exe"
	}
	return "pact-" + kind
}

// Find returns the plugin program for kind: the one beside the running
// pact (release archives ship them together), else the one on PATH.
func Find(kind string) (string, error) {
	name := Program(kind)
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", &Error{Kind: KindPlugin, Message: fmt.Sprintf("%s keys need the %s program, which is neither beside pact nor on PATH "+
		"(every release archive holds it; else: go install github.com/pact-cli/pact/cmd/%s@%s)", kind, name, "pact-"+kind, installVersion())}
}

// installVersion is the version for `go install …@VERSION` of a plugin:
// this pact's own module version when it was installed as one (`go
// install …/cmd/pact@v1.2.3`), else "latest" (a build from a checkout,
// where `@latest` still works from any folder; a bare `go install
// PACKAGE` outside a module does not).
func installVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && strings.HasPrefix(bi.Main.Version, "v") && !strings.Contains(bi.Main.Version, "+dirty") {
		return bi.Main.Version
	}
	return "latest"
}

// Client talks to one plugin process, started on first use and started
// again by the next call after it stopped (killed, crashed, or broke the
// protocol), so that a long-lived pact (pact serve, pact chat, pact mcp)
// is not left unable to sign: the calls in flight when it stopped fail,
// later ones go to a new process. Safe for concurrent use; requests are
// answered concurrently.
type Client struct {
	Kind string
	// Path is the plugin program ("" = Find(Kind)).
	Path string

	startMu sync.Mutex // one start at a time
	mu      sync.Mutex
	p       *proc // the plugin process; nil before the first call
	next    uint64
	closed  bool
}

// pinEnv is pkcs11.PINEnv: a token's PIN, which a plugin never needs.
const pinEnv = "PACT_PKCS11_PIN"

// pluginEnv is the environment a plugin runs with: pact's own, without a
// PKCS#11 token's PIN (PACT_PKCS11_PIN), which would otherwise sit in the
// environment of a process that has no use for it.
func pluginEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, pinEnv+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// proc is one run of the plugin program.
type proc struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	stderr  *tail
	pending map[uint64]chan Response // guarded by Client.mu
	dead    error                    // set when it exited or broke the protocol; guarded by Client.mu
}

// New returns a client of the plugin for kind.
func New(kind string) *Client { return &Client{Kind: kind} }

// running returns the plugin process, starting it when there is none or
// the last one stopped.
func (c *Client) running() (*proc, error) {
	c.mu.Lock()
	p, closed := c.p, c.closed
	c.mu.Unlock()
	if closed {
		return nil, &Error{Kind: KindPlugin, Message: fmt.Sprintf("the %s program was closed", Program(c.Kind))}
	}
	if p != nil && c.alive(p) {
		return p, nil
	}
	c.startMu.Lock()
	defer c.startMu.Unlock()
	c.mu.Lock()
	p = c.p
	c.mu.Unlock()
	if p != nil && c.alive(p) {
		return p, nil // another call started it meanwhile
	}
	p, err := c.start()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.p = p
	c.mu.Unlock()
	return p, nil
}

func (c *Client) alive(p *proc) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return p.dead == nil
}

// start runs the plugin program and reads its hello line.
func (c *Client) start() (*proc, error) {
	path := c.Path
	if path == "" {
		var err error
		if path, err = Find(c.Kind); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command(path)
	cmd.Env = pluginEnv(os.Environ())
	p := &proc{cmd: cmd, stderr: &tail{}, pending: map[uint64]chan Response{}}
	cmd.Stderr = p.stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, &Error{Kind: KindPlugin, Message: fmt.Sprintf("the %s program could not be started: %v", filepath.Base(path), err)}
	}
	p.stdin = in
	r := bufio.NewReaderSize(out, 64<<10)
	line, err := r.ReadBytes('\n')
	var h Hello
	if err != nil || json.Unmarshal(line, &h) != nil || h.Hello.Protocol != Protocol || h.Hello.Kind != c.Kind {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, &Error{Kind: KindPlugin, Message: fmt.Sprintf("%s did not start as a pact %s plugin (protocol %d)%s",
			filepath.Base(path), c.Kind, Protocol, p.stderr.said())}
	}
	go c.read(p, r)
	return p, nil
}

// read delivers p's responses to their callers until its output ends,
// then marks it dead and fails the calls still waiting on it.
func (c *Client) read(p *proc, r *bufio.Reader) {
	var err error
	for {
		var line []byte
		if line, err = r.ReadBytes('\n'); err != nil {
			break
		}
		var resp Response
		if json.Unmarshal(line, &resp) != nil {
			err = errors.New("a line that is not a response")
			break
		}
		c.mu.Lock()
		ch := p.pending[resp.ID]
		delete(p.pending, resp.ID)
		c.mu.Unlock()
		if ch != nil {
			ch <- resp
		}
	}
	p.cmd.Process.Kill() // it broke the protocol: a new one answers the next call
	p.cmd.Wait()
	c.mu.Lock()
	p.dead = &Error{Kind: KindPlugin, Message: fmt.Sprintf("the %s program stopped (%v)%s", Program(c.Kind), err, p.stderr.said())}
	for id, ch := range p.pending {
		close(ch)
		delete(p.pending, id)
	}
	c.mu.Unlock()
}

// Call sends req and waits for its response, at most until ctx ends (and
// CallTimeout). A failure the plugin reports is an *Error with req's op.
// A plugin that stopped is started again first.
func (c *Client) Call(ctx context.Context, req Request) (Response, error) {
	p, err := c.running()
	if err != nil {
		return Response{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	ch := make(chan Response, 1)
	c.mu.Lock()
	if p.dead != nil {
		dead := p.dead
		c.mu.Unlock()
		return Response{}, dead
	}
	c.next++
	req.ID = c.next
	p.pending[req.ID] = ch
	line, err := json.Marshal(req)
	if err == nil {
		_, err = p.stdin.Write(append(line, '\n'))
	}
	c.mu.Unlock()
	if err != nil {
		return Response{}, &Error{Kind: KindPlugin, Message: fmt.Sprintf("writing to the %s program: %v", Program(c.Kind), err)}
	}
	select {
	case resp, ok := <-ch:
		if !ok {
			c.mu.Lock()
			defer c.mu.Unlock()
			return Response{}, p.dead
		}
		if resp.Error != nil {
			resp.Error.Op = opName(req.Op)
			return resp, resp.Error
		}
		return resp, nil
	case <-ctx.Done():
		c.mu.Lock()
		delete(p.pending, req.ID)
		c.mu.Unlock()
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return Response{}, &Error{Kind: KindNetwork, Op: opName(req.Op), Message: "no answer within " + CallTimeout.String()}
		}
		return Response{}, ctx.Err()
	}
}

// opName is the service's action name for an op, for messages.
func opName(op string) string {
	return map[string]string{OpPublic: "GetPublicKey", OpSign: "Sign", OpCreate: "CreateKey", OpEncrypt: "Encrypt", OpDecrypt: "Decrypt"}[op]
}

// Close ends the plugin (its standard input closes); no call starts it
// again.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.p != nil {
		return c.p.stdin.Close()
	}
	return nil
}

// KeyInfo is a key as the plugin describes it.
type KeyInfo struct {
	ARN    string
	Public crypto.PublicKey
	Alg    string
}

func keyInfo(resp Response) (*KeyInfo, error) {
	pub, err := x509.ParsePKIXPublicKey(resp.SPKI)
	if err != nil {
		return nil, &Error{Kind: KindPlugin, Message: "the plugin returned a public key that is not DER SubjectPublicKeyInfo: " + err.Error()}
	}
	return &KeyInfo{ARN: resp.ARN, Public: pub, Alg: resp.Alg}, nil
}

// PublicKey asks for key's public half (and ARN).
func (c *Client) PublicKey(ctx context.Context, key string) (*KeyInfo, error) {
	resp, err := c.Call(ctx, Request{Op: OpPublic, Key: key})
	if err != nil {
		return nil, err
	}
	return keyInfo(resp)
}

// Create asks for a new signing key for alg (ES256: ECC_NIST_P256,
// SIGN_VERIFY), with alias when not "".
func (c *Client) Create(ctx context.Context, alg, alias, description string) (*KeyInfo, error) {
	resp, err := c.Call(ctx, Request{Op: OpCreate, Alg: alg, Alias: alias, Description: description})
	if err != nil {
		return nil, err
	}
	return keyInfo(resp)
}

// Encrypt wraps a small secret (a data key) under key, bound to encCtx.
func (c *Client) Encrypt(ctx context.Context, key string, plaintext []byte, encCtx map[string]string) ([]byte, error) {
	resp, err := c.Call(ctx, Request{Op: OpEncrypt, Key: key, Data: plaintext, Context: encCtx})
	return resp.Data, err
}

// Decrypt unwraps what Encrypt returned, with the same encCtx.
func (c *Client) Decrypt(ctx context.Context, key string, ciphertext []byte, encCtx map[string]string) ([]byte, error) {
	resp, err := c.Call(ctx, Request{Op: OpDecrypt, Key: key, Data: ciphertext, Context: encCtx})
	return resp.Data, err
}

// Key is a crypto.Signer for the plugin's key named key, whose public
// half is pub (as recorded: it is not fetched). Each Sign is one request.
func (c *Client) Key(key string, pub crypto.PublicKey) crypto.Signer {
	return &pluginKey{c: c, key: key, pub: pub}
}

type pluginKey struct {
	c   *Client
	key string
	pub crypto.PublicKey
}

func (k *pluginKey) Public() crypto.PublicKey { return k.pub }

func (k *pluginKey) Sign(_ io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	alg, err := AlgFor(k.pub, opts)
	if err != nil {
		return nil, err
	}
	resp, err := k.c.Call(context.Background(), Request{Op: OpSign, Key: k.key, Alg: alg, Digest: digest})
	if err != nil {
		return nil, err
	}
	return resp.Signature, nil
}

// tail keeps the last bytes a plugin wrote on its standard error, for
// messages when it fails to start or stops.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 1024 {
		t.buf = t.buf[len(t.buf)-1024:]
	}
	return len(p), nil
}

func (t *tail) said() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.buf) == 0 {
		return ""
	}
	return ": " + oneLine(string(t.buf))
}
