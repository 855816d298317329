package server

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/pact-cli/pact/errs"
	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/seal"
	"github.com/pact-cli/pact/store"
)

// What the replicas of one server must share (issue 30), checked when
// each starts against what the first one recorded in the database
// (store.ServerState.SharedValue; the first recorded wins):
//
//   - the issuer: Providers compare it exactly, and devices' tokens are
//     addressed to it;
//   - the pairwise-sub secret: with another one, every User would be
//     somebody else to every Provider (PACT §3.2); it is compared by a
//     sub it derives for a User and an audience that do not exist, never
//     by itself;
//   - the data key that seals tokens in the database: a sample sealed by
//     the first replica must open here.
//
// A replica that differs refuses to start, saying what to copy from the
// first. The signing keys are not compared here: every replica serves the
// JWKS of its own copy of the profile, so a rotation is made on every
// copy (or the key is one KMS key): see the README.

// ErrNotShared matches CheckShared's refusals (a usage error: exit 2).
var ErrNotShared = fmt.Errorf("%w: this replica does not share the server's identity", profile.ErrInvalidInput)

// The keys of the values recorded, and the sample's plaintext.
const (
	sharedIssuer  = "issuer"
	sharedSub     = "sub-check"
	sharedDataKey = "data-key-check"
	dataKeySample = "pact serve: a sample sealed by the first replica, opened by every other"
	checkUser     = "pact-serve-replica-check"
)

// CheckShared records this replica's issuer, sub-secret check and
// data-key sample (Options.DataKeys) unless a replica before it recorded
// them, and refuses (ErrNotShared, one sentence naming what to copy) when
// this replica's differ. Sealing the sample makes the first data key when
// there is none, so that copies of the profile made after the first
// replica started share it. `pact serve` calls it before it listens.
func (s *Server) CheckShared(ctx context.Context) error {
	return checkShared(ctx, s.opts.Store, s.opts.Identity, s.opts.DataKeys, s.now())
}

func checkShared(ctx context.Context, st store.ServerState, id *Identity, sealer seal.Sealer, now time.Time) error {
	name := id.Profile().Name
	v, err := st.SharedValue(ctx, sharedIssuer, id.Issuer(), now)
	if err != nil {
		return err
	}
	if v != id.Issuer() {
		return errs.New(fmt.Sprintf("this replica's issuer is %s, but the database is served under %s by the replicas before it: every replica serves one issuer (give --issuer %s, or use a copy of the first replica's profile)",
			id.Issuer(), v, v), ErrNotShared)
	}
	sub := id.Sub(checkUser, id.Issuer())
	if v, err = st.SharedValue(ctx, sharedSub, sub, now); err != nil {
		return err
	}
	if v != sub {
		return errs.New(fmt.Sprintf("this replica's pairwise-sub secret differs from the one the replicas before it use, so its Users would be other people to every Provider: copy the keyring entry %s/sub-secret (or the file keyring's secrets.json) from the first replica's profile",
			name), ErrNotShared)
	}
	if sealer == nil {
		return nil
	}
	aad := seal.AAD("server", sharedDataKey)
	sample, err := sealer.Seal([]byte(dataKeySample), aad)
	if err != nil {
		return fmt.Errorf("sealing a sample with this replica's data key: %w", err)
	}
	enc, err := json.Marshal(sample)
	if err != nil {
		return err
	}
	if v, err = st.SharedValue(ctx, sharedDataKey, base64.StdEncoding.EncodeToString(enc), now); err != nil {
		return err
	}
	var kept store.SealedSecret
	raw, err := base64.StdEncoding.DecodeString(v)
	if err == nil {
		err = json.Unmarshal(raw, &kept)
	}
	if err == nil {
		var plain []byte
		plain, err = sealer.Open(kept, aad)
		if err == nil && string(plain) != dataKeySample {
			err = seal.ErrOpen
		}
	}
	if err != nil {
		if !errors.Is(err, seal.ErrOpen) {
			return fmt.Errorf("the data-key sample in the database: %w", err)
		}
		return errs.New(fmt.Sprintf("this replica's data key does not open what the replicas before it sealed, so it could not read the tokens they keep in the database: copy the keyring entries %s/data-key/… (or the file keyring's secrets.json) from the first replica's profile",
			name), ErrNotShared)
	}
	return nil
}
