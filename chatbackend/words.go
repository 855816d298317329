package chatbackend

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pact-cli/pact/a2aclient"
	"github.com/pact-cli/pact/delegation"
)

// Plain says what went wrong and what to do, in words for people: no section numbers, no
// wire reasons (INVALID_PARAMS), no HTTP status codes and no raw transport errors
// ("Post http://…: dial tcp …"). Those stay in --json and --debug output; the chat shows
// this. The result is remote-influenced text: the chat sanitises it before drawing.
func Plain(err error) string {
	if err == nil {
		return ""
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "The Provider did not answer in time. Try again in a moment."
	}
	var lr *delegation.LoginRequiredError
	if errors.As(err, &lr) {
		return "The delegation stopped working (" + scrub(lr.Reason) + ")."
	}
	var ae *a2aclient.Error
	if errors.As(err, &ae) {
		return plainA2A(ae)
	}
	return scrub(err.Error())
}

func plainA2A(e *a2aclient.Error) string {
	msg := strings.TrimSpace(scrub(e.Message))
	switch e.Reason {
	case a2aclient.ReasonNetwork:
		return "Could not reach the Provider: " + network(e.Err) + ". Check your connection and that the Provider is up, then send again."
	case a2aclient.ReasonRedirect:
		return "The Provider answered with a redirect; pact never sends your credentials along a redirect, so nothing was sent there. Tell the Brand if it persists."
	case a2aclient.ReasonUnauthenticated:
		return "The Provider did not accept who you are. Check `pact whoami`, that your key server (`pact jwks serve`) is reachable, and your clock."
	case a2aclient.ReasonInvalidToken:
		return "The Provider refused the delegation. /login approves it again."
	case a2aclient.ReasonNotFound:
		return "The Provider does not serve this Brand at the address on its card. Try again later; `pact card` shows the card."
	case a2aclient.ReasonRateLimited:
		s := "The Provider asks you to slow down."
		if e.RetryAfter > 0 {
			s += fmt.Sprintf(" Try again in %s.", e.RetryAfter.Round(time.Second))
		}
		return s
	case a2aclient.ReasonContentTypeNotSupport:
		return "The Brand cannot take this kind of message."
	case a2aclient.ReasonInternal:
		return "The Provider had a problem with this message. Try again later."
	case a2aclient.ReasonBadReply:
		return "The Provider's answer could not be read. Try again later."
	}
	if e.HTTPStatus >= 500 {
		return "The Provider had a problem. Try again later."
	}
	// Reason HTTP and an A2A error without a reason carry pact's own words about the
	// status ("HTTP 400 from the Provider"), not the Provider's: they say nothing more.
	if msg != "" && e.Reason != a2aclient.ReasonHTTP && !strings.HasPrefix(e.Message, "HTTP ") {
		return "The Provider refused the message: " + msg
	}
	return "The Provider refused the message."
}

// network names a transport failure in a few words.
func network(err error) string {
	var dns *net.DNSError
	var ne net.Error
	switch {
	case err == nil:
		return "the network failed"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "the connection was refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "the connection was cut"
	case errors.As(err, &dns):
		return "its name could not be found"
	case errors.As(err, &ne) && ne.Timeout():
		return "it did not answer in time"
	}
	return "the network failed"
}

var (
	// Compiled on first use, not at package init: every pact process pays for
	// package init (issue 21).
	sectionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\s*\(§[0-9.]+(, ?§?[0-9.]+)*\)|\s*§[0-9.]+`) })
	httpRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\s*\(HTTP [0-9]{3}[^)]*\)|\bHTTP [0-9]{3}\b`) })
	reasonRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b[A-Z]{2,}(_[A-Z]+)+\b:?\s*`) })
	postRE    = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\b(Post|Get|Put|Delete) "?https?://[^\s":]+[^\s"]*"?:\s*`)
	})
)

// scrub removes section numbers, HTTP status codes, wire reasons and Go's "Post URL:"
// prefixes from a message meant for people.
func scrub(s string) string {
	s = postRE().ReplaceAllString(s, "")
	s = sectionRE().ReplaceAllString(s, "")
	s = httpRE().ReplaceAllString(s, "")
	s = reasonRE().ReplaceAllString(s, "")
	s = strings.ReplaceAll(s, "message id", "message")
	s = strings.ReplaceAll(s, "messageId", "message")
	return strings.TrimSpace(s)
}
