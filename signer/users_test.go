package signer

import "testing"

// TestSection3_2_UserPairwiseSubStablePerUserAndProvider: a server's sub is
// the same for one (User, Provider) every time, and differs across Users,
// across Providers, from the one-User derivation, and for pairs that would
// collide if the two values were simply concatenated.
func TestSection3_2_UserPairwiseSubStablePerUserAndProvider(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	a := UserPairwiseSub(secret, "u1", "aud-x")
	if a != UserPairwiseSub(secret, "u1", "aud-x") {
		t.Fatal("not stable")
	}
	if len(a) != 43 {
		t.Fatalf("len %d, want 43", len(a))
	}
	seen := map[string]string{a: "u1/aud-x"}
	for _, c := range [][2]string{{"u2", "aud-x"}, {"u1", "aud-y"}, {"u1a", "ud-x"}, {"u1aud-x", ""}, {"", "u1aud-x"}} {
		s := UserPairwiseSub(secret, c[0], c[1])
		if prev, dup := seen[s]; dup {
			t.Fatalf("%s/%s has the same sub as %s", c[0], c[1], prev)
		}
		seen[s] = c[0] + "/" + c[1]
	}
	if PairwiseSub(secret, "aud-x") == a {
		t.Fatal("a server's sub equals the one-User sub")
	}
	if UserPairwiseSub([]byte("another secret of 32 bytes......"), "u1", "aud-x") == a {
		t.Fatal("the sub does not depend on the secret")
	}
}
