//go:build !windows

// Several `pact serve` replicas on one PostgreSQL behind a real nginx
// (issue 30): stopped by SIGTERM and killed by SIGKILL, which Windows
// processes do not take.

package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pact-cli/pact/device"
	"github.com/pact-cli/pact/internal/replicaset"
	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/secrets"
	"github.com/pact-cli/pact/serverapi"
	"github.com/pact-cli/pact/store"
	"github.com/pact-cli/pact/store/storetest"
)

// replicaRateLimit is every replica's --rate-limit: requests per device
// per minute, counted in the database for all of them.
const replicaRateLimit = 24

// The replica set is started once for the package (three replicas,
// nginx, a database of its own) by the first test that needs it, and
// stopped after the last test (atExit). Each test makes Users and
// devices of its own, so that they do not meet, and runs beside the
// others; a test that calls every replica directly holds the set's read
// lock (allReplicas), the one that kills a replica its write lock.
var replicaFixture struct {
	once sync.Once
	set  *replicaset.Set
	err  error
	n    atomic.Int64
	up   sync.RWMutex // read: every replica is needed up; write: one is killed
}

// allReplicas is replicas for a test that calls each replica directly:
// none is killed until it ends.
func allReplicas(t *testing.T) *replicaset.Set {
	t.Helper()
	set := replicas(t)
	replicaFixture.up.RLock()
	t.Cleanup(replicaFixture.up.RUnlock)
	return set
}

// replicas returns the running set; a test without PostgreSQL or nginx
// is skipped saying why, or fails under CI=true.
func replicas(t *testing.T) *replicaset.Set {
	t.Helper()
	t.Parallel()
	server := storetest.RequirePostgres(t)
	if _, run, why, err := replicaset.FindNginx(); err != nil {
		t.Fatal(err)
	} else if !run {
		t.Skip(why)
	}
	f := &replicaFixture
	f.once.Do(func() { f.set, f.err = startReplicas(server) })
	if f.err != nil {
		t.Fatalf("starting the replicas: %v", f.err)
	}
	return f.set
}

func startReplicas(server string) (*replicaset.Set, error) {
	ctx := context.Background()
	c, err := pgx.Connect(ctx, server)
	if err != nil {
		return nil, err
	}
	defer c.Close(ctx)
	name := fmt.Sprintf("pact_replicas_%d", os.Getpid())
	if _, err := c.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pact-replicas")
	if err != nil {
		return nil, err
	}
	u, _ := url.Parse(server)
	u.Path = "/" + name
	set, err := replicaset.Start(ctx, replicaset.Options{Pact: pactBin, Database: u.String(), N: 3, Dir: dir,
		Serve: []string{"--rate-limit", fmt.Sprint(replicaRateLimit)}})
	atExit = append(atExit, func() {
		if set != nil {
			set.Stop()
		}
		os.RemoveAll(dir)
		if c, err := pgx.Connect(context.Background(), server); err == nil {
			c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
			c.Close(context.Background())
		}
	})
	return set, err
}

// operator is the server's operator: pact serve commands against the
// set's database, from the first replica's home.
func operator(t *testing.T, set *replicaset.Set) *env {
	return &env{t: t, home: set.OperatorHome(), extra: []string{"PACT_DATABASE_URL=" + set.Database()}}
}

// newUser adds a User of a name unique in the package and returns the
// enrolment code.
func newUser(t *testing.T, set *replicaset.Set) codeOut {
	t.Helper()
	name := fmt.Sprintf("user%d", replicaFixture.n.Add(1))
	return decode[codeOut](t, operator(t, set).must("serve", "user", "add", name, "--json"))
}

// enrolAt enrols a new device (its own PACT_HOME) through base (nginx or
// one replica).
func enrolAt(t *testing.T, base, code, name string) (*env, enrolled) {
	t.Helper()
	d := newDevice(t)
	return d, decode[enrolled](t, d.must("init", "--server", base, "--code", code, "--device-name", name, "--json"))
}

