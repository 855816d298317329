package demoprovider

import (
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
)

// sessionCookie is the User's Provider session (login is skipped while it
// is live, §5.3/§5.5).
const sessionCookie = "pact_demo_session"

// pages are parsed on first use, not at package init: every pact process
// links the demo Provider in (issue 21).
var pages = sync.OnceValue(func() *template.Template { return template.Must(template.New("").Parse(pagesText)) })

const pagesText = `
{{define "head"}}<!doctype html><html><head><meta charset="utf-8"><title>{{.}}</title></head><body>{{end}}
{{define "message"}}{{template "head" .Title}}<h1>{{.Title}}</h1><p id="message">{{.Text}}</p></body></html>{{end}}
{{define "home"}}{{template "head" .Name}}<h1>{{.Name}}</h1><p>Welcome to {{.Name}}. Our support agent's card: <a href="/.well-known/agent-card.json">/.well-known/agent-card.json</a>.</p></body></html>{{end}}
{{define "entercode"}}{{template "head" "Enter your code"}}<h1>Connect your {{.}} account</h1>
<form method="get" action="">
<label>Code shown by your assistant <input type="text" name="user_code" autocomplete="off"></label>
<button type="submit">Continue</button>
</form></body></html>{{end}}
{{define "login"}}{{template "head" .Brand}}<h1>Sign in to {{.Brand}}</h1>
{{if .Error}}<p id="error">{{.Error}}</p>{{end}}
<form method="post" action="/login">
<input type="hidden" name="return_to" value="{{.ReturnTo}}">
<label>Username <input type="text" name="username" autocomplete="username"></label>
<label>Password <input type="password" name="password" autocomplete="current-password"></label>
<button type="submit">Sign in</button>
</form>
<p>Demo accounts: jane / jane-demo-pass, omar / omar-demo-pass.</p></body></html>{{end}}
{{define "assertion"}}{{template "head" "Signing you in"}}<p>Signing you in&hellip;</p>
<form id="assertion" method="post" action="{{.Action}}">
<input type="hidden" name="assertion" value="{{.Assertion}}">
<noscript><button type="submit">Continue</button></noscript>
</form>
<script>document.getElementById("assertion").submit();</script></body></html>{{end}}
{{define "consent"}}{{template "head" "Approve access"}}<h1>Allow access to your {{.Brand}} account?</h1>
<p>Signed in to {{.Brand}} as <strong id="user">{{.User}}</strong>.</p>
<p>The personal agent <strong id="client">{{.Client}}</strong> asks to act on your {{.Brand}} account:</p>
<form method="post" action="{{.Action}}">
<input type="hidden" name="user_code" value="{{.UserCode}}">
<input type="hidden" name="csrf" value="{{.CSRF}}">
<ul>
{{range .Scopes}}<li><label><input type="checkbox" name="scope" value="{{.ID}}" checked> {{.Description}}</label></li>
{{end}}</ul>
<button type="submit" name="action" value="approve">Approve</button>
<button type="submit" name="action" value="deny">Deny</button>
</form></body></html>{{end}}
`

func render(w http.ResponseWriter, code int, name string, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Frame-Options", "DENY") // §5.3: the login is never framed
	w.WriteHeader(code)
	_ = pages().ExecuteTemplate(w, name, data)
}

func message(w http.ResponseWriter, code int, title, text string) {
	render(w, code, "message", map[string]string{"Title": title, "Text": text})
}

