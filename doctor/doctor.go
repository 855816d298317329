// Package doctor checks whether a profile can work on the real internet:
// its keyring, its identity and what Providers find when they fetch it
// (PACT §3.1), each Provider and Brand it talks to (§2.1, §2.2, §3.2) and
// its delegation grants (§5). Every check ends ok, warn or fail, with the
// fix to apply. `pact doctor` prints the Report.
package doctor

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/delegation"
	"github.com/pact-cli/pact/discovery"
	"github.com/pact-cli/pact/httpx"
	"github.com/pact-cli/pact/iostreams"
	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/publish"
	"github.com/pact-cli/pact/secrets"
	"github.com/pact-cli/pact/signer"
	"github.com/pact-cli/pact/store"
)

// Status is the outcome of one check.
type Status string

// The three outcomes. Only Fail makes the profile unable to work.
const (
	OK   Status = "ok"
	Warn Status = "warn"
	Fail Status = "fail"
)

// Check ids, stable for --json.
const (
	CheckKeyring    = "keyring"
	CheckProfile    = "profile"
	CheckSigningKey = "signing-key"
	CheckIssuer     = "issuer"
	CheckDiscovery  = "discovery"
	CheckJWKS       = "jwks"
	CheckStagedKey  = "staged-key"
	CheckKey        = "key"
	CheckProvider   = "provider"
	CheckCard       = "card"
	CheckPAJWT      = "pa-jwt"
	CheckClock      = "clock"
	CheckGrant      = "grant"
	CheckHistory    = "history"
	CheckDatabase   = "database"
)

// Check is one finding.
type Check struct {
	ID      string `json:"id"`                // one of the Check* ids
	Subject string `json:"subject,omitempty"` // the URL, kid or Brand it is about
	Status  Status `json:"status"`
	Summary string `json:"summary"`       // what was found, in plain words
	Fix     string `json:"fix,omitempty"` // what to do; empty when ok
	// Detail is the underlying error when Summary puts it in plain words
	// (`pact doctor` shows it under --debug).
	Detail string `json:"detail,omitempty"`
}

// Report is every check, in the order run.
type Report struct {
	Profile string  `json:"profile"`
	OK      bool    `json:"ok"` // no check failed
	Checks  []Check `json:"checks"`
}

// Counts returns how many checks ended ok, warn and fail.
func (r *Report) Counts() (ok, warn, fail int) {
	for _, c := range r.Checks {
		switch c.Status {
		case OK:
			ok++
		case Warn:
			warn++
		case Fail:
			fail++
		}
	}
	return
}

// Options are what Run checks.
type Options struct {
	// Profile is the profile; its Secrets is nil when opening the keyring
	// failed with SecretsErr.
	Profile    *profile.Profile
	SecretsErr error
	// HTTP is the client Providers' view is fetched with (an httpx client:
	// https only, except loopback).
	HTTP *http.Client
	// Conversations and Grants list the Brands this profile talks to; nil
	// means none.
	Conversations func() ([]conversation.Summary, error)
	Grants        func() ([]delegation.Grant, error)
	// Pins are the Brands' pins (nil: not compared). Doctor compares each
	// card with its pin and records nothing, not even on first contact.
	Pins discovery.Pins
	// Database, when set, opens the profile's database and checks it
	// (store.(*DB).Check: the history refusal, PRAGMA quick_check, the
	// schema version); an error fails the "database" check.
	Database func(context.Context) (store.Health, error)
	// Postgres is set when that database is PostgreSQL (store/postgres):
	// its check is a connection and the schema version, and its fixes are
	// the server's, not `pact restore`.
	Postgres bool
	// ImportProblems, when set, gives the files the one-time import of the
	// previous release's files could not read, and where they are kept.
	ImportProblems func() (problems []string, keptIn string)
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// Timeout bounds each network check (0: 10 s).
	Timeout time.Duration
	// FormatTime writes the times in summaries (nil: RFC 3339, UTC).
	FormatTime func(time.Time) string
}

// Clock-skew limits against a Provider's Date header: a Provider allows
// 30 s (§3.2); beyond Warn the margin is getting thin.
const (
	SkewWarn = 10 * time.Second
	SkewFail = 30 * time.Second
)

type runner struct {
	o   Options
	rep *Report
	cfg *profile.Config
	// names are the Brands' names by card URL, from the conversations.
	names map[string]string
	// dbFailed: the database check failed (what depends on it says no more).
	dbFailed bool
}

