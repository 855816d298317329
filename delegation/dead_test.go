package delegation

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"testing"
)

// TestSection5_5_RefusedUnrefreshableGrantIsMarkedDead: message:send
// refuses the token (401 invalid_token) and the refresh gets
// invalid_grant: Send fails with a LoginRequiredError carrying 401, the
// grant is marked dead with the date, and a new Accept (pact login) makes
// it live again.
func TestSection5_5_RefusedUnrefreshableGrantIsMarkedDead(t *testing.T) {
	f := newFixture(t)
	f.ts.respond = func(w http.ResponseWriter, _ url.Values) bool {
		w.WriteHeader(400)
		fmt.Fprint(w, `{"error":"invalid_grant"}`)
		return true
	}
	f.accept(t, f.k.sign(t, claimsAt(t0, nil), nil), "rt_1")
	err := f.m.Send(context.Background(), iface, func(string, *Grant) error { return ErrInvalidToken })
	var lr *LoginRequiredError
	if !errors.As(err, &lr) || lr.HTTPStatus != http.StatusUnauthorized {
		t.Fatalf("err = %#v", err)
	}
	g, err := f.m.Grant(iface)
	if err != nil || !g.Dead || g.DeadSince == nil || !g.DeadSince.Equal(t0.UTC().Truncate(1e9)) {
		t.Fatalf("grant after the refusal: %+v %v", g, err)
	}
	f.accept(t, f.k.sign(t, claimsAt(t0, nil), nil), "rt_1")
	if g, _ := f.m.Grant(iface); g.Dead || g.DeadSince != nil {
		t.Fatalf("a new login left the grant dead: %+v", g)
	}
}

// TestSection5_5_TransientRefreshFailureDoesNotKillTheGrant: a refresh that
// fails for another reason (the token endpoint is down) fails the turn but
// leaves the grant usable.
func TestSection5_5_TransientRefreshFailureDoesNotKillTheGrant(t *testing.T) {
	f := newFixture(t)
	f.ts.respond = func(w http.ResponseWriter, _ url.Values) bool {
		w.WriteHeader(503)
		return true
	}
	f.accept(t, f.k.sign(t, claimsAt(t0, nil), nil), "rt_1")
	err := f.m.Send(context.Background(), iface, func(string, *Grant) error { return ErrInvalidToken })
	if !errors.Is(err, ErrLoginRequired) {
		t.Fatalf("err = %v", err)
	}
	if g, _ := f.m.Grant(iface); g.Dead {
		t.Fatal("a transient refresh failure marked the grant dead")
	}
}
