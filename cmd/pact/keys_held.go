package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/pact-cli/pact/opener"
	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/signer/keyuri"
	"github.com/pact-cli/pact/signer/pkcs11"
)

// heldKeys is what one pact process remembers about keys held on a token
// or in a KMS: the PINs typed at the prompt (never written anywhere), and
// the audiences a refill of PA JWTs minted ahead was started for.
type heldKeys struct {
	mu       sync.Mutex
	pins     map[string]string
	refilled map[string]bool
	spin     stopper // the last spinner started: a PIN prompt stops it
}

func (h *heldKeys) spinning(sp stopper) {
	h.mu.Lock()
	h.spin = sp
	h.mu.Unlock()
}

// askPIN asks for a PKCS#11 token's PIN on the terminal, without echo,
// once per token and process. Without a terminal it fails, saying how to
// give the PIN instead; the PIN is never a flag and never printed.
func (a *app) askPIN(token string) (string, error) {
	a.held.mu.Lock()
	defer a.held.mu.Unlock()
	if pin, ok := a.held.pins[token]; ok {
		return pin, nil
	}
	f, ok := a.io.In.(*os.File)
	if !ok || !a.io.IsStdinTTY() {
		return "", &pkcs11.Error{Kind: pkcs11.KindPIN, Message: fmt.Sprintf("the PKCS#11 token %q needs its PIN and there is no terminal to ask on: set %s, or keep it in the keyring with `%s` (once the profile's key is on that token)",
			token, pkcs11.PINEnv, profile.Command(a.profile, "key pin"))}
	}
	if a.held.spin != nil {
		a.held.spin.Stop() // its next frame would overwrite the prompt
	}
	a.io.Eprintf("PIN for the PKCS#11 token %q: ", safe(token))
	b, err := term.ReadPassword(f.Fd())
	a.io.Eprintf("\n")
	if err != nil {
		return "", fmt.Errorf("reading the PIN: %w", err)
	}
	pin := strings.TrimRight(string(b), "\r\n")
	if pin == "" {
		return "", &pkcs11.Error{Kind: pkcs11.KindPIN, Message: "no PIN was typed"}
	}
	if a.held.pins == nil {
		a.held.pins = map[string]string{}
	}
	a.held.pins[token] = pin
	return pin, nil
}

// self is the pact program to start again: the path this process was
// started as (so that a test binary run as `pact` is run as `pact`), else
// the executable.
func self() (string, error) {
	if strings.ContainsRune(os.Args[0], filepath.Separator) {
		return filepath.Abs(os.Args[0])
	}
	if p, err := exec.LookPath(os.Args[0]); err == nil && filepath.IsAbs(p) {
		return p, nil
	}
	return os.Executable()
}

// mintAhead starts `pact key __mint-ahead` for audience in the background
// (detached; never waited for), at most once per audience and process:
// it fills the profile's stock of PA JWTs signed by the active key, so
// that the next pact process sends without waiting for a token or a KMS.
func (a *app) mintAhead(audience string) {
	a.held.mu.Lock()
	if a.held.refilled[audience] {
		a.held.mu.Unlock()
		return
	}
	if a.held.refilled == nil {
		a.held.refilled = map[string]bool{}
	}
	a.held.refilled[audience] = true
	a.held.mu.Unlock()
	exe, err := self()
	if err != nil {
		return
	}
	cmd := exec.Command(exe, "--profile", a.profile, "key", "__mint-ahead", "--audience", audience)
	cmd.Env = append(os.Environ(), "PACT_DEBUG=")
	opener.Detach(cmd)
	if cmd.Start() == nil {
		go cmd.Wait() // reaped if this process outlives it
	}
}

// A refill process (pact key __mint-ahead) keeps the stock topped up,
// looking every mintAheadPoll, until no token was taken for mintAheadIdle
// (well inside signer.StockMaxAge, so that it does not re-mint tokens that
// only expired) or after mintAheadLife.
const (
	mintAheadPoll = 50 * time.Millisecond
	mintAheadIdle = 3 * time.Second
	mintAheadLife = 60 * time.Second
)

