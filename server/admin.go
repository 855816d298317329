package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pact-cli/pact/errs"
	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/store"
)

// Admin is what the operator does to a server's database, running or not
// (`pact serve user …`, `pact serve provider …`): each change is one
// statement or transaction, so a running server sees it on its next
// request. Errors match profile.ErrInvalidInput (bad input) or
// profile.ErrNotFound, which the CLI maps to its exit codes.
type Admin struct {
	Store store.ServerBackend
	Now   func() time.Time
}

func (a *Admin) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

// UserSummary is a User with the count of their active devices.
type UserSummary struct {
	store.ServerUser
	Devices int `json:"devices"`
}

// AddUser makes a User and a first enrolment code for them.
func (a *Admin) AddUser(ctx context.Context, name string) (store.ServerUser, Code, error) {
	name = strings.TrimSpace(name)
	if err := CheckName("User", name); err != nil {
		return store.ServerUser{}, Code{}, errs.New(err.Error(), profile.ErrInvalidInput)
	}
	if strings.HasPrefix(name, "u_") {
		return store.ServerUser{}, Code{}, errs.New(`a User's name may not start with "u_" (the prefix of User ids)`, profile.ErrInvalidInput)
	}
	u := store.ServerUser{ID: newID("u_"), Name: name, Created: a.now().UTC()} // listed in the order they were added
	if err := a.Store.AddServerUser(ctx, u); errors.Is(err, store.ErrNameTaken) {
		return u, Code{}, errs.New(fmt.Sprintf("a User named %q exists; for a new enrolment code: pact serve user code %s", name, name), profile.ErrInvalidInput)
	} else if err != nil {
		return u, Code{}, err
	}
	c, err := IssueCode(ctx, a.Store, u.ID, "operator", a.now())
	return u, c, err
}

// User finds a User by id or name.
func (a *Admin) User(ctx context.Context, ref string) (store.ServerUser, error) {
	u, err := a.Store.ServerUser(ctx, ref)
	if errors.Is(err, store.ErrServerNotFound) {
		return u, errs.New(fmt.Sprintf("no User %q on this server (see pact serve user list)", ref), profile.ErrNotFound)
	}
	return u, err
}

// NewCode makes another enrolment code for an existing User.
func (a *Admin) NewCode(ctx context.Context, ref string) (store.ServerUser, Code, error) {
	u, err := a.User(ctx, ref)
	if err != nil {
		return u, Code{}, err
	}
	c, err := IssueCode(ctx, a.Store, u.ID, "operator", a.now())
	return u, c, err
}

// Users lists the Users with their active devices' count.
func (a *Admin) Users(ctx context.Context) ([]UserSummary, error) {
	us, err := a.Store.ServerUsers(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]UserSummary, 0, len(us))
	for _, u := range us {
		ds, err := a.Store.Devices(ctx, u.ID)
		if err != nil {
			return nil, err
		}
		n := 0
		for _, d := range ds {
			if d.Revoked == nil {
				n++
			}
		}
		out = append(out, UserSummary{ServerUser: u, Devices: n})
	}
	return out, nil
}

// RemoveUser deletes a User with their devices (refused at their next
// call) and enrolment codes.
func (a *Admin) RemoveUser(ctx context.Context, ref string) (store.ServerUser, error) {
	u, err := a.User(ctx, ref)
	if err != nil {
		return u, err
	}
	if err := a.Store.RemoveServerUser(ctx, u.ID); errors.Is(err, store.ErrServerNotFound) {
		return u, errs.New(fmt.Sprintf("no User %q on this server (see pact serve user list)", ref), profile.ErrNotFound)
	} else if err != nil {
		return u, err
	}
	return u, nil
}

// AddProvider records the audience a Provider assigned to the server
// (PACT §3.1), as `pact provider add` does for a profile: the URL is
// checked and normalised (profile.NormaliseProviderURL); the audience is
// kept verbatim. Adding a URL again replaces its audience; replaced is the
// audience it had ("" when it was not registered, or had the same one).
func (a *Admin) AddProvider(ctx context.Context, rawURL, audience string) (r store.ServerRegistration, replaced string, err error) {
	u, err := profile.NormaliseProviderURL(rawURL)
	if err != nil {
		return r, "", err
	}
	if strings.TrimSpace(audience) == "" {
		return r, "", errs.New("--audience is required: it is the value the Provider assigned to this server", profile.ErrInvalidInput)
	}
	old, err := a.Store.Registrations(ctx)
	if err != nil {
		return r, "", err
	}
	for _, o := range old {
		if o.URL == u && o.Audience != audience {
			replaced = o.Audience
		}
	}
	r = store.ServerRegistration{URL: u, Audience: audience, Added: a.now().UTC().Truncate(time.Second)}
	return r, replaced, a.Store.PutRegistration(ctx, r)
}

// Providers lists the registrations.
func (a *Admin) Providers(ctx context.Context) ([]store.ServerRegistration, error) {
	return a.Store.Registrations(ctx)
}

// RemoveProvider deletes the registration of a Provider URL.
func (a *Admin) RemoveProvider(ctx context.Context, rawURL string) (string, error) {
	u, err := profile.NormaliseProviderURL(rawURL)
	if err != nil {
		return "", err
	}
	if err := a.Store.RemoveRegistration(ctx, u); errors.Is(err, store.ErrServerNotFound) {
		return u, errs.New(fmt.Sprintf("no Provider %s is registered (see pact serve provider list)", u), profile.ErrNotFound)
	} else if err != nil {
		return u, err
	}
	return u, nil
}