func (r *runner) time(t time.Time) string {
	if r.o.FormatTime != nil {
		return r.o.FormatTime(t)
	}
	return t.UTC().Format(time.RFC3339)
}

// label names a Brand as the other tables do, "Name (host)", so two Brands
// of the same name on different hosts or ports stay apart; the host alone
// when the name is unknown.
func label(name, cardURL string) string {
	host := cardURL
	if u, err := url.Parse(cardURL); err == nil && u.Host != "" {
		host = u.Host
	}
	if name == "" {
		return host
	}
	// A Brand's name is remote text on a single-line summary.
	return iostreams.SanitizeLine(name) + " (" + host + ")"
}

func (r *runner) add(c Check) { r.rep.Checks = append(r.rep.Checks, c) }

func (r *runner) now() time.Time {
	if r.o.Now != nil {
		return r.o.Now()
	}
	return time.Now()
}

func (r *runner) ctx(parent context.Context) (context.Context, context.CancelFunc) {
	t := r.o.Timeout
	if t == 0 {
		t = 10 * time.Second
	}
	return context.WithTimeout(parent, t)
}

func (r *runner) cmd(args string) string { return profile.Command(r.o.Profile.Name, args) }

// cmdWords is cmd with each word shell-quoted (iostreams.CommandHint).
func (r *runner) cmdWords(words ...string) string {
	return r.cmd(iostreams.CommandHint(words...))
}

// pinChanges compares card with its pin (discovery.Judge) without
// recording a pin: the changes that would stop pact send, and the
// fingerprint that `pact card --trust --expect` takes. No pin yet (first
// contact) is no change.
func (r *runner) pinChanges(ctx context.Context, card *discovery.Card) ([]string, string, error) {
	if r.o.Pins == nil {
		return nil, "", nil
	}
	// One card state (discovery.Judge): a change any command saw stops
	// doctor too, and one doctor sees is remembered for every command.
	j, err := discovery.Judge(ctx, r.o.Pins, card, r.now())
	if err != nil || !j.Had {
		return nil, "", err
	}
	return j.Changes, discovery.PinFingerprint(j.Next), nil
}

// Run runs every check. Checks that need what an earlier one found missing
// (no profile: no identity checks) are skipped, not failed twice.
func Run(ctx context.Context, o Options) *Report {
	r := &runner{o: o, rep: &Report{Profile: o.Profile.Name, Checks: []Check{}}, names: map[string]string{}}
	r.database(ctx)
	if r.keyring() && r.profile() {
		r.identity(ctx)
		r.brands(ctx)
		r.grants()
		r.history()
	}
	_, _, fail := r.rep.Counts()
	r.rep.OK = fail == 0
	return r.rep
}

// database: the profile's database opens, holds the history it had, passes
// PRAGMA quick_check and has this binary's schema version. A failure is
// Fail: every command that reads or writes history stops on it.
func (r *runner) database(ctx context.Context) {
	if r.o.Database == nil {
		return
	}
	h, err := r.o.Database(ctx)
	if errors.Is(err, store.ErrNewerSchema) {
		// Neither a restore nor the server's address: only a newer pact reads it.
		r.dbFailed = true
		r.add(Check{ID: CheckDatabase, Subject: h.Path, Status: Fail, Summary: "the profile's history cannot be used: " + err.Error(),
			Fix: "upgrade pact to the version that migrated this database (`" + r.cmd("version") + "` says which one runs here); nothing in it was changed", Detail: err.Error()})
		return
	}
	if r.o.Postgres {
		r.postgres(h, err)
		return
	}
	if err != nil {
		r.dbFailed = true
		fix := "restore the profile's history with `" + r.cmd("restore BACKUP") + "` (a file `pact backup` wrote)"
		sum := "the profile's history cannot be used: " + err.Error()
		var he *store.HistoryError
		if errors.As(err, &he) {
			fix = "put back pact.db together with its pact.db-wal, or " + fix +
				"; to start this profile afresh instead, move pact.db, pact.db-wal and " + store.HistoryMarker + " out of its folder"
			sum = "the profile's history cannot be used: " + he.Path + " " + he.Why + ", but this profile had history; pact will not start it afresh"
		}
		r.add(Check{ID: CheckDatabase, Subject: h.Path, Status: Fail, Summary: sum, Fix: fix, Detail: err.Error()})
		return
	}
	sum := fmt.Sprintf("the profile's history passes its integrity check (schema version %d)", h.SchemaVersion)
	if h.ReadOnly != nil {
		r.add(Check{ID: CheckDatabase, Subject: h.Path, Status: Warn, Summary: sum + ", but it can only be read here: nothing can be saved",
			Fix: "make PACT_HOME writable", Detail: h.ReadOnly.Error()})
		return
	}
	r.add(Check{ID: CheckDatabase, Subject: h.Path, Status: OK, Summary: sum})
}

