package receipts

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/go-jose/go-jose/v4"
)

// AddSigned archives a receipt that arrives with the public key that signed
// it (a receipt bundle line: {"jws", "jwk"}), not with a reply: the
// signature is verified with jwk (ES256 or RS256, as Verify), and the
// expectation kept with it is taken from its own signed claims (pa, brand,
// grantId, user, scopesUsed) plus jwksURI when known. So "verified" here
// means signed by that key; it says nothing of a grant of this profile.
// A receipt whose signature does not verify is not archived: the error is
// a *delegation.VerifyError listing why. A receipt already archived as
// verified stays as it is.
func (a *Archive) AddSigned(jws string, jwk *jose.JSONWebKey, jwksURI string) (*Entry, error) {
	if jwk == nil || !jwk.Valid() || !jwk.IsPublic() {
		return nil, errors.New("receipts: the key is not a valid public JWK")
	}
	p, err := jwsPayload(jws)
	if err != nil {
		return nil, err
	}
	var c Claims
	if err := json.Unmarshal(p, &c); err != nil {
		return nil, fmt.Errorf("receipts: the signed payload is not a §5.6 claims object: %w", err)
	}
	exp := Expect{PA: c.PA, Brand: c.Brand, GrantID: c.GrantID, User: c.User,
		Scopes: append([]string(nil), c.ScopesUsed...), JWKSURI: jwksURI}
	res, err := VerifyOffline(Receipt{JWS: jws}, jwk, exp)
	if err != nil {
		return nil, err
	}
	return a.Put(res)
}
