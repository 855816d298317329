package delegation

import (
	"context"
	"errors"
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
	f.ts.respond = refuseInvalidGrant
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

// TestSection5_5_DeadGrantIsNotRefreshable: a grant marked dead reads as
// not refreshable (Get and List), even when an older record stored it with
// refreshable true, so `pact grants --jq '.[] | select(.refreshable | not)'`
// finds it.
func TestSection5_5_DeadGrantIsNotRefreshable(t *testing.T) {
	f := newFixture(t)
	f.ts.respond = refuseInvalidGrant
	if g := f.accept(t, f.k.sign(t, claimsAt(t0, nil), nil), "rt_1"); !g.Refreshable {
		t.Fatalf("a grant with a refresh token is not refreshable: %+v", g)
	}
	f.m.Send(context.Background(), iface, func(string, *Grant) error { return ErrInvalidToken })
	g, err := f.m.Grant(iface)
	if err != nil || !g.Dead || g.Refreshable {
		t.Fatalf("dead grant: %+v %v", g, err)
	}
	// An older record: dead, but stored as refreshable.
	g.Refreshable = true
	if err := f.m.Store.Put(*g); err != nil {
		t.Fatal(err)
	}
	if g, _ := f.m.Grant(iface); g.Refreshable {
		t.Fatalf("Get: a dead grant reads as refreshable: %+v", g)
	}
	list, err := f.m.List()
	if err != nil || len(list) != 1 || list[0].Refreshable {
		t.Fatalf("List: %+v %v", list, err)
	}
}

// TestSection5_5_RefreshedTokenAlsoRefusedMarksTheGrantDead: message:send
// refuses the token, the refresh succeeds, and message:send refuses the
// new token too: Send fails with a LoginRequiredError (401) and the grant
// is marked dead, with the date, so the next turn asks for `pact login`
// instead of refreshing again.
func TestSection5_5_RefreshedTokenAlsoRefusedMarksTheGrantDead(t *testing.T) {
	f := newFixture(t)
	access := f.k.sign(t, claimsAt(t0, nil), nil)
	f.accept(t, access, "rt_1")
	var sent []string
	err := f.m.Send(context.Background(), iface, func(tok string, _ *Grant) error {
		sent = append(sent, tok)
		return ErrInvalidToken
	})
	var lr *LoginRequiredError
	if !errors.As(err, &lr) || lr.HTTPStatus != http.StatusUnauthorized {
		t.Fatalf("err = %#v", err)
	}
	if len(sent) != 2 || sent[1] == access || f.ts.refresh.Load() != 1 {
		t.Fatalf("sends %d (second token new: %v), refreshes %d; want the refreshed token sent once", len(sent), len(sent) == 2 && sent[1] != access, f.ts.refresh.Load())
	}
	g, err := f.m.Grant(iface)
	if err != nil || !g.Dead || g.DeadSince == nil || !g.DeadSince.Equal(t0.UTC().Truncate(1e9)) || g.Refreshable {
		t.Fatalf("grant after the refreshed token was refused: %+v %v", g, err)
	}
}
