package signer

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
)

// UserPairwiseSub derives the sub that a personal agent serving many Users
// (`pact serve`) sends to one Provider for one of its Users: HMAC-SHA256,
// under the server's pairwise-sub secret, of the User's id and the
// Provider's audience, each length-prefixed so that no pair of (user,
// audience) can collide with another; base64url, 43 characters.
//
// It is stable per (User, Provider) (PACT §3.2: "the personal agent MUST
// reuse the same sub for the same User"), unlinkable across Providers and
// across Users, holds no personal data, and never equals a one-User
// profile's PairwiseSub (another domain-separation label).
func UserPairwiseSub(secret []byte, userID, audience string) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("pact user pairwise sub v1\x00"))
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(userID)))
	m.Write(n[:])
	m.Write([]byte(userID))
	binary.BigEndian.PutUint64(n[:], uint64(len(audience)))
	m.Write(n[:])
	m.Write([]byte(audience))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}
