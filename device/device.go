// Package device is this device's side of `pact serve`: enrolling with a
// one-time code (a device key made here, kept in the profile's keyring or
// file, its public half sent with a proof of possession), the server
// profile it records, and authenticated calls to the server, each carrying
// a fresh device token (package devicetoken) and nothing else: no bearer
// secret is stored on the device. The device key signs only device tokens,
// never anything for a Provider; the server's key does that.
//
// agentclient builds on Client (Authorize, Do) for the turn routes.
package device

import (
	"bytes"
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/pact-cli/pact/devicetoken"
	"github.com/pact-cli/pact/errs"
	"github.com/pact-cli/pact/httpx"
	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/serverapi"
)

// MaxAnswer caps an answer body read from the server (1 MiB).
const MaxAnswer = 1 << 20

// CheckServerURL checks and normalises a --server URL: https, or http on a
// loopback host (httpx.CheckURL); no query or fragment; no trailing slash.
func CheckServerURL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return "", errs.New(fmt.Sprintf("%q is not the URL of a pact server (for example https://pa.example.com)", raw), profile.ErrInvalidInput)
	}
	if err := httpx.CheckURL(u); err != nil {
		return "", errs.New(err.Error(), profile.ErrInvalidInput, err)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", errs.New(fmt.Sprintf("%q must not have a query or fragment", raw), profile.ErrInvalidInput)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u.String(), nil
}

// call sends one request to the server at base+path and decodes a 2xx
// JSON answer into out (nil: ignored). An error answer is a
// *serverapi.APIError; a body that is not the envelope is an error naming
// the status.
func call(ctx context.Context, hc *http.Client, method, base, path string, auth func(*http.Request) error, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", serverapi.ContentTypeJSON)
	if in != nil {
		req.Header.Set("Content-Type", serverapi.ContentTypeJSON)
	}
	if auth != nil {
		if err := auth(req); err != nil {
			return err
		}
	}
	// The API never redirects; a redirect could carry the enrolment code
	// or a token elsewhere: none is followed.
	noRedirect := *hc
	noRedirect.CheckRedirect = func(next *http.Request, via []*http.Request) error {
		return &httpx.RedirectError{URL: next.URL.Redacted(), Credentialed: true,
			Reason: "refused: a pact server's API never redirects, and this request carried an enrolment code or a device token"}
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		return httpx.Describe(err)
	}
	defer resp.Body.Close()
	data, err := httpx.ReadBody(resp.Body, MaxAnswer)
	if err != nil {
		return err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		if e, ok := serverapi.ParseError(resp.StatusCode, data); ok {
			return e
		}
		return fmt.Errorf("%s answered HTTP %d to %s %s, not a pact server's answer: is %s the server's URL?", base, resp.StatusCode, method, path, base)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s answered %s %s with something that is not the expected JSON: is %s the server's URL?", base, method, path, base)
	}
	return nil
}

// Info asks the server who it is (GET /v1/info, no authentication).
func Info(ctx context.Context, hc *http.Client, serverURL string) (serverapi.Info, error) {
	var info serverapi.Info
	err := call(ctx, hc, http.MethodGet, serverURL, serverapi.PathInfo, nil, nil, &info)
	if err == nil && (info.Issuer == "" || info.API != "v1") {
		err = fmt.Errorf("%s does not answer as a pact server (no issuer, or an API other than v1)", serverURL)
	}
	return info, err
}

// EnrolOptions are what `pact init --server URL --code CODE` gives.
type EnrolOptions struct {
	Server string // the server's URL
	Code   string // the one-time enrolment code
	Name   string // this device's name (default: the host name)
	Force  bool   // enrol a profile that is enrolled already, as a new device
}

// Enrol enrols this device for the profile p: it asks the server who it is
// (Info), makes a device key (ES256) and keeps it in p's secret store,
// sends its public half with a proof of possession and the code (POST
// /v1/enrol), and records the server profile (profile.ServerLink). When
// anything fails, the profile and its secrets are as they were.
func Enrol(ctx context.Context, hc *http.Client, p *profile.Profile, o EnrolOptions, now func() time.Time) (*profile.Config, serverapi.Enrolled, error) {
	var out serverapi.Enrolled
	if now == nil {
		now = time.Now
	}
	base, err := CheckServerURL(o.Server)
	if err != nil {
		return nil, out, err
	}
	if strings.TrimSpace(o.Code) == "" {
		return nil, out, errs.New("--code is required: the one-time enrolment code the server's operator (or another device of yours) gave you", profile.ErrInvalidInput)
	}
	if err := p.CheckEnrol(o.Force); err != nil {
		return nil, out, err
	}
	if err := p.CheckDeviceKeyring(); err != nil {
		return nil, out, err
	}
	info, err := Info(ctx, hc, base)
	if err != nil {
		return nil, out, err
	}
	key, err := devicetoken.NewKey()
	if err != nil {
		return nil, out, err
	}
	proof, err := devicetoken.MintProof(key, info.Issuer, now())
	if err != nil {
		return nil, out, err
	}
	if err := call(ctx, hc, http.MethodPost, base, serverapi.PathEnrol, nil, serverapi.EnrolRequest{Code: o.Code, Name: o.Name, Proof: proof}, &out); err != nil {
		return nil, out, err
	}
	if out.Issuer != info.Issuer {
		return nil, out, fmt.Errorf("%s enrolled this device as %s under the issuer %s, but introduced itself as %s; revoke that device from another of yours (pact devices revoke %s)",
			base, out.Device.ID, out.Issuer, info.Issuer, out.Device.ID)
	}
	// Kept only once the server took it: a refused enrolment writes
	// nothing here.
	undo, err := p.StoreDeviceKey(key)
	if err != nil {
		return nil, out, fmt.Errorf("the server enrolled this device as %s, but its key could not be kept in %s (%w); revoke %s from another of your devices (pact devices revoke %s) and enrol again",
			out.Device.ID, p.Secrets.Where(), err, out.Device.ID, out.Device.ID)
	}
	c, err := p.SaveServerLink(profile.ServerLink{
		URL: base, Issuer: out.Issuer, DeviceID: out.Device.ID, DeviceName: out.Device.Name, KID: out.Device.KID,
		UserID: out.User.ID, UserName: out.User.Name, Enrolled: now().UTC().Truncate(time.Second),
	})
	if err != nil {
		undo()
		return nil, out, err
	}
	return c, out, nil
}

