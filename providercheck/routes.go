package providercheck

import (
	"context"
	"encoding/json"
	"fmt"
)

func routeChecks() []Check {
	return []Check{
		{ID: "routes.message-send", Group: GroupRoutes, Clause: "§2.2",
			Title:  "message:send answers 200 with { message } or { task }",
			Sends:  `POST {interface}/message:send, a good PA JWT, text "pact provider check: hello …"`,
			Expect: "200 with exactly one of message and task",
			run:    checkMessageSend},
		{ID: "routes.tasks-list", Group: GroupRoutes, Clause: "§2.2",
			Title:  "GET tasks answers an empty ListTasksResponse",
			Sends:  "GET {interface}/tasks, a good PA JWT",
			Expect: "200 with an empty tasks list",
			run:    checkTasksList},
		{ID: "routes.tasks-page-size", Group: GroupRoutes, Clause: "§2.2, §6",
			Title:  "a pageSize outside 1–100 is INVALID_PARAMS",
			Sends:  "GET {interface}/tasks?pageSize=101, a good PA JWT",
			Expect: "400 INVALID_PARAMS",
			run:    checkTasksPageSize},
		{ID: "routes.task-get", Group: GroupRoutes, Clause: "§2.2",
			Title:  "GET tasks/{id} is TASK_NOT_FOUND",
			Sends:  "GET {interface}/tasks/{random id}, a good PA JWT",
			Expect: "404 TASK_NOT_FOUND",
			run:    checkTaskGet},
		{ID: "routes.task-cancel", Group: GroupRoutes, Clause: "§2.2",
			Title:  "POST tasks/{id}:cancel is TASK_NOT_FOUND",
			Sends:  "POST {interface}/tasks/{random id}:cancel, a good PA JWT",
			Expect: "404 TASK_NOT_FOUND",
			run:    checkTaskCancel},
		{ID: "routes.unknown-route", Group: GroupRoutes, Clause: "§2.2",
			Title:  "a route that is not an A2A operation gets 404 or 405 with no A2A body",
			Sends:  "GET {interface}/pact-provider-check-no-such-route, a good PA JWT",
			Expect: "404 or 405, no A2A body",
			run:    checkUnknownRoute},
		{ID: "routes.wrong-method", Group: GroupRoutes, Clause: "§2.2",
			Title:  "an A2A route with the wrong method gets 404 or 405 with no A2A body",
			Sends:  "GET {interface}/message:send, a good PA JWT",
			Expect: "404 or 405, no A2A body",
			run:    checkWrongMethod},
		{ID: "routes.before-auth", Group: GroupRoutes, Clause: "§2.2",
			Title:  "routing happens before authentication: an unknown route without a token is 404/405, not 401",
			Sends:  "POST {interface}/pact-provider-check-no-such-route, no Authorization",
			Expect: "404 or 405, no A2A body",
			run:    checkBeforeAuth},
		{ID: "routes.unknown-brand", Group: GroupRoutes, Clause: "§2.2",
			Title:  "an unknown Brand is 404 even with a valid token",
			Sends:  "POST {PROVIDER_URL}/a2a/{random brandId}/message:send, a good PA JWT",
			Expect: "404, no A2A body",
			run:    checkUnknownBrandSend},
	}
}

func checkMessageSend(ctx context.Context, r *runner) outcome {
	t := r.firstTurn(ctx)
	if t.problem != "" {
		return fail(t.sent, t.ex.describe(), "%s", t.problem)
	}
	return pass(t.sent, t.ex.describe())
}

// authGet sends an authenticated request to {interface}/path.
func (r *runner) authed(ctx context.Context, method, path string) (string, exchange) {
	u := r.iface() + "/" + path
	sent := method + " " + u
	tok, err := r.token(ctx, u)
	if err != nil {
		return sent, exchange{err: err}
	}
	h := a2aHeaders(tok)
	var body []byte
	if method == "POST" {
		h["Content-Type"] = "application/json"
		body = []byte("{}")
	}
	return sent, r.do(ctx, request{method: method, url: u, header: h, body: body, a2a: true})
}

// tasksOffered reports whether GET tasks is served; the answer is kept.
func (r *runner) tasksList(ctx context.Context) (string, exchange) {
	if r.tasks == nil {
		sent, e := r.authed(ctx, "GET", "tasks")
		r.tasks = &struct {
			sent string
			ex   exchange
		}{sent, e}
	}
	return r.tasks.sent, r.tasks.ex
}

