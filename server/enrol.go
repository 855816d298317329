package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/pact-cli/pact/devicetoken"
	"github.com/pact-cli/pact/serverapi"
	"github.com/pact-cli/pact/store"
)

// EnrolmentCodeTTL is how long an enrolment code can be used (once).
const EnrolmentCodeTTL = 15 * time.Minute

// codeBytes is the randomness of an enrolment code: 160 bits.
const codeBytes = 20

var codeEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// Code is a one-time enrolment code as shown to the operator or the User
// once; only its hash (CodeHash) is stored.
type Code struct {
	Code    string    // four groups of eight base32 characters
	Expires time.Time // created + EnrolmentCodeTTL
}

// newCode makes a code: 160 random bits, base32 in lower case, in four
// groups of eight joined by "-" (abcdefgh-ijklmnop-qrstuvwx-yz234567).
func newCode() (string, error) {
	var b [codeBytes]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	s := strings.ToLower(codeEncoding.EncodeToString(b[:]))
	return s[0:8] + "-" + s[8:16] + "-" + s[16:24] + "-" + s[24:32], nil
}

// NormaliseCode is a code as typed, in lower case without hyphens or
// spaces, so that "ABCD EFGH-…" and "abcdefgh…" are one code.
func NormaliseCode(code string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || unicode.IsSpace(r) {
			return -1
		}
		return unicode.ToLower(r)
	}, code)
}

// CodeHash is the stored form of a code: SHA-256 of NormaliseCode, in
// hex. A code carries 160 random bits, so no slow hash is needed.
func CodeHash(code string) string {
	sum := sha256.Sum256([]byte(NormaliseCode(code)))
	return hex.EncodeToString(sum[:])
}

// IssueCode makes a one-time code for userID, valid EnrolmentCodeTTL from
// now, and stores its hash; createdBy is "operator" or the device id that
// asked (`pact devices add`).
func IssueCode(ctx context.Context, st store.ServerBackend, userID, createdBy string, now time.Time) (Code, error) {
	c, err := newCode()
	if err != nil {
		return Code{}, err
	}
	exp := now.Add(EnrolmentCodeTTL)
	if err := st.AddEnrolmentCode(ctx, store.EnrolmentCode{Hash: CodeHash(c), UserID: userID, Created: now, Expires: exp, CreatedBy: createdBy}); err != nil {
		return Code{}, err
	}
	return Code{Code: c, Expires: exp.UTC().Truncate(time.Second)}, nil
}

// newID is a prefix and 80 random bits in base32 lower case ("d_…").
func newID(prefix string) string {
	var b [10]byte
	rand.Read(b[:])
	return prefix + strings.ToLower(codeEncoding.EncodeToString(b[:]))
}

// CheckName checks a User's or a device's name: 1 to 64 characters,
// printable, no control or invisible characters, not only spaces.
func CheckName(what, name string) error {
	if strings.TrimSpace(name) == "" || utf8.RuneCountInString(name) > 64 || !utf8.ValidString(name) {
		return fmt.Errorf("a %s's name is 1 to 64 characters", what)
	}
	for _, r := range name {
		if !unicode.IsPrint(r) || unicode.Is(unicode.Cf, r) {
			return fmt.Errorf("a %s's name may not hold control or invisible characters", what)
		}
	}
	return nil
}

// apiDevice is a stored device as the API shows it to callerDevice's User.
func apiDevice(d store.ServerDevice, callerDevice string) serverapi.Device {
	out := serverapi.Device{ID: d.ID, Name: d.Name, KID: d.KID, State: serverapi.StateActive, Current: d.ID == callerDevice,
		Created: d.Created.UTC().Truncate(time.Second)}
	if d.LastSeen != nil {
		t := d.LastSeen.UTC().Truncate(time.Second)
		out.LastSeen = &t
	}
	if d.Revoked != nil {
		t := d.Revoked.UTC().Truncate(time.Second)
		out.Revoked, out.State = &t, serverapi.StateRevoked
	}
	return out
}

// enrol answers POST /v1/enrol: the device proves it holds its key
// (devicetoken.VerifyProof, aud = this issuer), then the code is used
// once and the device recorded, in one transaction of the Store. Every
// refused code (unknown, expired, used) gets the same answer.
func (s *Server) enrol(w http.ResponseWriter, r *http.Request) error {
	var req serverapi.EnrolRequest
	if err := DecodeJSON(r, &req); err != nil {
		return err
	}
	if req.Code == "" || req.Proof == "" {
		return BadRequest("an enrolment needs the code and the proof of the device key")
	}
	if err := CheckName("device", req.Name); err != nil {
		return BadRequest("%v", err)
	}
	now := s.now()
	jwk, kid, err := devicetoken.VerifyProof(req.Proof, s.opts.Identity.Issuer(), now)
	var te *devicetoken.Error
	if errors.As(err, &te) {
		s.metrics.enrolments.WithLabelValues("refused").Inc()
		return BadRequest("%s", te.Public)
	}
	if err != nil {
		return err
	}
	pub, err := json.Marshal(jwk)
	if err != nil {
		return err
	}
	d := store.ServerDevice{ID: newID("d_"), Name: strings.TrimSpace(req.Name), KID: kid, JWK: string(pub), Created: now}
	u, d, err := s.opts.Store.Enrol(r.Context(), CodeHash(req.Code), now, d)
	if errors.Is(err, store.ErrCodeRefused) {
		s.metrics.enrolments.WithLabelValues("refused").Inc()
		return &Error{Status: http.StatusBadRequest, Reason: serverapi.ReasonCodeRefused,
			Message: "this enrolment code is unknown, expired or already used; ask for a new one (the operator: pact serve user code NAME; another device of yours: pact devices add)"}
	}
	if err != nil {
		return err
	}
	s.metrics.enrolments.WithLabelValues("enrolled").Inc()
	writeJSON(w, http.StatusCreated, serverapi.Enrolled{Issuer: s.opts.Identity.Issuer(), User: serverapi.User{ID: u.ID, Name: u.Name}, Device: apiDevice(d, d.ID)})
	return nil
}
