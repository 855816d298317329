package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pact-cli/pact/device"
	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/serverapi"
)

// deviceClient is the client of the selected server profile.
func (a *app) deviceClient() (*device.Client, *profile.Profile, error) {
	p, c, err := a.loadProfile()
	if err != nil {
		return nil, nil, err
	}
	cl, err := device.NewClient(p, c, a.httpClient())
	if err != nil {
		return nil, nil, err
	}
	return cl, p, nil
}

// deviceRow is one device in `pact devices`' table.
func (a *app) deviceRow(d serverapi.Device) []string {
	st := a.io.OutStyles()
	id := d.ID
	if d.Current {
		id += " (this)"
	}
	state := st.Success.Render(d.State)
	if d.State != serverapi.StateActive {
		state = st.Error.Render(d.State)
	}
	seen := "never"
	if d.LastSeen != nil {
		seen = d.LastSeen.Local().Format(humanTime)
	}
	return []string{id, line(d.Name), state, seen, d.Created.Local().Format(humanTime)}
}

func newDevicesCmd(a *app) *cobra.Command {
	list := func(cmd *cobra.Command, args []string) error {
		cl, _, err := a.deviceClient()
		if err != nil {
			return err
		}
		ds, err := cl.Devices(cmd.Context())
		if err != nil {
			return err
		}
		if ds == nil {
			ds = []serverapi.Device{}
		}
		if a.json {
			return a.printJSON(ds)
		}
		rows := [][]string{{"ID", "NAME", "STATE", "LAST SEEN", "ENROLLED"}}
		for _, d := range ds {
			rows = append(rows, a.deviceRow(d))
		}
		a.io.Table(a.io.Out, rows)
		return nil
	}
	cmd := &cobra.Command{
		Use:   "devices",
		Short: "List your devices enrolled with your pact server; add or revoke one",
		Long: `On a server profile (pact init --server URL --code CODE): list the devices of
your User at the server, revoked ones too; "(this)" marks this device.

  pact devices add          # a one-time code for your next device (15 minutes, once)
  pact devices revoke ID    # ends a device at once: its next call is refused`,
		Args: exactArgs(0, "devices takes no arguments (its commands: list, add, revoke)"),
		RunE: list,
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List your devices (the same as pact devices)",
		Args:  exactArgs(0, "devices list takes no arguments"),
		RunE:  list,
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke one of your devices: its next call is refused",
		Args:  exactArgs(1, "devices revoke needs the device id (see pact devices)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, p, err := a.deviceClient()
			if err != nil {
				return err
			}
			d, err := cl.Revoke(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(d)
			}
			st := a.io.ErrStyles()
			a.io.Eprintf("%s revoked the device %s (%s): its next call is refused\n", st.Success.Render("✓"), d.ID, line(d.Name))
			if d.Current {
				a.io.Eprintf("%s that was this device: enrol it again with a new code (%s)\n", st.Warning.Render("!"),
					profile.Command(p.Name, "init --server "+cl.Link.URL+" --code CODE --force"))
			}
			return nil
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "add",
		Short: "Print a one-time enrolment code for your next device",
		Args:  exactArgs(0, "devices add takes no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, _, err := a.deviceClient()
			if err != nil {
				return err
			}
			c, err := cl.NewCode(cmd.Context())
			if err != nil {
				return err
			}
			command := enrolCommand(cl.Link.URL, c.Code)
			if a.json {
				return a.printJSON(struct {
					serverapi.EnrolmentCode
					Command string `json:"command"`
				}{c, command})
			}
			a.io.Printf("%s\n", c.Code)
			a.io.Eprintf("One-time enrolment code for your next device, valid until %s, once. On that device:\n  %s\n",
				c.Expires.Local().Format(humanTime), command)
			return nil
		},
	})
	return cmd
}

// deviceName is this device's default name: the host name.
func deviceName() string {
	h, err := os.Hostname()
	if err != nil || strings.TrimSpace(h) == "" {
		return "device"
	}
	if len(h) > 64 {
		h = h[:64]
	}
	return h
}

// enrolledJSON is `pact init --server URL --code CODE --json`.
type enrolledJSON struct {
	Profile    string           `json:"profile"`
	Server     string           `json:"server"`
	Issuer     string           `json:"issuer"`
	User       serverapi.User   `json:"user"`
	Device     serverapi.Device `json:"device"`
	KeyStorage string           `json:"keyStorage"`
}