// postgres is the database check of a profile on PostgreSQL.
func (r *runner) postgres(h store.Health, err error) {
	if err != nil {
		r.dbFailed = true
		r.add(Check{ID: CheckDatabase, Subject: h.Path, Status: Fail, Summary: "the profile's history cannot be used: " + err.Error(),
			Fix:    "check that the PostgreSQL server runs, that the URL (--database, PACT_DATABASE_URL or the config file's \"database\") names it, and that its role may connect and create tables",
			Detail: err.Error()})
		return
	}
	sum := fmt.Sprintf("the profile's history is in PostgreSQL, reachable (schema version %d)", h.SchemaVersion)
	if h.ReadOnly != nil {
		r.add(Check{ID: CheckDatabase, Subject: h.Path, Status: Warn, Summary: sum + ", but it only reads: nothing can be saved",
			Fix: "point pact at the primary server", Detail: h.ReadOnly.Error()})
		return
	}
	r.add(Check{ID: CheckDatabase, Subject: h.Path, Status: OK, Summary: sum})
}

// history: the import of the previous release's files left nothing out.
func (r *runner) history() {
	if r.o.ImportProblems == nil {
		return
	}
	problems, dir := r.o.ImportProblems()
	if len(problems) == 0 {
		return
	}
	sum := fmt.Sprintf("importing the files of the previous release, %d could not be read and were left out: %s", len(problems), strings.Join(problems, "; "))
	r.add(Check{ID: CheckHistory, Subject: dir, Status: Warn, Summary: sum,
		Fix: "the files are kept in " + dir + ": repair them or keep them as they are; pact does not read them again"})
}

// keyring: the secret store answers (a read of an absent entry is fine).
func (r *runner) keyring() bool {
	p := r.o.Profile
	if r.o.SecretsErr != nil {
		c := r.keyringFail(r.o.SecretsErr)
		if errors.Is(r.o.SecretsErr, profile.ErrKeyringConflict) {
			c.Fix = "unset PACT_KEYRING, or move the secrets as the message says"
		}
		r.add(c)
		return false
	}
	_, err := p.Secrets.Get(p.Name + "/doctor-probe")
	if err != nil && !errors.Is(err, secrets.ErrNotFound) {
		c := r.keyringFail(err)
		c.Subject = p.Secrets.Kind()
		r.add(c)
		return false
	}
	r.add(Check{ID: CheckKeyring, Subject: p.Secrets.Kind(), Status: OK, Summary: "secrets are kept in " + p.Secrets.Where()})
	return true
}

// keyringFail is the failed keyring check for err: an OS keyring that does
// not answer in plain words (the error itself as Detail), and the fix that
// fits the profile's state: before `pact init`, an init that keeps the
// secrets in a file; after it, the keyring that holds them must answer
// (moving them out needs it too).
func (r *runner) keyringFail(err error) Check {
	c := Check{ID: CheckKeyring, Status: Fail, Summary: err.Error()}
	if !errors.Is(err, secrets.ErrUnavailable) {
		return c
	}
	c.Summary, c.Fix = KeyringUnavailable(r.o.Profile)
	c.Detail = err.Error()
	return c
}

// KeyringUnavailable says in plain words that the OS keyring does not
// answer (secrets.ErrUnavailable), and the fix that fits p's state: before
// `pact init`, an init that keeps the secrets in a file (initFlags are the
// flags of the `pact init` the User typed, e.g. "--issuer", URL, repeated
// in it; none: --issuer https://YOUR-HOST); after it, the keyring that
// holds them must answer (moving them out needs it too). Doctor and every
// command's error line say the same.
func KeyringUnavailable(p *profile.Profile, initFlags ...string) (summary, fix string) {
	summary = "the OS keyring is not available: no keyring service answers on this machine, or it is locked"
	if !p.Exists() {
		init := profile.Command(p.Name, "init --keyring file --issuer https://YOUR-HOST")
		if len(initFlags) > 0 {
			// Quoted: what the User typed goes back into a shell.
			init = profile.CommandWords(p.Name, append([]string{"init", "--keyring", "file"}, initFlags...)...)
		}
		return summary, "start or unlock the OS keyring, or make this profile keep its secrets in a file: " + init
	}
	return summary, "start or unlock the OS keyring that holds this profile's secrets; to keep them in a file from then on, run " +
		profile.Command(p.Name, "keyring move --to file") + " once it answers (PACT_KEYRING=file alone cannot reach secrets already in the OS keyring)"
}

