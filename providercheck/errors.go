package providercheck

import (
	"context"
	"fmt"
	"strings"
	"time"
)

func errorChecks() []Check {
	return []Check{
		{ID: "errors.bad-json", Group: GroupErrors, Clause: "§6",
			Title:  "a body that is not JSON is INVALID_PARAMS, in the AIP-193 envelope with the reason in details[0]",
			Sends:  `POST {interface}/message:send, a good PA JWT, body "pact provider check: not JSON"`,
			Expect: "400 INVALID_PARAMS (INVALID_ARGUMENT), application/a2a+json, code 400, ErrorInfo first in details",
			run: func(ctx context.Context, r *runner) outcome {
				e := r.sendGood(ctx, []byte(checkText+"not JSON"), nil)
				return judge("POST message:send, a body that is not JSON", e, wantError(e, "INVALID_PARAMS"))
			}},
		{ID: "errors.wrong-role", Group: GroupErrors, Clause: "§4.1, §6",
			Title:  "a message whose role is not ROLE_USER is INVALID_PARAMS",
			Sends:  `POST {interface}/message:send, role "ROLE_AGENT"`,
			Expect: "400 INVALID_PARAMS",
			run: func(ctx context.Context, r *runner) outcome {
				e := r.sendGood(ctx, message("a message with the wrong role", "", randomID("pact-check-m-"), map[string]any{"role": "ROLE_AGENT"}), nil)
				return judge(`POST message:send, role "ROLE_AGENT"`, e, wantError(e, "INVALID_PARAMS"))
			}},
		{ID: "errors.blank-text", Group: GroupErrors, Clause: "§4.1, §6",
			Title:  "a message with no non-blank text part is INVALID_PARAMS",
			Sends:  `POST {interface}/message:send, parts [{"text": "   "}]`,
			Expect: "400 INVALID_PARAMS",
			run: func(ctx context.Context, r *runner) outcome {
				e := r.sendGood(ctx, message("", "", randomID("pact-check-m-"), map[string]any{"parts": []any{map[string]any{"text": "   "}}}), nil)
				return judge("POST message:send, one blank text part", e, wantError(e, "INVALID_PARAMS"))
			}},
		{ID: "errors.non-text-part", Group: GroupErrors, Clause: "§4.1, §6",
			Title:  "a part that is not text is CONTENT_TYPE_NOT_SUPPORTED",
			Sends:  `POST {interface}/message:send, parts [{"data": {…}, "mediaType": "application/json"}]`,
			Expect: "400 CONTENT_TYPE_NOT_SUPPORTED (INVALID_ARGUMENT)",
			run: func(ctx context.Context, r *runner) outcome {
				part := map[string]any{"data": map[string]any{"pactProviderCheck": "a data part, which must be refused"}, "mediaType": "application/json"}
				e := r.sendGood(ctx, message("", "", randomID("pact-check-m-"), map[string]any{"parts": []any{part}}), nil)
				return judge("POST message:send, one data part", e, wantError(e, "CONTENT_TYPE_NOT_SUPPORTED"))
			}},
		{ID: "errors.task-id", Group: GroupErrors, Clause: "§4.1, §6",
			Title:  "a message with a taskId is TASK_NOT_FOUND",
			Sends:  "POST {interface}/message:send with a made-up taskId",
			Expect: "404 TASK_NOT_FOUND (NOT_FOUND)",
			run: func(ctx context.Context, r *runner) outcome {
				e := r.sendGood(ctx, message("a message naming a task that does not exist", "", randomID("pact-check-m-"), map[string]any{"taskId": randomID("pact-check-t-")}), nil)
				return judge("POST message:send with a made-up taskId", e, wantError(e, "TASK_NOT_FOUND"))
			}},
		{ID: "errors.content-type", Group: GroupErrors, Clause: "§2",
			Title:  "every A2A response of the run had Content-Type application/a2a+json",
			Sends:  "(nothing more: the answers of the checks before)",
			Expect: "application/a2a+json on every 200 and every A2A error",
			run:    checkContentTypes},
		{ID: "errors.rate-limit", Group: GroupErrors, Clause: "§6",
			Title:  "a 429 carries Retry-After (and pact waited it out before retrying)",
			Sends:  "(nothing more: every 429 of the run)",
			Expect: "Retry-After on every 429",
			run:    checkRateLimit},
	}
}

func checkContentTypes(ctx context.Context, r *runner) outcome {
	if len(r.answers) == 0 {
		return skip("no A2A response was received in this run")
	}
	var bad []string
	for _, e := range r.answers {
		if mt := e.mediaType(); mt != a2aContentType {
			bad = append(bad, fmt.Sprintf("%s %s → %d %q", e.method, strings.TrimPrefix(e.url, r.iface()+"/"), e.status, mt))
		}
	}
	got := fmt.Sprintf("%d A2A responses", len(r.answers))
	if len(bad) > 0 {
		if len(bad) > 3 {
			bad = append(bad[:3], fmt.Sprintf("and %d more", len(bad)-3))
		}
		return fail("", got, "not application/a2a+json: %s", strings.Join(bad, "; "))
	}
	return pass("", got+", all application/a2a+json")
}

func checkRateLimit(ctx context.Context, r *runner) outcome {
	n, _ := r.meter.counts()
	if len(r.limited) == 0 {
		return skip("the Provider answered no request of this run with 429 (%d requests, at most %d a second)", n, int(1/r.opts.Interval.Seconds()))
	}
	var bad []string
	var retried, over, again int
	var longest time.Duration
	for _, e := range r.limited {
		switch {
		case !e.hasRetryAfter:
			bad = append(bad, e.method+" "+e.url)
		case e.retried:
			retried++
		case e.again:
			again++
		default:
			over++
			longest = max(longest, e.waited)
		}
	}
	got := plural(len(r.limited), "answer") + " 429"
	if len(bad) > 0 {
		return fail("", got, "429 without a usable Retry-After (delay-seconds or an HTTP-date): %s", strings.Join(bad, "; "))
	}
	// What pact did with each, as it happened: only the 429s it retried
	// were waited out.
	var did []string
	if retried > 0 {
		did = append(did, fmt.Sprintf("%d waited out and sent again", retried))
	}
	if again > 0 {
		did = append(did, fmt.Sprintf("%d answered such a second send (not sent a third time)", again))
	}
	if over > 0 {
		did = append(did, fmt.Sprintf("%d not waited out (Retry-After up to %s, over the %s pact waits at most)", over, longest, r.opts.MaxRetryAfter))
	}
	return pass("", got+", each with Retry-After: "+strings.Join(did, "; "))
}

// plural is "1 answer", "3 answers".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