// initServer runs `pact init --server URL --code CODE`: this device's key
// is made and kept in the profile's keyring (or file), enrolled with the
// code, and the server profile recorded.
func (a *app) initServer(cmd *cobra.Command, serverURL, code, name string, force bool) error {
	p, err := a.prof()
	if err != nil {
		return err
	}
	if name == "" {
		name = deviceName()
	}
	sp := a.spinner("Enrolling with " + serverURL)
	c, out, err := device.Enrol(cmd.Context(), a.httpClient(), p, device.EnrolOptions{Server: serverURL, Code: code, Name: name, Force: force}, time.Now)
	sp.Stop()
	if err != nil {
		return err
	}
	res := enrolledJSON{Profile: p.Name, Server: c.Server.URL, Issuer: out.Issuer, User: out.User, Device: out.Device, KeyStorage: p.Secrets.Kind()}
	if a.json {
		return a.printJSON(res)
	}
	st := a.io.ErrStyles()
	a.io.Eprintf("%s enrolled this device as %s (%s) for %s at %s\n", st.Success.Render("✓"), line(out.Device.Name), out.Device.ID, line(out.User.Name), c.Server.URL)
	a.io.Eprintf("  device key %s kept in %s; it signs only this device's calls to the server\n", out.Device.KID, p.Secrets.Where())
	a.io.Eprintf("  the server speaks to Providers as %s\n", out.Issuer)
	a.io.Eprintf("\nSee your devices with: %s\n", profile.Command(p.Name, "devices"))
	return nil
}

// initServerFlags are init's flags for enrolling with a server.
type initServerFlags struct{ server, code, name string }

// runInitServer checks init's flags for an enrolment, then enrols.
func (a *app) runInitServer(cmd *cobra.Command, f initServerFlags, withIssuer bool, keyring string, force bool) error {
	switch {
	case withIssuer:
		return usageError{errors.New("--server and --issuer do not go together: a device enrolled with a server has no identity of its own (use another --profile for one)")}
	case f.server == "":
		return usageError{errors.New("--code goes with --server URL: pact init --server URL --code CODE")}
	case f.code == "":
		return usageError{errors.New("--code is required with --server: the one-time enrolment code from the server's operator (pact serve user add NAME) or from another of your devices (pact devices add)")}
	}
	if keyring != "" {
		var err error
		if keyring, err = keyringValue(keyring, fmt.Sprintf("--keyring %q", keyring)); err != nil {
			return err
		}
	}
	if _, err := device.CheckServerURL(f.server); err != nil {
		return usageError{fmt.Errorf("--server: %w", err)}
	}
	a.keyringFlag = keyring
	return a.initServer(cmd, f.server, f.code, f.name, force)
}

// serverProfileJSON is `pact whoami --json` on a server profile: what the
// profile recorded at enrolment (no call to the server).
type serverProfileJSON struct {
	Profile string         `json:"profile"`
	Server  string         `json:"server"`
	Issuer  string         `json:"issuer"`
	User    serverapi.User `json:"user"`
	Device  struct {
		ID   string `json:"id"`
		Name string `json:"name"`
		KID  string `json:"kid"`
	} `json:"device"`
	Enrolled   time.Time `json:"enrolled"`
	KeyStorage string    `json:"keyStorage"`
}

// printServerProfile is `pact whoami` on a server profile.
func (a *app) printServerProfile(p *profile.Profile, c *profile.Config) error {
	l := c.Server
	out := serverProfileJSON{Profile: p.Name, Server: l.URL, Issuer: l.Issuer, User: serverapi.User{ID: l.UserID, Name: l.UserName},
		Enrolled: l.Enrolled, KeyStorage: p.Secrets.Kind()}
	out.Device.ID, out.Device.Name, out.Device.KID = l.DeviceID, l.DeviceName, l.KID
	if a.json {
		return a.printJSON(out)
	}
	st := a.io.OutStyles()
	for _, r := range [][2]string{
		{"profile", p.Name}, {"server", l.URL}, {"issuer", l.Issuer}, {"user", line(l.UserName) + " (" + l.UserID + ")"},
		{"device", line(l.DeviceName) + " (" + l.DeviceID + ")"}, {"device key", l.KID}, {"key stored in", p.Secrets.Where()},
	} {
		a.io.Printf("%s %s\n", st.Faint.Render(fmt.Sprintf("%-15s", r[0])), r[1])
	}
	return nil
}