// profile: initialised, with its signing key and sub secret readable.
func (r *runner) profile() bool {
	p := r.o.Profile
	c, err := p.Load()
	if err != nil {
		fix := r.cmd("init --issuer https://YOUR-HOST")
		if !errors.Is(err, profile.ErrNotInitialised) {
			fix = "repair or remove the file named above, then " + fix
		}
		r.add(Check{ID: CheckProfile, Subject: p.Name, Status: Fail, Summary: err.Error(), Fix: fix})
		return false
	}
	r.cfg = c
	r.add(Check{ID: CheckProfile, Subject: p.Name, Status: OK, Summary: fmt.Sprintf("initialised: issuer %s", c.Issuer)})
	s, err := p.Signer(c)
	if err == nil {
		_, err = p.Sub("doctor")
	}
	if err != nil {
		fix := "restore the keyring that holds it, or make a new identity: " + r.cmd("init --issuer "+c.Issuer+" --force")
		if a := c.Active(); a != nil && a.KeyURI().Held() {
			fix = keyFix(r, *a, err)
		}
		r.add(Check{ID: CheckSigningKey, Subject: activeKID(c), Status: Fail, Summary: err.Error(), Fix: fix})
		return false
	}
	sum := fmt.Sprintf("%s key %s signs your PA JWTs", s.Alg(), s.KID())
	if s.Held() {
		sum = fmt.Sprintf("%s key %s at %s is the key that signs your PA JWTs (the key check below tries it)", s.Alg(), s.KID(), p.Where(*c.Active()))
	}
	r.add(Check{ID: CheckSigningKey, Subject: s.KID(), Status: OK, Summary: sum})
	return true
}

