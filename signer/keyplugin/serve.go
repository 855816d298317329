package keyplugin

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"sync"
	"time"
)

// Backend is what a plugin does for each op. Errors that are not *Error
// are reported as KindOther.
type Backend interface {
	PublicKey(ctx context.Context, key string) (Response, error)
	Sign(ctx context.Context, key, alg string, digest []byte) ([]byte, error)
	Create(ctx context.Context, alg, alias, description string) (Response, error)
	Encrypt(ctx context.Context, key string, plaintext []byte, encCtx map[string]string) ([]byte, error)
	Decrypt(ctx context.Context, key string, ciphertext []byte, encCtx map[string]string) ([]byte, error)
}

// OpTimeout bounds each op a plugin runs.
const OpTimeout = 25 * time.Second

// Serve is a plugin's main loop: it writes the hello line for kind, then
// answers each request line from r on w (concurrently, one line per
// response) until r ends. b may be nil when the plugin could not set its
// backend up: every request is then answered with initErr.
func Serve(r io.Reader, w io.Writer, kind string, b Backend, initErr *Error) error {
	var mu sync.Mutex
	enc := json.NewEncoder(w)
	write := func(v any) error {
		mu.Lock()
		defer mu.Unlock()
		return enc.Encode(v)
	}
	var h Hello
	h.Hello.Protocol, h.Hello.Kind = Protocol, kind
	if err := write(h); err != nil {
		return err
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var wg sync.WaitGroup
	defer wg.Wait()
	for sc.Scan() {
		var req Request
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			write(Response{Error: &Error{Kind: KindPlugin, Message: "a request that is not JSON"}})
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp := handle(b, initErr, req)
			resp.ID = req.ID
			write(resp)
		}()
	}
	return sc.Err()
}

func handle(b Backend, initErr *Error, req Request) Response {
	if b == nil {
		return Response{Error: initErr}
	}
	ctx, cancel := context.WithTimeout(context.Background(), OpTimeout)
	defer cancel()
	var (
		resp Response
		err  error
	)
	switch req.Op {
	case OpPublic:
		resp, err = b.PublicKey(ctx, req.Key)
	case OpSign:
		resp.Signature, err = b.Sign(ctx, req.Key, req.Alg, req.Digest)
	case OpCreate:
		resp, err = b.Create(ctx, req.Alg, req.Alias, req.Description)
	case OpEncrypt:
		resp.Data, err = b.Encrypt(ctx, req.Key, req.Data, req.Context)
	case OpDecrypt:
		resp.Data, err = b.Decrypt(ctx, req.Key, req.Data, req.Context)
	default:
		err = &Error{Kind: KindPlugin, Message: "unknown op " + req.Op}
	}
	if err != nil {
		e, ok := err.(*Error)
		if !ok {
			e = &Error{Kind: KindOther, Message: err.Error()}
		}
		return Response{Error: e}
	}
	return resp
}
