// Package delegation holds the personal agent's delegation tokens (PACT
// §5.4): their verification before first use, the stored Grant record, the
// refresh before expiry, and the choice of the token for an interface URL
// (§5.5). The access and refresh tokens live in the secret store as separate
// entries; only the public Grant record goes to a state file.
package delegation

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4/jwt"
)

// DefaultSkew is the clock skew tolerated on exp, nbf and iat (PACT §3.2
// uses 30 s for the personal-agent JWT; the same is used here).
const DefaultSkew = 30 * time.Second

// Expect is what a delegation token must match (PACT §5.4, §5.5).
type Expect struct {
	// Issuer is the authorization server's issuer from its RFC 8414
	// metadata; the token's iss must equal it.
	Issuer string
	// JWKSURI is the metadata's jwks_uri, where the signing key is found.
	JWKSURI string
	// Audience is the Brand's interface URL; aud must be exactly it.
	Audience string
	// ClientID is the personal agent's issuer; client_id must equal it.
	ClientID string
	// Now is the time to check exp/nbf/iat against (zero: time.Now()).
	Now time.Time
	// Skew is the tolerated clock skew (zero: DefaultSkew).
	Skew time.Duration
}

// Claims are a delegation token's claims (PACT §5.4).
type Claims struct {
	Issuer    string    `json:"iss"`
	Subject   string    `json:"sub"`
	Audience  string    `json:"aud"`
	ClientID  string    `json:"client_id"`
	Scopes    []string  `json:"scope"`
	GrantID   string    `json:"grant_id"`
	IssuedAt  time.Time `json:"iat"`
	ExpiresAt time.Time `json:"exp"`
}

type rawClaims struct {
	jwt.Claims
	ClientID string  `json:"client_id"`
	Scope    *string `json:"scope"`
	GrantID  string  `json:"grant_id"`
}

// VerifyToken verifies a delegation token before first use (PACT §5.4):
// compact JWS signed ES256/RS256 (none, HMAC, unknown crit refused), key by
// kid at exp.JWKSURI, then iss == exp.Issuer, aud == exp.Audience (one value),
// client_id == exp.ClientID, exp present and not past (with skew), nbf/iat
// not in the future, sub, scope and grant_id present.
//
// Every failed claim check is collected into one *VerifyError ("aud mismatch:
// …; expired by 3m2s"). A key fetch failure is returned as is. The token
// itself never appears in an error.
func VerifyToken(ctx context.Context, keys KeySource, token string, exp Expect) (*Claims, error) {
	signed, err := VerifyJWS(ctx, keys, exp.JWKSURI, token, "delegation token")
	if err != nil {
		return nil, err
	}
	c, problems := checkClaims(signed.Payload, exp, true)
	if len(problems) > 0 {
		return nil, &VerifyError{What: "delegation token", Problems: problems}
	}
	return c, nil
}

// checkClaims decodes payload and checks it against exp. With checkIssuer
// false, iss is not compared (used for already-verified stored tokens).
func checkClaims(payload []byte, exp Expect, checkIssuer bool) (*Claims, []string) {
	var rc rawClaims
	if err := json.Unmarshal(payload, &rc); err != nil {
		return nil, []string{"claims are not a JSON object with the §5.4 claim types"}
	}
	now := exp.Now
	if now.IsZero() {
		now = time.Now()
	}
	skew := exp.Skew
	if skew == 0 {
		skew = DefaultSkew
	}
	var problems []string
	c := &Claims{Issuer: rc.Issuer, Subject: rc.Subject, ClientID: rc.ClientID, GrantID: rc.GrantID}
	if checkIssuer && rc.Issuer != exp.Issuer {
		problems = append(problems, fmt.Sprintf("iss mismatch: %q, want %q", rc.Issuer, exp.Issuer))
	}
	switch {
	case len(rc.Audience) == 0:
		problems = append(problems, "aud missing")
	case len(rc.Audience) > 1:
		problems = append(problems, fmt.Sprintf("aud has %d values, want exactly one (one Brand per token)", len(rc.Audience)))
	case rc.Audience[0] != exp.Audience:
		problems = append(problems, fmt.Sprintf("aud mismatch: %q, want the interface URL %q", rc.Audience[0], exp.Audience))
	}
	if len(rc.Audience) > 0 {
		c.Audience = rc.Audience[0]
	}
	if rc.ClientID != exp.ClientID {
		problems = append(problems, fmt.Sprintf("client_id mismatch: %q, want this profile's issuer %q", rc.ClientID, exp.ClientID))
	}
	if rc.Subject == "" {
		problems = append(problems, "sub missing")
	}
	if rc.GrantID == "" {
		problems = append(problems, "grant_id missing")
	}
	if rc.Scope == nil {
		problems = append(problems, "scope missing")
	} else {
		c.Scopes = strings.Fields(*rc.Scope)
	}
	if rc.Expiry == nil {
		problems = append(problems, "exp missing")
	} else {
		c.ExpiresAt = rc.Expiry.Time()
		if late := now.Sub(c.ExpiresAt); late > skew {
			problems = append(problems, "expired by "+late.Round(time.Second).String())
		}
	}
	if rc.NotBefore != nil {
		if early := rc.NotBefore.Time().Sub(now); early > skew {
			problems = append(problems, "not valid for another "+early.Round(time.Second).String()+" (nbf)")
		}
	}
	if rc.IssuedAt != nil {
		c.IssuedAt = rc.IssuedAt.Time()
		if early := c.IssuedAt.Sub(now); early > skew {
			problems = append(problems, "issued "+early.Round(time.Second).String()+" in the future (iat)")
		}
	}
	return c, problems
}

// unverifiedClaims decodes the payload of a token that was verified when it
// was stored, without checking its signature again.
func unverifiedClaims(token string) ([]byte, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, errors.New("stored delegation token is not a compact JWS")
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, errors.New("stored delegation token payload is not base64url")
	}
	return payload, nil
}