// siteHandler is the Brand's own web site: its signed card and card-signing
// keys (§2.1, A2A §8.4) and the Brand's login page (§5.3).
func (s *Server) siteHandler(b *brandDef) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/agent-card.json", func(w http.ResponseWriter, r *http.Request) {
		s.serveSiteCard(w, r, b)
	})
	mux.HandleFunc("GET /.well-known/jwks.json", func(w http.ResponseWriter, r *http.Request) {
		s.siteJWKS(w, b)
	})
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		render(w, http.StatusOK, "home", map[string]string{"Name": b.name})
	})
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		rt := r.URL.Query().Get("return_to")
		if s.as.userCodeFromReturn(b, rt) == "" {
			message(w, http.StatusBadRequest, "Sign-in link not valid", "This sign-in link is not valid. Start again from your assistant.")
			return
		}
		render(w, http.StatusOK, "login", map[string]string{"Brand": b.name, "ReturnTo": rt})
	})
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBody)
		if err := r.ParseForm(); err != nil {
			message(w, http.StatusBadRequest, "Bad request", "The form could not be read.")
			return
		}
		rt := r.PostForm.Get("return_to")
		code := s.as.userCodeFromReturn(b, rt)
		if code == "" {
			message(w, http.StatusBadRequest, "Sign-in link not valid", "This sign-in link is not valid. Start again from your assistant.")
			return
		}
		u, ok := b.userByName(r.PostForm.Get("username"))
		if !ok || r.PostForm.Get("password") != u.password {
			render(w, http.StatusUnauthorized, "login", map[string]string{"Brand": b.name, "ReturnTo": rt, "Error": "Wrong username or password."})
			return
		}
		a := randomID("as_")
		s.as.mu.Lock()
		s.as.assertions[a] = &assertion{brandID: b.id, userCode: normUserCode(code), userID: u.userID, expires: s.now().Add(assertionTTL)}
		s.as.mu.Unlock()
		render(w, http.StatusOK, "assertion", map[string]string{"Action": rt, "Assertion": a})
	})
	return mux
}

// userCodeFromReturn accepts only return_to URLs that are this Brand's
// Provider callback, and returns their user_code ("" otherwise). This keeps
// the login from being an open redirect.
func (as *authServer) userCodeFromReturn(b *brandDef, returnTo string) string {
	u, err := url.Parse(returnTo)
	if err != nil || u.Scheme+"://"+u.Host+u.Path != as.s.interfaceURL(b)+"/oauth/callback" {
		return ""
	}
	return u.Query().Get("user_code")
}

// pendingDevice returns the pending, unexpired device authorization of b
// with this user code, or nil.
func (as *authServer) pendingDevice(b *brandDef, code string) *deviceAuth {
	as.mu.Lock()
	defer as.mu.Unlock()
	d := as.byUserCode[normUserCode(code)]
	if d == nil || d.brandID != b.id || d.state != devicePending || !as.s.now().Before(d.expires) {
		return nil
	}
	return d
}

// currentSession returns the live session of the request and its id.
func (as *authServer) currentSession(r *http.Request) (*session, string) {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return nil, ""
	}
	as.mu.Lock()
	defer as.mu.Unlock()
	sess := as.sessions[c.Value]
	if sess == nil || !as.s.now().Before(sess.expires) {
		return nil, ""
	}
	return sess, c.Value
}

// serveDevice is the verification URI (RFC 8628 §3.3). With a live Provider
// session for this Brand the User goes straight to consent; otherwise to the
// Brand's login, which returns to the callback with an assertion.
func (as *authServer) serveDevice(w http.ResponseWriter, r *http.Request, b *brandDef) {
	code := r.URL.Query().Get("user_code")
	if code == "" {
		render(w, http.StatusOK, "entercode", b.name)
		return
	}
	d := as.pendingDevice(b, code)
	if d == nil {
		message(w, http.StatusBadRequest, "Code not valid", "This code is not valid or has expired. Start again from your assistant.")
		return
	}
	iface := as.s.interfaceURL(b)
	if sess, _ := as.currentSession(r); sess != nil && sess.users[b.id] != "" {
		http.Redirect(w, r, iface+"/oauth/consent?user_code="+url.QueryEscape(d.userCode), http.StatusSeeOther)
		return
	}
	returnTo := iface + "/oauth/callback?user_code=" + url.QueryEscape(d.userCode)
	http.Redirect(w, r, as.s.sites[b.id]+"/login?return_to="+url.QueryEscape(returnTo), http.StatusSeeOther)
}