func checkTasksList(ctx context.Context, r *runner) outcome {
	sent, e := r.tasksList(ctx)
	if e.reason0() == "UNSUPPORTED_OPERATION" {
		return skip("the Provider does not offer tasks (UNSUPPORTED_OPERATION); only message:send is required (§2.2)")
	}
	if e.unrouted() {
		return fail(sent, e.describe(), "GET tasks is not routed: serve it as §2.2 lists (200, an empty ListTasksResponse), or, to offer only message:send (the one required operation), answer it with the §6 error UNSUPPORTED_OPERATION; either way routes.tasks-page-size follows")
	}
	if e.err != nil || e.status != 200 {
		return fail(sent, e.describe(), "want 200 with an empty ListTasksResponse")
	}
	var lt struct {
		Tasks *[]json.RawMessage `json:"tasks"`
	}
	if err := json.Unmarshal(e.body, &lt); err != nil {
		return fail(sent, e.describe(), "the body is not a ListTasksResponse: %v", err)
	}
	if lt.Tasks != nil && len(*lt.Tasks) > 0 {
		return fail(sent, fmt.Sprintf("%d tasks", len(*lt.Tasks)), "ordinary turns create no A2A Task (§4.2): the list must be empty")
	}
	return pass(sent, e.describe()+", no tasks")
}

func checkTasksPageSize(ctx context.Context, r *runner) outcome {
	if _, e := r.tasksList(ctx); e.reason0() == "UNSUPPORTED_OPERATION" {
		return skip("the Provider does not offer tasks (UNSUPPORTED_OPERATION)")
	} else if e.unrouted() {
		return skip("GET tasks is not routed (see routes.tasks-list): a pageSize cannot be checked")
	}
	sent, e := r.authed(ctx, "GET", "tasks?pageSize=101")
	return judge(sent, e, wantError(e, "INVALID_PARAMS"))
}

func checkTaskGet(ctx context.Context, r *runner) outcome {
	sent, e := r.authed(ctx, "GET", "tasks/"+randomID("pact-check-"))
	return judge(sent, e, wantError(e, "TASK_NOT_FOUND"))
}

func checkTaskCancel(ctx context.Context, r *runner) outcome {
	sent, e := r.authed(ctx, "POST", "tasks/"+randomID("pact-check-")+":cancel")
	return judge(sent, e, wantError(e, "TASK_NOT_FOUND"))
}

// unrouted reports an answer of an unmatched route (§2.2): 404 or 405
// with no A2A body.
func (e exchange) unrouted() bool {
	return e.err == nil && (e.status == 404 || e.status == 405) && !e.hasA2ABody()
}

// wantNoRoute lists how an answer differs from §2.2's unmatched route.
func wantNoRoute(e exchange) []string {
	if e.err != nil {
		return []string{"no answer: " + e.err.Error()}
	}
	var p []string
	if e.status != 404 && e.status != 405 {
		p = append(p, fmt.Sprintf("status %d, want 404 or 405", e.status))
	}
	if e.hasA2ABody() {
		p = append(p, "the answer has an A2A body")
	}
	return p
}

func checkUnknownRoute(ctx context.Context, r *runner) outcome {
	sent, e := r.authed(ctx, "GET", "pact-provider-check-no-such-route")
	return judge(sent, e, wantNoRoute(e))
}

func checkWrongMethod(ctx context.Context, r *runner) outcome {
	sent, e := r.authed(ctx, "GET", "message:send")
	return judge(sent, e, wantNoRoute(e))
}

func checkBeforeAuth(ctx context.Context, r *runner) outcome {
	u := r.iface() + "/pact-provider-check-no-such-route"
	e := r.do(ctx, request{method: "POST", url: u, header: map[string]string{"A2A-Version": "1.0", "Content-Type": "application/json"}, body: []byte("{}")})
	p := wantNoRoute(e)
	if e.status == 401 {
		p = append(p, "authentication ran before routing")
	}
	return judge("POST "+u+" without Authorization", e, p)
}

func checkUnknownBrandSend(ctx context.Context, r *runner) outcome {
	base, _, ok := providerBrandURL(r.iface())
	if !ok {
		return skip("the interface URL is not of the form {PROVIDER_URL}/a2a/{brandId}: no unknown Brand can be made up")
	}
	u := base + "/" + randomID("pact-check-") + "/message:send"
	if err := r.bound.Check("made-up Brand's interface", u); err != nil {
		return skip("a made-up Brand's URL is outside this profile's registration (%s), so no PA JWT is sent there", r.reg.URL)
	}
	tok, err := r.token(ctx, u)
	if err != nil {
		return skip("%v", err)
	}
	h := a2aHeaders(tok)
	h["Content-Type"] = "application/json"
	e := r.do(ctx, request{method: "POST", url: u, header: h, body: message("this Brand does not exist; the Provider must answer 404", "", randomID("m-"), nil)})
	p := wantNoRoute(e)
	if e.status == 405 {
		p = []string{"status 405, want 404 for an unknown Brand"}
	}
	return judge("POST "+u+", a good PA JWT", e, p)
}
