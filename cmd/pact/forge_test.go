package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"os"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/rogpeppe/go-internal/testscript"
)

// cmdForgeReceipt writes a bundle line whose receipt claims brand BRAND
// and is signed by a fresh key (kid KID) that the Brand never published,
// with that key as the line's jwk: `forge-receipt BRAND KID FILE`.
func cmdForgeReceipt(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: forge-receipt BRAND KID FILE")
	}
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ts.Check(err)
	jwk := jose.JSONWebKey{Key: priv, KeyID: args[1], Algorithm: string(jose.ES256), Use: "sig"}
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jwk}, nil)
	ts.Check(err)
	claims, _ := json.Marshal(map[string]any{
		"grantId": "a2agrant_forged", "user": "jane-4471", "pa": "http://127.0.0.1:9/pa", "brand": args[0],
		"scopesUsed": []string{"refunds:issue"}, "actions": []any{map[string]any{"tool": "issue_refund", "argsHash": "x"}},
		"ts": time.Now().UTC().Format(time.RFC3339),
	})
	obj, err := sig.Sign(claims)
	ts.Check(err)
	compact, err := obj.CompactSerialize()
	ts.Check(err)
	line, _ := json.Marshal(map[string]any{"jws": compact, "jwk": jwk.Public(), "jwks_uri": args[0] + "/oauth/jwks.json"})
	ts.Check(os.WriteFile(ts.MkAbs(args[2]), append(line, '\n'), 0o600))
}