// identity: the issuer is https, and the live discovery document and JWKS
// carry every key that signs, as a Provider fetches them.
func (r *runner) identity(ctx context.Context) {
	c := r.cfg
	u, _ := url.Parse(c.Issuer)
	switch {
	case u != nil && u.Scheme == "https":
		r.add(Check{ID: CheckIssuer, Subject: c.Issuer, Status: OK, Summary: "the issuer is HTTPS"})
	case u != nil && u.Scheme == "http" && httpx.IsLoopback(u.Hostname()):
		r.add(Check{ID: CheckIssuer, Subject: c.Issuer, Status: OK, Summary: "the issuer is on loopback: only Providers on this machine can verify you"})
	default:
		r.add(Check{ID: CheckIssuer, Subject: c.Issuer, Status: Fail, Summary: "the issuer is not HTTPS: Providers refuse it",
			Fix: r.cmd("init --issuer https://YOUR-HOST") + " (then register the new issuer with each Provider)"})
	}
	fctx, cancel := r.ctx(ctx)
	live := publish.Fetch(fctx, r.o.HTTP, c)
	cancel()
	upload := fmt.Sprintf("run `%s`, upload DIR so it answers at your issuer (or keep `%s` running)", r.cmd("jwks export DIR"), r.cmd("jwks serve"))
	switch {
	case live.DiscoveryErr != nil:
		r.add(Check{ID: CheckDiscovery, Subject: live.DiscoveryURL, Status: Fail, Summary: live.DiscoveryErr.Error(), Fix: upload})
	case !publish.IsJSON(live.DiscoveryContentType):
		r.add(Check{ID: CheckDiscovery, Subject: live.DiscoveryURL, Status: Warn,
			Summary: fmt.Sprintf("served as %q, not application/json: some Providers refuse that", live.DiscoveryContentType),
			Fix:     "make the web server send Content-Type: application/json for it (README: Publishing your identity)"})
	default:
		r.add(Check{ID: CheckDiscovery, Subject: live.DiscoveryURL, Status: OK, Summary: "names your issuer and jwks_uri"})
	}
	if live.JWKSErr != nil {
		fix := upload
		if len(live.Private) > 0 {
			fix = "take the file down now, then " + r.cmd("key rotate") + " and re-export: its private keys are exposed"
		}
		r.add(Check{ID: CheckJWKS, Subject: live.JWKSURI, Status: Fail, Summary: live.JWKSErr.Error(), Fix: fix})
		for _, k := range c.Keys {
			r.key(ctx, k, live)
		}
		return
	}
	active := c.Active()
	if err := live.Has(*active); err != nil {
		fix := upload
		if others := r.o.Profile.SharingIssuer(c.Issuer); len(others) > 0 {
			// One issuer, one JWKS at the Provider (§3.1): the keys
			// published there may be the other profile's.
			fix = fmt.Sprintf("the profile %s has the same issuer %s, and a Provider finds one JWKS per issuer: give each profile its own issuer (`%s`, then register it with its Providers), or %s",
				quoteNames(others), c.Issuer, r.cmd("init --issuer URL"), upload)
		}
		r.add(Check{ID: CheckJWKS, Subject: live.JWKSURI, Status: Fail,
			Summary: fmt.Sprintf("%v: Providers refuse every PA JWT signed by the active key %s", err, active.KID), Fix: fix})
	} else if !publish.IsJSON(live.JWKSContentType) {
		r.add(Check{ID: CheckJWKS, Subject: live.JWKSURI, Status: Warn,
			Summary: fmt.Sprintf("serves the active key, but as %q, not application/json", live.JWKSContentType),
			Fix:     "make the web server send Content-Type: application/json for it (README: Publishing your identity)"})
	} else {
		r.add(Check{ID: CheckJWKS, Subject: live.JWKSURI, Status: OK,
			Summary: fmt.Sprintf("serves the active key %s, public members only", active.KID)})
	}
	for _, k := range c.Staged() {
		if err := live.Has(k); err != nil {
			r.add(Check{ID: CheckStagedKey, Subject: k.KID, Status: Warn,
				Summary: "the staged key is not live yet (" + err.Error() + "): do not activate it before it is", Fix: upload})
			continue
		}
		r.add(Check{ID: CheckStagedKey, Subject: k.KID, Status: OK,
			Summary: fmt.Sprintf("the staged key is live: switch to it with `%s`", r.cmd("key activate -- "+k.KID))})
	}
	for _, k := range c.Keys {
		r.key(ctx, k, live)
	}
}

// key checks one signing key where it lives: reachable (the keyring read,
// the token logged in to, the KMS key found), its public part the
// recorded one, a probe signature verified with it; and whether the live
// jwks_uri publishes it. A key that cannot sign fails when it is the
// active one (nothing can be sent), else warns.
func (r *runner) key(ctx context.Context, k profile.KeyInfo, live *publish.Live) {
	p := r.o.Profile
	kctx, cancel := r.ctx(ctx)
	err := p.CheckKey(kctx, r.cfg, k)
	cancel()
	if err != nil {
		st, sum := Warn, err.Error()
		if k.Active {
			st, sum = Fail, sum+"; no PA JWT can be signed, so pact sends nothing"
		}
		r.add(Check{ID: CheckKey, Subject: k.KID, Status: st, Summary: sum, Fix: keyFix(r, k, err)})
		return
	}
	st, pub := OK, "published at the jwks_uri"
	switch {
	case live.JWKSErr != nil:
		pub = "whether the jwks_uri publishes it is unknown (see the jwks check)"
	case live.Has(k) != nil:
		st, pub = Warn, "but the jwks_uri does not publish it ("+live.Has(k).Error()+")"
	}
	c := Check{ID: CheckKey, Subject: k.KID, Status: st,
		Summary: fmt.Sprintf("the %s %s key at %s is reachable and signs; %s", k.State(), k.Alg, p.Where(k), pub)}
	if st != OK {
		c.Fix = fmt.Sprintf("run `%s`, upload DIR so it answers at your issuer (or keep `%s` running)", r.cmd("jwks export DIR"), r.cmd("jwks serve"))
	}
	r.add(c)
}

// keyFix is the fix for a key that cannot sign.
func keyFix(r *runner, k profile.KeyInfo, err error) string {
	where := r.o.Profile.Where(k)
	switch {
	case errors.Is(err, signer.ErrKeyMismatch):
		return fmt.Sprintf("put the key %s back at %s, or publish the key now there as a new one: `%s`, then `%s`",
			k.KID, where, r.cmdWords("key", "rotate", "--key", k.KeyURI().String()), r.cmd("key activate -- NEWKID"))
	case !k.Active:
		return fmt.Sprintf("make it reachable again at %s, or stop publishing it: `%s`", where, r.cmd("key retire -- "+k.KID))
	}
	return fmt.Sprintf("make the key at %s reachable again (the summary says what is wrong), or move to another key: `%s`, publish, then `%s`",
		where, r.cmd("key rotate --key URI"), r.cmd("key activate -- NEWKID"))
}