// clientAt is the device d's own client (its key from its PACT_HOME), its
// calls sent to base: nginx, or one replica directly.
func clientAt(t *testing.T, d *env, base string) *device.Client {
	t.Helper()
	dirs := store.Dirs{Config: filepath.Join(d.home, "config"), Data: filepath.Join(d.home, "data")}
	sec, err := secrets.Open("file", dirs.Data, 0)
	if err != nil {
		t.Fatal(err)
	}
	p := &profile.Profile{Name: "default", Dirs: dirs, Secrets: sec}
	c, err := p.Load()
	if err != nil {
		t.Fatal(err)
	}
	cl, err := device.NewClient(p, c, &http.Client{Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	cl.Link.URL = base
	return cl
}

// TestIssue30_EnrolmentCodeUsedOnceAcrossReplicas: a code used through one
// replica is refused through another and through nginx; of enrolments
// racing with one code through every replica at once, exactly one wins.
// The operator's registrations are the database's, seen from every
// replica's home.
func TestIssue30_EnrolmentCodeUsedOnceAcrossReplicas(t *testing.T) {
	set := allReplicas(t)
	r1, r2 := set.Replicas[0], set.Replicas[1]
	code := newUser(t, set)
	_, e := enrolAt(t, r1.URL, code.Code, "laptop")
	if e.Issuer != set.URL || e.User.ID != code.User.ID {
		t.Fatalf("enrolled through %s: %+v (issuer %s)", r1.URL, e, set.URL)
	}
	for _, base := range []string{r2.URL, set.URL} {
		d := newDevice(t)
		wantError(t, d.run("init", "--server", base, "--code", code.Code, "--json"), 3, "ENROLMENT_CODE_REFUSED", 400, "already used")
	}

	// Six enrolments with one new code, two through each replica, at once.
	again := decode[codeOut](t, operator(t, set).must("serve", "user", "code", code.User.Name, "--json"))
	var wg sync.WaitGroup
	results := make([]result, 6)
	for i := range results {
		d := newDevice(t)
		base := set.Replicas[i%len(set.Replicas)].URL
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = d.run("init", "--server", base, "--code", again.Code, "--device-name", fmt.Sprint("racer", i), "--json")
		}()
	}
	wg.Wait()
	won := 0
	for _, r := range results {
		switch {
		case r.code == 0:
			won++
		case r.code != 3 || !strings.Contains(r.stdout, "ENROLMENT_CODE_REFUSED"):
			t.Fatalf("a racing enrolment: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
	}
	if won != 1 {
		t.Fatalf("%d of 6 racing enrolments with one code won through three replicas; want 1", won)
	}

	// A registration the operator adds is every replica's.
	op := operator(t, set)
	prov := fmt.Sprintf("https://provider%d.example", replicaFixture.n.Add(1))
	op.must("serve", "provider", "add", prov, "--audience", "aud-1", "--json")
	other := &env{t: t, home: set.Replicas[2].Home, extra: op.extra}
	if out := other.must("serve", "provider", "list", "--json"); !strings.Contains(out.stdout, prov) {
		t.Fatalf("a registration made from one replica's home is not listed from another's:\n%s", out.stdout)
	}
	other.must("serve", "provider", "remove", prov, "--json")
}

// TestIssue30_RevocationRefusedAtOnceByEveryReplica: a device revoked
// through one replica is refused by every replica at its very next call,
// and a User's devices are the same list on every replica; a User the
// operator removes is refused by all at once too.
func TestIssue30_RevocationRefusedAtOnceByEveryReplica(t *testing.T) {
	set := allReplicas(t)
	code := newUser(t, set)
	laptop, _ := enrolAt(t, set.URL, code.Code, "laptop")
	code2 := decode[codeOut](t, laptop.must("devices", "add", "--json"))
	desktop, d2 := enrolAt(t, set.URL, code2.Code, "desktop")
	ctx := context.Background()
	for _, r := range set.Replicas {
		ds, err := clientAt(t, desktop, r.URL).Devices(ctx)
		if err != nil || len(ds) != 2 {
			t.Fatalf("the desktop's devices through %s: %+v %v", r.Addr, ds, err)
		}
	}
	if _, err := clientAt(t, laptop, set.Replicas[0].URL).Revoke(ctx, d2.Device.ID); err != nil {
		t.Fatal(err)
	}
	for _, r := range set.Replicas {
		_, err := clientAt(t, desktop, r.URL).Devices(ctx)
		var ae *serverapi.APIError
		if !errors.As(err, &ae) || ae.Reason != serverapi.ReasonUnauthenticated || !strings.Contains(ae.Message, "revoked") {
			t.Fatalf("the revoked desktop through %s: %v", r.Addr, err)
		}
	}
	wantError(t, desktop.run("devices", "--json"), 3, "UNAUTHENTICATED", 401, "revoked")
	laptop.must("devices", "--json")

	// The operator's view, from another replica's home: one active device;
	// the User removed, their last device is refused by every replica.
	op := &env{t: t, home: set.Replicas[1].Home, extra: []string{"PACT_DATABASE_URL=" + set.Database()}}
	users := decode[[]struct {
		Name    string `json:"name"`
		Devices int    `json:"devices"`
	}](t, op.must("serve", "user", "list", "--json"))
	found := false
	for _, u := range users {
		if u.Name == code.User.Name {
			found = u.Devices == 1
		}
	}
	if !found {
		t.Fatalf("user list: %+v, want %s with one active device", users, code.User.Name)
	}
	op.must("serve", "user", "remove", code.User.Name, "--json")
	for _, r := range set.Replicas {
		_, err := clientAt(t, laptop, r.URL).Devices(ctx)
		var ae *serverapi.APIError
		if !errors.As(err, &ae) || ae.Reason != serverapi.ReasonUnauthenticated {
			t.Fatalf("a removed User's device through %s: %v", r.Addr, err)
		}
	}
}

// TestIssue30_RateLimitHoldsAcrossReplicas: a device's requests are
// counted in the database, whichever replica answers: spread over three
// replicas, it gets the limit and not one more in a minute.
func TestIssue30_RateLimitHoldsAcrossReplicas(t *testing.T) {
	set := allReplicas(t)
	ctx := context.Background()
	// A window is a clock minute: a run that straddles two proves
	// nothing, and is made again with a new device (at most three times).
	for attempt := 1; ; attempt++ {
		code := newUser(t, set)
		d, _ := enrolAt(t, set.URL, code.Code, "phone")
		var cls []*device.Client
		for _, r := range set.Replicas {
			cls = append(cls, clientAt(t, d, r.URL))
		}
		start := time.Now()
		var refused error
		served := 0
		for i := 0; i < replicaRateLimit+1 && refused == nil; i++ {
			_, err := cls[i%len(cls)].Devices(ctx)
			if err == nil {
				served++
				continue
			}
			refused = err
		}
		if !start.Truncate(time.Minute).Equal(time.Now().Truncate(time.Minute)) {
			if attempt < 3 {
				continue
			}
			t.Fatal("three runs in a row straddled a minute")
		}
		var ae *serverapi.APIError
		if served != replicaRateLimit || !errors.As(refused, &ae) || ae.Reason != serverapi.ReasonRateLimited || ae.HTTPStatus != 429 {
			t.Fatalf("limit %d a minute over three replicas: %d served, then %v", replicaRateLimit, served, refused)
		}
		return
	}
}

// TestIssue30_KillNineOneReplicaNginxRoutesToTheOthers: a replica killed
// with SIGKILL; the next calls through nginx, reads and writes, are served
// by the others (a request that never reached a replica goes to the next
// one). The replica started again on its address serves again.
func TestIssue30_KillNineOneReplicaNginxRoutesToTheOthers(t *testing.T) {
	set := replicas(t)
	ctx := context.Background()
	code := newUser(t, set)
	d, _ := enrolAt(t, set.URL, code.Code, "laptop")
	cl := clientAt(t, d, set.URL)
	if _, err := cl.Devices(ctx); err != nil {
		t.Fatal(err)
	}
	victim := set.Replicas[2]
	replicaFixture.up.Lock()
	defer replicaFixture.up.Unlock()
	died, err := victim.Kill()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Devices(ctx); err != nil {
		t.Fatalf("the first call after a replica died: %v\nnginx: %s", err, set.NginxLog())
	}
	t.Logf("the next call was served %s after the replica's death", time.Since(died).Round(time.Microsecond))
	// Round robin over three: within six calls nginx picks the dead one
	// (until it is marked failed); a POST too.
	for i := 0; i < 6; i++ {
		if _, err := cl.Devices(ctx); err != nil {
			t.Fatalf("call %d after the death: %v", i+2, err)
		}
	}
	if _, err := cl.NewCode(ctx); err != nil {
		t.Fatalf("a POST after the death: %v", err)
	}
	d.must("devices", "--json")
	if err := victim.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := clientAt(t, d, victim.URL).Devices(ctx); err != nil {
		t.Fatalf("the replica started again: %v", err)
	}
}

// TestIssue30_ReplicaWithAnotherIdentityIsRefused: a pact serve on the
// set's database whose profile was made on its own (same issuer, another
// pairwise-sub secret) refuses to start, in one sentence saying what to
// copy, and listens nowhere.
func TestIssue30_ReplicaWithAnotherIdentityIsRefused(t *testing.T) {
	set := replicas(t)
	stranger := newEnv(t, set.URL)
	stranger.extra = append(stranger.extra, "PACT_DATABASE_URL="+set.Database())
	addr, err := replicaset.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	r := stranger.run("serve", "--addr", addr)
	if r.code != 2 || !strings.Contains(r.stderr, "pairwise-sub secret") || !strings.Contains(r.stderr, "default/sub-secret") {
		t.Fatalf("a replica with a profile of its own: exit %d\n%s", r.code, r.stderr)
	}
}