// serveCallback receives the Brand's single-use assertion by POST, bound to
// the user_code (§5.3), logs the User in with the Provider and shows consent.
func (as *authServer) serveCallback(w http.ResponseWriter, r *http.Request, b *brandDef) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBody)
	if err := r.ParseForm(); err != nil {
		message(w, http.StatusBadRequest, "Bad request", "The form could not be read.")
		return
	}
	code := r.URL.Query().Get("user_code")
	now := as.s.now()
	as.mu.Lock()
	a := as.assertions[r.PostForm.Get("assertion")]
	delete(as.assertions, r.PostForm.Get("assertion")) // single use
	as.mu.Unlock()
	if a == nil || a.brandID != b.id || a.userCode != normUserCode(code) || !now.Before(a.expires) {
		message(w, http.StatusBadRequest, "Sign-in failed", "The sign-in could not be verified. Start again from your assistant.")
		return
	}
	if as.pendingDevice(b, code) == nil {
		message(w, http.StatusBadRequest, "Code not valid", "This code is not valid or has expired. Start again from your assistant.")
		return
	}
	sess, sid := as.currentSession(r)
	as.mu.Lock()
	if sess == nil {
		sid = randomID("")
		sess = &session{users: map[string]string{}, csrf: randomID("")}
		as.sessions[sid] = sess
	}
	sess.users[b.id] = a.userID
	sess.expires = now.Add(sessionTTL)
	as.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: sid, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Expires: now.Add(sessionTTL)})
	http.Redirect(w, r, as.s.interfaceURL(b)+"/oauth/consent?user_code="+url.QueryEscape(code), http.StatusSeeOther)
}

// serveConsent shows (GET) and records (POST) the User's consent: the PA
// issuer origin, the Brand, each requested scope as a checkbox with its
// description verbatim (§5.2, §5.3), Approve and Deny.
func (as *authServer) serveConsent(w http.ResponseWriter, r *http.Request, b *brandDef) {
	iface := as.s.interfaceURL(b)
	code := r.URL.Query().Get("user_code")
	if r.Method == http.MethodPost {
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBody)
		if err := r.ParseForm(); err != nil {
			message(w, http.StatusBadRequest, "Bad request", "The form could not be read.")
			return
		}
		code = r.PostForm.Get("user_code")
	}
	d := as.pendingDevice(b, code)
	if d == nil {
		message(w, http.StatusBadRequest, "Code not valid", "This code is not valid or has expired. Start again from your assistant.")
		return
	}
	sess, _ := as.currentSession(r)
	if sess == nil || sess.users[b.id] == "" {
		http.Redirect(w, r, iface+"/oauth/device?user_code="+url.QueryEscape(d.userCode), http.StatusSeeOther)
		return
	}
	userID := sess.users[b.id]
	if r.Method == http.MethodGet {
		var scopes []Scope
		for _, id := range d.scopes {
			for _, sc := range b.scopes {
				if sc.ID == id {
					scopes = append(scopes, sc)
				}
			}
		}
		u, _ := b.userByID(userID)
		render(w, http.StatusOK, "consent", map[string]any{
			"Brand": b.name, "User": u.username, "Client": origin(d.client),
			"Action": iface + "/oauth/consent", "UserCode": d.userCode, "CSRF": sess.csrf, "Scopes": scopes,
		})
		return
	}
	if r.PostForm.Get("csrf") != sess.csrf {
		message(w, http.StatusForbidden, "Request refused", "The consent form expired. Start again from your assistant.")
		return
	}
	var approved []string
	for _, sc := range r.PostForm["scope"] {
		if slices.Contains(d.scopes, sc) && !slices.Contains(approved, sc) {
			approved = append(approved, sc)
		}
	}
	if r.PostForm.Get("action") != "approve" || len(approved) == 0 {
		as.deny(d, userID)
		message(w, http.StatusOK, "Access denied", "You denied access. You can close this window.")
		return
	}
	as.approve(d, userID, approved)
	message(w, http.StatusOK, "Access approved", "You approved: "+strings.Join(approved, ", ")+". You can close this window and return to your assistant.")
}

// origin is scheme://host of a URL, or the string itself if it is not one.
func origin(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return s
	}
	return u.Scheme + "://" + u.Host
}