func activeKID(c *profile.Config) string {
	if a := c.Active(); a != nil {
		return a.KID
	}
	return ""
}

// brand is one Brand the profile talks to.
type brand struct{ card, iface, name string }

func (r *runner) targets() ([]brand, error) {
	var out []brand
	seen := map[string]bool{}
	addB := func(card, iface, name string) {
		if card == "" || seen[card] {
			return
		}
		seen[card] = true
		out = append(out, brand{card, iface, name})
	}
	if r.o.Conversations != nil {
		sums, err := r.o.Conversations()
		if err != nil {
			return nil, err
		}
		for _, s := range sums {
			addB(s.Brand, s.InterfaceURL, s.BrandName)
			if s.BrandName != "" {
				r.names[s.Brand] = s.BrandName
			}
		}
	}
	if r.o.Grants != nil {
		gs, err := r.o.Grants()
		if err != nil {
			return nil, err
		}
		for _, g := range gs {
			addB(g.Brand, g.InterfaceURL, "")
		}
	}
	return out, nil
}

// brands checks each Brand (card, PA JWT accepted, clock) and each
// registered Provider that no Brand covers (reachable, clock).
func (r *runner) brands(ctx context.Context) {
	bs, err := r.targets()
	if err != nil && !r.dbFailed { // else the database check said why
		r.add(Check{ID: CheckCard, Status: Warn, Summary: "the local conversations and grants cannot be read: " + err.Error()})
	}
	covered := map[string]bool{}
	for _, b := range bs {
		if reg := r.brand(ctx, b); reg != "" {
			covered[reg] = true
		}
	}
	for _, reg := range r.cfg.Providers {
		if covered[reg.URL] {
			continue
		}
		r.provider(ctx, reg)
	}
}

// brand checks one Brand; it returns the URL of the registration used.
func (r *runner) brand(ctx context.Context, b brand) string {
	fctx, cancel := r.ctx(ctx)
	defer cancel()
	card, err := discovery.Fetch(fctx, r.o.HTTP, b.card)
	if err != nil {
		r.add(Check{ID: CheckCard, Subject: b.card, Status: Fail, Summary: err.Error(),
			Fix: fmt.Sprintf("check the Brand's address; `%s` shows what is wrong", r.cmd("card "+b.card))})
		return ""
	}
	name := label(card.Name(), b.card)
	r.names[b.card] = card.Name()
	if changes, fp, err := r.pinChanges(ctx, card); err != nil {
		r.add(Check{ID: CheckCard, Subject: b.card, Status: Warn, Summary: fmt.Sprintf("the Agent Card of %s is valid, but what you accepted for it cannot be read: %v", name, err)})
	} else if len(changes) > 0 {
		// pact send stops here (CARD_CHANGED): so does doctor, before any
		// PA JWT goes to the interface the changed card names.
		r.add(Check{ID: CheckCard, Subject: b.card, Status: Fail,
			Summary: fmt.Sprintf("the Agent Card of %s changed since you accepted it (%s): pact sends nothing to it until you accept the change", name, strings.Join(changes, ", ")),
			Fix:     fmt.Sprintf("`%s` shows the change; if it is expected, `%s`", r.cmdWords("card", b.card), r.cmdWords("card", b.card, "--trust", "--expect", fp))})
		return ""
	} else {
		r.add(Check{ID: CheckCard, Subject: b.card, Status: OK, Summary: fmt.Sprintf("the Agent Card of %s is valid", name)})
	}
	reg, ok := r.cfg.Match(card.InterfaceURL)
	if !ok {
		r.add(Check{ID: CheckPAJWT, Subject: card.InterfaceURL, Status: Fail,
			Summary: "no registered Provider serves " + name,
			Fix:     r.cmd("provider add " + conversation.SuggestProviderURL(card) + " --audience AUDIENCE")})
		return ""
	}
	r.tasks(fctx, name, card.InterfaceURL, *reg)
	return reg.URL
}

