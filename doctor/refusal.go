package doctor

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/publish"
)

// RecentAudienceChange is how long after `pact provider add` replaced a
// registration's audience a refusal names the change as its likely cause.
const RecentAudienceChange = 7 * 24 * time.Hour

// RefusalCauses names what pact can see on its side that makes the Provider
// of reg refuse this profile's PA JWT (HTTP 401 UNAUTHENTICATED, PACT §3.2),
// most likely first, each one clause in plain words with its fix:
//
//   - reg's audience was replaced within RecentAudienceChange (the Provider
//     checks `aud` against the audience it assigned);
//   - the profile's discovery document or jwks_uri does not answer, or does
//     not serve the active key (the Provider checks the signature with the
//     JWKS it finds from the issuer, §3.1); when another profile has the
//     same issuer, that profile is named (one JWKS answers for both);
//
// nil when it sees none (then the cause is on the Provider's side: the
// registration it holds, or the clock). It fetches the profile's own
// discovery document and JWKS with o.HTTP, bounded by o.Timeout (0: 10 s);
// o.Profile must be initialised.
func RefusalCauses(ctx context.Context, o Options, reg profile.Registration) []string {
	r := &runner{o: o, rep: &Report{}}
	c, err := o.Profile.Load()
	if err != nil {
		return nil
	}
	var causes []string
	if reg.PreviousAudience != "" && reg.AudienceChangedAt != nil {
		if ago := r.now().Sub(*reg.AudienceChangedAt); ago >= 0 && ago < RecentAudienceChange {
			causes = append(causes, fmt.Sprintf("the audience registered for it was changed from %q to %q %s ago; if the Provider did not assign %q, register the one it did: `%s`",
				reg.PreviousAudience, reg.Audience, roundAgo(ago), reg.Audience,
				r.cmdWords("provider", "add", reg.URL, "--audience", reg.PreviousAudience)))
		}
	}
	fctx, cancel := r.ctx(ctx)
	live := publish.Fetch(fctx, o.HTTP, c)
	cancel()
	serve := fmt.Sprintf("keep `%s` running, or upload `%s` to your issuer", r.cmd("jwks serve"), r.cmd("jwks export DIR"))
	missing := ""
	switch {
	case live.JWKSErr != nil:
		causes = append(causes, fmt.Sprintf("the Provider cannot read your keys: %v; %s", live.JWKSErr, serve))
	case live.DiscoveryErr != nil:
		causes = append(causes, fmt.Sprintf("the Provider cannot find your keys: %v; %s", live.DiscoveryErr, serve))
	default:
		if a := c.Active(); a != nil && live.Has(*a) != nil {
			missing = fmt.Sprintf("your jwks_uri %s does not serve the key %s that signs your PA JWTs", live.JWKSURI, a.KID)
		}
	}
	if others := o.Profile.SharingIssuer(c.Issuer); missing != "" && len(others) > 0 {
		causes = append(causes, fmt.Sprintf("%s: the profile %s has the same issuer %s, and a Provider finds one JWKS per issuer (it may be serving that profile's keys); give each profile its own issuer",
			missing, quoteNames(others), c.Issuer))
	} else if missing != "" {
		causes = append(causes, missing+"; "+serve)
	}
	return causes
}

// roundAgo is d for people: minutes under an hour, hours under two days,
// else days.
func roundAgo(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "less than a minute"
	case d < time.Hour:
		return plural(int(d/time.Minute), "minute")
	case d < 48*time.Hour:
		return plural(int(d/time.Hour), "hour")
	}
	return plural(int(d/(24*time.Hour)), "day")
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}

func quoteNames(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