func newMintAheadCmd(a *app) *cobra.Command {
	var audience string
	cmd := &cobra.Command{
		Use:    "__mint-ahead --audience AUD",
		Hidden: true,
		Short:  "Fill the stock of PA JWTs minted ahead for a key held on a token or in a KMS (started by pact itself)",
		Args:   exactArgs(0, "__mint-ahead takes no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, c, err := a.loadProfile()
			if err != nil {
				return err
			}
			background()
			p.MintAhead, p.PIN = nil, nil // never start another one, never prompt
			act := c.Active()
			if act == nil || !act.KeyURI().Held() || audience == "" {
				return nil
			}
			registered := false
			for _, r := range c.Providers {
				registered = registered || r.Audience == audience
			}
			if !registered {
				return fmt.Errorf("no registered Provider has the audience %q", audience)
			}
			stock := p.Stock()
			// One refill at a time per profile; another one running is enough.
			unlock, ok := stock.LockRefill()
			if !ok {
				return nil
			}
			defer unlock()
			s, err := p.Signer(c)
			if err != nil {
				stock.Clear()
				return err
			}
			sub, err := p.Sub(audience)
			if err != nil {
				return err
			}
			still := func() bool {
				cur, err := p.Load()
				return err == nil && cur.Issuer == c.Issuer && cur.Active() != nil && cur.Active().KID == s.KID()
			}
			err = stock.KeepFilled(s, audience, sub, mintAheadPoll, mintAheadIdle, mintAheadLife, still)
			if err != nil {
				// The key no longer signs (disabled, deleted, swapped, PIN
				// changed): no token it signed before is handed out any
				// more, so the next send says why it cannot sign.
				stock.Clear()
			}
			return err
		},
	}
	cmd.Flags().StringVar(&audience, "audience", "", "the Provider's audience")
	return cmd
}

// deleteHint says how to delete a retired key where it lives.
func deleteHint(k profile.KeyInfo) string {
	switch u := k.KeyURI(); u.Kind {
	case keyuri.AWSKMS:
		id := k.KeyARN
		if id == "" {
			id = u.KeyID
		}
		return " (aws kms schedule-key-deletion --key-id " + id + " --pending-window-in-days 7)"
	case keyuri.PKCS11:
		return " (pkcs11-tool --delete-object, or the token's own tool)"
	}
	return ""
}

func newKeyPinCmd(a *app) *cobra.Command {
	var forget bool
	cmd := &cobra.Command{
		Use:   "pin [--forget]",
		Short: "Keep the PKCS#11 PIN of the active key's token in the keyring, so pact does not ask for it",
		Long: `Keep the user PIN of the PKCS#11 token that holds the active key in this
profile's keyring (or its 0600 file), so that pact signs without asking, also
where there is no terminal (pact mcp, scripts). pact reads the PIN on the
terminal, without echo, or one line from standard input; it checks it with
the token first. --forget removes it.

Without it, pact takes the PIN from PACT_PKCS11_PIN, else asks on the
terminal. A PIN is never a flag and never printed.`,
		Args: exactArgs(0, "key pin takes no arguments: the PIN is read from the terminal or standard input"),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, c, err := a.loadProfile()
			if err != nil {
				return err
			}
			act := c.Active()
			if act == nil || act.KeyURI().Kind != keyuri.PKCS11 {
				return usageError{fmt.Errorf("the active key of profile %q is not on a PKCS#11 token: no PIN to keep", p.Name)}
			}
			u := act.KeyURI()
			if forget {
				if err := p.SetPIN(u, ""); err != nil {
					return err
				}
				a.io.Eprintf("%s the PIN of the token %q is no longer kept\n", a.io.ErrStyles().Success.Render("✓"), u.Token)
				return nil
			}
			var pin string
			if a.io.IsStdinTTY() {
				if pin, err = a.askPIN(u.Token); err != nil {
					return err
				}
			} else {
				line, err := bufio.NewReader(a.io.In).ReadString('\n')
				if err != nil && line == "" {
					return usageError{errors.New("key pin reads the PIN from the terminal or one line of standard input; none was given")}
				}
				pin = strings.TrimRight(line, "\r\n")
			}
			if err := p.SetPIN(u, pin); err != nil {
				return err
			}
			a.io.Eprintf("%s the PIN of the token %q is kept in %s\n", a.io.ErrStyles().Success.Render("✓"), u.Token, p.Secrets.Where())
			return nil
		},
	}
	cmd.Flags().BoolVar(&forget, "forget", false, "remove the kept PIN")
	return cmd
}