// tasks sends an authenticated GET {interface}/tasks?pageSize=1, which a
// Provider answers with an empty list (§2.2) once it accepts the PA JWT.
func (r *runner) tasks(ctx context.Context, name, iface string, reg profile.Registration) {
	p := r.o.Profile
	endpoint := strings.TrimRight(iface, "/") + "/tasks?pageSize=1"
	// The endpoint-origin rule (profile.CheckEndpoint): a PA JWT only goes under its registration.
	err := r.cfg.CheckEndpoint(reg, "tasks endpoint", endpoint)
	var s *signer.Signer
	if err == nil {
		s, err = p.Signer(r.cfg)
	}
	var tok string
	if err == nil {
		var sub string
		if sub, err = p.Sub(reg.Audience); err == nil {
			tok, err = s.Mint(reg.Audience, sub)
		}
	}
	if err != nil {
		r.add(Check{ID: CheckPAJWT, Subject: iface, Status: Fail, Summary: "cannot mint a PA JWT: " + err.Error()})
		return
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint, nil)
	if err != nil {
		r.add(Check{ID: CheckPAJWT, Subject: iface, Status: Fail, Summary: err.Error()})
		return
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Accept", "application/a2a+json, application/json")
	sent := r.now()
	resp, err := r.o.HTTP.Do(req)
	if err != nil {
		r.add(Check{ID: CheckPAJWT, Subject: iface, Status: Fail, Summary: fmt.Sprintf("%s is unreachable: %v", name, httpx.Describe(err)),
			Fix: "check your connection and the Brand's status; try again later"})
		return
	}
	httpx.ReadBody(resp.Body, 64<<10)
	resp.Body.Close()
	r.clock(iface, resp, sent)
	switch {
	case resp.StatusCode == http.StatusOK:
		r.add(Check{ID: CheckPAJWT, Subject: iface, Status: OK, Summary: fmt.Sprintf("%s accepts your PA JWT (key %s, audience %s)", name, s.KID(), reg.Audience)})
	case resp.StatusCode == http.StatusUnauthorized:
		fix := fmt.Sprintf("make sure the jwks check above passes, that this Provider knows your issuer %s, and that %q is the audience it assigned (`%s`)",
			r.cfg.Issuer, reg.Audience, r.cmd("provider add "+reg.URL+" --audience AUDIENCE"))
		if ago := r.now().Sub(derefTime(reg.AudienceChangedAt)); reg.PreviousAudience != "" && reg.AudienceChangedAt != nil && ago >= 0 && ago < RecentAudienceChange {
			// The likeliest cause, as a send's refusal names it.
			fix = fmt.Sprintf("the audience registered for it was changed from %q to %q %s ago: if the Provider did not assign %q, put back the one it did (`%s`); else %s",
				reg.PreviousAudience, reg.Audience, roundAgo(ago), reg.Audience, r.cmdWords("provider", "add", reg.URL, "--audience", reg.PreviousAudience), fix)
		}
		r.add(Check{ID: CheckPAJWT, Subject: iface, Status: Fail,
			Summary: fmt.Sprintf("%s refused your PA JWT (HTTP 401)", name), Fix: fix})
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed:
		r.add(Check{ID: CheckPAJWT, Subject: iface, Status: Warn,
			Summary: fmt.Sprintf("%s does not answer GET tasks (HTTP %d), so the PA JWT could not be checked", name, resp.StatusCode),
			Fix:     "send a message to find out: " + r.cmd("send "+iface+" hello")})
	default:
		r.add(Check{ID: CheckPAJWT, Subject: iface, Status: Warn,
			Summary: fmt.Sprintf("%s answered GET tasks with HTTP %d", name, resp.StatusCode), Fix: "try again later"})
	}
}

func derefTime(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

// provider checks a registered Provider no Brand covered: reachable (any
// HTTP answer), and its clock.
func (r *runner) provider(ctx context.Context, reg profile.Registration) {
	fctx, cancel := r.ctx(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(fctx, http.MethodGet, reg.URL, nil)
	if err != nil {
		r.add(Check{ID: CheckProvider, Subject: reg.URL, Status: Fail, Summary: err.Error()})
		return
	}
	sent := r.now()
	resp, err := r.o.HTTP.Do(req)
	if err != nil {
		r.add(Check{ID: CheckProvider, Subject: reg.URL, Status: Fail, Summary: fmt.Sprintf("unreachable: %v", httpx.Describe(err)),
			Fix: fmt.Sprintf("check the address, or remove it: `%s`", r.cmd("provider remove "+reg.URL))})
		return
	}
	resp.Body.Close()
	c := Check{ID: CheckProvider, Subject: reg.URL, Status: OK,
		Summary: "reachable (send a message to one of its Brands to check the PA JWT too)"}
	if ago := r.now().Sub(derefTime(reg.AudienceChangedAt)); reg.PreviousAudience != "" && reg.AudienceChangedAt != nil && ago >= 0 && ago < RecentAudienceChange {
		// No Brand of it to send a PA JWT to: the recent change is what
		// doctor can say (a wrong audience is refused on every send).
		c.Status = Warn
		c.Summary = fmt.Sprintf("reachable; its audience was changed from %q to %q %s ago, and no message has checked it since", reg.PreviousAudience, reg.Audience, roundAgo(ago))
		c.Fix = fmt.Sprintf("if sends to its Brands are refused, put back the audience the Provider assigned: `%s`", r.cmdWords("provider", "add", reg.URL, "--audience", reg.PreviousAudience))
	}
	r.add(c)
	r.clock(reg.URL, resp, sent)
}

// clock compares the response's Date with the local clock at the time the
// request was sent and the time it was answered.
func (r *runner) clock(subject string, resp *http.Response, sent time.Time) {
	d, err := http.ParseTime(resp.Header.Get("Date"))
	if err != nil {
		return
	}
	got := r.now()
	mid := sent.Add(got.Sub(sent) / 2)
	skew := mid.Sub(d).Round(time.Second) // > 0: this machine is ahead
	abs := skew
	if abs < 0 {
		abs = -abs
	}
	dir := "ahead of"
	if skew < 0 {
		dir = "behind"
	}
	c := Check{ID: CheckClock, Subject: subject, Status: OK, Summary: fmt.Sprintf("this machine's clock is within %s of the Provider's", SkewWarn)}
	fix := "synchronise this machine's clock (enable NTP, e.g. `timedatectl set-ntp true`)"
	switch {
	case abs > SkewFail:
		c.Status, c.Summary, c.Fix = Fail, fmt.Sprintf("this machine's clock is %s %s the Provider's: it refuses PA JWTs beyond %s", abs, dir, SkewFail), fix
	case abs > SkewWarn:
		c.Status, c.Summary, c.Fix = Warn, fmt.Sprintf("this machine's clock is %s %s the Provider's (it allows %s)", abs, dir, SkewFail), fix
	}
	r.add(c)
}

// grants reports dead grants and expired ones that cannot be refreshed.
func (r *runner) grants() {
	if r.o.Grants == nil {
		return
	}
	gs, err := r.o.Grants()
	if err != nil {
		r.add(Check{ID: CheckGrant, Status: Warn, Summary: "the grants cannot be read: " + err.Error()})
		return
	}
	now := r.now()
	for _, g := range gs {
		words := []string{"login", discovery.BrandArg(g.Brand)}
		for _, sc := range g.Scopes {
			words = append(words, "--scope", sc)
		}
		login := r.cmdWords(words...) // quoted: the scopes came from the Brand's server
		card := g.Brand
		if card == "" {
			card = g.InterfaceURL
		}
		name := label(r.names[g.Brand], card)
		switch {
		case g.Dead:
			since := ""
			if g.DeadSince != nil {
				since = " since " + r.time(*g.DeadSince)
			}
			r.add(Check{ID: CheckGrant, Subject: g.Brand, Status: Warn,
				Summary: "the delegation to " + name + " is dead" + since + " (the Brand no longer accepts it): messages go without it", Fix: login})
		case !g.ExpiresAt.After(now) && !g.Refreshable:
			r.add(Check{ID: CheckGrant, Subject: g.Brand, Status: Warn,
				Summary: "the delegation to " + name + " expired at " + r.time(g.ExpiresAt) + " and cannot be refreshed", Fix: login})
		default:
			// Stored, not verified: PACT defines no request that tests a
			// delegation token without sending a message (§5 names only
			// message:send), and a refresh would use up the refresh token.
			sum := "the delegation to " + name + " is stored, until " + r.time(g.ExpiresAt)
			if g.Refreshable {
				sum += ", refreshable"
			}
			sum += "; not checked against the Provider (the next delegated message does)"
			r.add(Check{ID: CheckGrant, Subject: g.Brand, Status: OK, Summary: sum})
		}
	}
}
