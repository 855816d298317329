package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync"

	"github.com/pact-cli/pact/httpx"
	"github.com/pact-cli/pact/iostreams"
	"github.com/pact-cli/pact/opener"
	"github.com/pact-cli/pact/profile"
)

// openLink starts the browser on link without waiting for it (polling
// starts at once) and says honestly what happened: opening, not opened;
// on a headless session or when the browser cannot start, only the link.
// A browser that fails later is reported until finished is closed.
func (a *app) openLink(link, brand string, finished <-chan struct{}) {
	st := a.io.ErrStyles()
	out := &browserLines{w: a.io.ErrOut, clear: a.io.CanRedrawErr()}
	p, err := opener.Start(link, out)
	switch {
	case errors.Is(err, opener.ErrHeadless) && isLoopbackLink(link):
		a.io.Eprintf("No browser here (a remote session without a display), and the link is on this machine: %s\n", a.headlessWays(link))
		return
	case errors.Is(err, opener.ErrHeadless):
		a.io.Eprintf("No browser here (a remote session without a display): open the link on a device with a browser and log in with %s; pact never sees your password.\n", brand)
		return
	case err != nil:
		a.io.Eprintf("%s could not open the browser (%v); open this link: %s\n", st.Warning.Render("!"), err, line(link))
		if isLoopbackLink(link) {
			a.io.Eprintf("It is on this machine: %s\n", a.headlessWays(link))
			return
		}
		a.io.Eprintf("Log in with %s there; pact never sees your password.\n", brand)
		return
	}
	a.io.Eprintf("Opening the link in your browser (%s). Log in with %s there; pact never sees your password.\n", p.Name, brand)
	go func() {
		select {
		case <-p.Done():
			out.flush()
			if err := p.Err(); err != nil {
				clear := ""
				if a.io.CanRedrawErr() {
					clear = "\r\x1b[K"
				}
				a.io.Eprintf("%s%s could not open the browser (%v); open this link: %s\n", clear, st.Warning.Render("!"), err, line(link))
			}
		case <-finished:
		}
	}()
}

// isLoopbackLink reports whether link is on this machine (a loopback host):
// another device cannot open it.
func isLoopbackLink(link string) bool {
	u, err := url.Parse(link)
	return err == nil && httpx.IsLoopback(u.Hostname())
}

// headlessWays says how to answer a login link on this machine without a
// desktop browser: a text browser, or, for the demo Provider, `pact demo
// approve` (issue 31: a newcomer needed ten minutes to approve the demo
// login without one).
func (a *app) headlessWays(link string) string {
	q := iostreams.ShellQuote(link)
	return fmt.Sprintf("open it here in a text browser (w3m %s, or lynx), or, for the demo Provider of `pact demo serve`, answer it from another terminal with `%s`",
		q, profile.Command(a.profile, "demo approve "+q))
}

// browserLines passes on what the browser program writes to its stderr one
// whole line at a time, each marked as the browser's and, on a terminal,
// written over the line the countdown spinner is drawing (which redraws
// itself below), so the two never mix on one line.
type browserLines struct {
	mu    sync.Mutex
	w     io.Writer
	clear bool
	buf   []byte
}

func (b *browserLines) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	for {
		i := bytes.IndexByte(b.buf, '\n')
		if i < 0 {
			break
		}
		b.line(string(b.buf[:i]))
		b.buf = b.buf[i+1:]
	}
	if len(b.buf) > 4*maxBrowserLine {
		b.buf = b.buf[:4*maxBrowserLine] // the line is cut anyway; the rest up to its newline is dropped
	}
	return len(p), nil
}

// maxBrowserLine is the most characters of a browser's output line shown; longer lines
// are cut with "…" so that a chatty browser does not flood the login screen.
const maxBrowserLine = 200

// flush passes on a last line without a newline.
func (b *browserLines) flush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.buf) > 0 {
		b.line(string(b.buf))
		b.buf = nil
	}
}

func (b *browserLines) line(s string) {
	s = strings.TrimRight(safe(s), "\r ")
	if s == "" {
		return
	}
	if r := []rune(s); len(r) > maxBrowserLine {
		s = string(r[:maxBrowserLine-1]) + "…"
	}
	clear := ""
	if b.clear {
		clear = "\r\x1b[K"
	}
	fmt.Fprintf(b.w, "%sbrowser: %s\n", clear, s)
}

func originOf(u string) string {
	if i := strings.Index(u, "://"); i >= 0 {
		if j := strings.Index(u[i+3:], "/"); j >= 0 {
			return u[:i+3+j]
		}
	}
	return u
}
