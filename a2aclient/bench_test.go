package a2aclient_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/go-jose/go-jose/v4"

	"github.com/pact-cli/pact/a2aclient"
	"github.com/pact-cli/pact/demoprovider"
	"github.com/pact-cli/pact/httpx"
	"github.com/pact-cli/pact/signer"
)

// benchProvider is a demo Provider that knows one personal agent, whose
// JWKS an in-test server publishes.
func benchProvider(b *testing.B) (iface string, sig *signer.Signer, aud, sub string) {
	b.Helper()
	key, err := signer.Generate(signer.ES256, 0)
	if err != nil {
		b.Fatal(err)
	}
	pub, err := signer.PublicJWK(key)
	if err != nil {
		b.Fatal(err)
	}
	js := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{pub}})
	}))
	b.Cleanup(js.Close)
	sig, err = signer.New(js.URL, key, nil)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	prov, err := demoprovider.Start(ctx, demoprovider.Config{
		Policy:     demoprovider.AllowList,
		Registered: []demoprovider.Registration{{Issuer: js.URL, JWKSURI: js.URL + "/jwks.json"}},
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { prov.Close() })
	return prov.Brands()[0].InterfaceURL, sig, prov.Audience(), "bench-user"
}

// BenchmarkSendViaClient is one message:send through a2aclient (httpx
// client, a freshly minted PA JWT per request as §3.2 requires, reply
// parsing) against the demo Provider on loopback. Compare with
// BenchmarkSendPlainHTTP: `make bench` reports the ratio (target < 1.25×).
func BenchmarkSendViaClient(b *testing.B) {
	iface, sig, aud, sub := benchProvider(b)
	c := &a2aclient.Client{HTTP: httpx.NewClient(httpx.Options{Timeout: 10 * time.Second})}
	// As conversation.Session does: a fresh token per request, minted one
	// ahead so the request does not wait for the signature (signer.Ahead).
	ahead := sig.Ahead(aud, sub)
	mint := func(context.Context, string) (string, error) { return ahead.Token() }
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("status of A-88213?"))
		msg.ID = fmt.Sprintf("via-%d", i)
		resp, err := c.Send(ctx, a2aclient.Request{InterfaceURL: iface, Message: msg, PAToken: mint})
		if err != nil || resp.Message == nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSendPlainHTTP is the baseline: the same request with net/http, a
// PA JWT minted once before the loop, and the reply decoded into the SDK's
// SendMessageResponse shape.
func BenchmarkSendPlainHTTP(b *testing.B) {
	iface, sig, aud, sub := benchProvider(b)
	tok, err := sig.Mint(aud, sub)
	if err != nil {
		b.Fatal(err)
	}
	hc := &http.Client{Timeout: 10 * time.Second}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("status of A-88213?"))
		msg.ID = fmt.Sprintf("plain-%d", i)
		body, _ := json.Marshal(a2a.SendMessageRequest{Message: msg})
		req, _ := http.NewRequest(http.MethodPost, iface+"/message:send", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("A2A-Version", "1.0")
		req.Header.Set("Content-Type", "application/json")
		res, err := hc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		var out struct {
			Message *a2a.Message `json:"message"`
		}
		err = json.NewDecoder(res.Body).Decode(&out)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusOK || out.Message == nil {
			b.Fatalf("status %d: %v", res.StatusCode, err)
		}
	}
}

// BenchmarkSendPlainHTTPFreshToken is BenchmarkSendPlainHTTP minting a new
// PA JWT per request, as §3.2 asks of every client ("a fresh PA JWT on every
// request"): the like-for-like baseline for a2aclient's own overhead.
func BenchmarkSendPlainHTTPFreshToken(b *testing.B) {
	iface, sig, aud, sub := benchProvider(b)
	hc := &http.Client{Timeout: 10 * time.Second}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		tok, err := sig.Mint(aud, sub)
		if err != nil {
			b.Fatal(err)
		}
		msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("status of A-88213?"))
		msg.ID = fmt.Sprintf("fresh-%d", i)
		body, _ := json.Marshal(a2a.SendMessageRequest{Message: msg})
		req, _ := http.NewRequest(http.MethodPost, iface+"/message:send", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("A2A-Version", "1.0")
		req.Header.Set("Content-Type", "application/json")
		res, err := hc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		var out struct {
			Message *a2a.Message `json:"message"`
		}
		err = json.NewDecoder(res.Body).Decode(&out)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusOK || out.Message == nil {
			b.Fatalf("status %d: %v", res.StatusCode, err)
		}
	}
}