// ErrNotServerProfile is returned by NewClient for a profile that is not
// enrolled with a server.
var ErrNotServerProfile = fmt.Errorf("%w: not a server profile", profile.ErrInvalidInput)

// Client makes authenticated calls to the server of a server profile.
type Client struct {
	HTTP *http.Client
	Link profile.ServerLink
	Key  crypto.Signer
	Now  func() time.Time
}

// NewClient is the client of profile p (configuration c), with its device
// key from the secret store.
func NewClient(p *profile.Profile, c *profile.Config, hc *http.Client) (*Client, error) {
	if c.Server == nil {
		return nil, errs.New(fmt.Sprintf("profile %q is not enrolled with a server: enrol this device with `%s`", p.Name,
			profile.Command(p.Name, "init --server URL --code CODE")), ErrNotServerProfile)
	}
	k, err := p.DeviceKey()
	if err != nil {
		return nil, err
	}
	return &Client{HTTP: hc, Link: *c.Server, Key: k, Now: time.Now}, nil
}

// Authorize sets a fresh device token on req (Authorization: PACT-Device
// …), for the server's origin only: a request to any other origin is
// refused, so the token never leaves for another server.
func (c *Client) Authorize(req *http.Request) error {
	base, err := url.Parse(c.Link.URL)
	if err != nil {
		return err
	}
	if !httpx.SameOrigin(base, req.URL) {
		return fmt.Errorf("refusing to send this device's token to %s: it goes to %s only", httpx.Origin(req.URL), httpx.Origin(base))
	}
	tok, err := devicetoken.Mint(c.Key, c.Link.DeviceID, c.Link.Issuer, c.Now())
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", devicetoken.Header(tok))
	return nil
}

// Do sends one authenticated call (path: a serverapi path with its ids
// filled in) and decodes the JSON answer into out.
func (c *Client) Do(ctx context.Context, method, path string, in, out any) error {
	return call(ctx, c.HTTP, method, c.Link.URL, path, c.Authorize, in, out)
}

// Me is the User and the device the server sees.
func (c *Client) Me(ctx context.Context) (serverapi.Me, error) {
	var out serverapi.Me
	return out, c.Do(ctx, http.MethodGet, serverapi.PathMe, nil, &out)
}

// Devices lists the User's devices.
func (c *Client) Devices(ctx context.Context) ([]serverapi.Device, error) {
	var out []serverapi.Device
	return out, c.Do(ctx, http.MethodGet, serverapi.PathDevices, nil, &out)
}

// Revoke revokes one of the User's devices: its next call is refused.
func (c *Client) Revoke(ctx context.Context, id string) (serverapi.Device, error) {
	var out serverapi.Device
	if err := checkID(id); err != nil {
		return out, err
	}
	return out, c.Do(ctx, http.MethodPost, strings.Replace(serverapi.PathDeviceRevoke, "{id}", url.PathEscape(id), 1), nil, &out)
}

// NewCode asks for a one-time code for another device of the User.
func (c *Client) NewCode(ctx context.Context) (serverapi.EnrolmentCode, error) {
	var out serverapi.EnrolmentCode
	return out, c.Do(ctx, http.MethodPost, serverapi.PathEnrolmentCodes, nil, &out)
}

func checkID(id string) error {
	if id == "" || len(id) > 64 || strings.ContainsAny(id, "/?#% \t\r\n") {
		return errs.New(fmt.Sprintf("%q is not a device id (see pact devices)", id), profile.ErrInvalidInput)
	}
	return nil
}

// IsReason reports whether err is the server's answer with this reason.
func IsReason(err error, reason string) bool {
	var e *serverapi.APIError
	return errors.As(err, &e) && e.Reason == reason
}
