package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pact-cli/pact/a2aclient"
	"github.com/pact-cli/pact/doctor"
	"github.com/pact-cli/pact/httpx"
	"github.com/pact-cli/pact/profile"
)

// identityRefused is a PA JWT the Provider refused (UNAUTHENTICATED, HTTP
// 401, PACT §3.2) told with what pact can see on its side
// (doctor.RefusalCauses). It classifies as the refusal it wraps (exit 3,
// the same --json reason and status).
type identityRefused struct {
	err    error // as the turn returned it
	ae     *a2aclient.Error
	reg    profile.Registration
	issuer string
	causes []string
	doctor string // the `pact doctor` command for this profile
}

func (e identityRefused) Unwrap() error { return e.err }

func (e identityRefused) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the Provider %s did not accept this personal agent's identity", e.reg.URL)
	switch len(e.causes) {
	case 0:
		// Nothing wrong on this side: the keys are published and the
		// registration did not change lately.
		fmt.Fprintf(&b, " although your keys are published: check that the Provider registered your issuer %s with the audience %q (see `pact whoami`), and that this machine's clock is right", e.issuer, e.reg.Audience)
	case 1:
		b.WriteString("; the likely cause: " + e.causes[0])
	default:
		b.WriteString("; the likely causes: " + strings.Join(e.causes, "; and "))
	}
	if e.ae.Attempts > 1 {
		fmt.Fprintf(&b, " (tried %d times)", e.ae.Attempts)
	}
	fmt.Fprintf(&b, ". `%s` checks everything a Provider checks", e.doctor)
	return b.String()
}

// explainRefusal turns a PA JWT refused by the Provider of reg into an
// identityRefused naming its likely causes; any other error (a clock the
// Provider's Date shows to be off already says so) is returned as it is.
func (a *app) explainRefusal(ctx context.Context, reg profile.Registration, err error) error {
	var ae *a2aclient.Error
	if !errors.As(err, &ae) || ae.Reason != a2aclient.ReasonUnauthenticated || httpx.ClockHint(ae.ClockOffset) != "" {
		return err
	}
	var ir identityRefused
	if errors.As(err, &ir) {
		return err
	}
	p, c, lerr := a.loadProfile()
	if lerr != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	causes := doctor.RefusalCauses(ctx, doctor.Options{Profile: p, HTTP: a.httpClient(), Timeout: 5 * time.Second}, reg)
	return identityRefused{err: err, ae: ae, reg: reg, issuer: c.Issuer, causes: causes, doctor: profile.Command(a.profile, "doctor")}
}
