package replicaset

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// The load balancer in front of the replicas: nginx (open source; Debian's
// nginx-light has every module this needs). What the README's "Running
// several replicas" shows is Upstream and Location, as here; the tests run
// exactly this text.
//
// Open-source nginx checks upstreams passively: a replica that refuses a
// connection or times out is skipped for fail_timeout, then tried again
// with real traffic. Active checks of /readyz are nginx Plus's
// `health_check uri=/readyz` or HAProxy's `option httpchk GET /readyz`
// (the README shows both); a replica stopping (SIGTERM) answers /readyz 503
// and closes its listener, so nginx moves on at once.

// Upstream is the upstream block of the replicas at addrs (HOST:PORT).
func Upstream(addrs []string) string {
	var b strings.Builder
	b.WriteString("upstream pact {\n")
	for _, a := range addrs {
		fmt.Fprintf(&b, "    server %s max_fails=1 fail_timeout=5s;\n", a)
	}
	b.WriteString("    keepalive 32;\n")
	b.WriteString("    keepalive_timeout 60s;\n")
	b.WriteString("}\n")
	return b.String()
}

// Location is the location block that proxies to the upstream "pact":
//
//   - proxy_next_upstream error timeout: a request goes to the next replica
//     when the first refused the connection or did not answer in time.
//     Never non_idempotent: nginx retries a POST only when it never
//     reached a replica, so a message:send is sent again only by the
//     device, with the same messageId (PACT §4.3). Never http_502/503:
//     those are pact's answers (a Provider's failure), not a dead replica.
//   - proxy_buffering off: Server-Sent Events reach the device as they are
//     written.
//   - proxy_read_timeout 300s: a streamed reply may be quiet while a
//     Brand's agent works; proxy_connect_timeout 2s finds a dead replica
//     fast.
//   - X-Request-Id $request_id: one id in nginx's log and pact's.
//   - HTTP/1.1 with Connection "" keeps connections to the replicas open
//     (keepalive), closed by nginx before pact's own idle timeout (2 min).
const Location = `location / {
    proxy_pass http://pact;
    proxy_http_version 1.1;
    proxy_set_header Connection "";
    proxy_set_header Host $host;
    proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
    proxy_set_header X-Forwarded-Proto $scheme;
    proxy_set_header X-Request-Id $request_id;
    proxy_buffering off;
    proxy_next_upstream error timeout;
    proxy_next_upstream_tries 3;
    proxy_next_upstream_timeout 10s;
    proxy_connect_timeout 2s;
    proxy_send_timeout 60s;
    proxy_read_timeout 300s;
}
`

// nginxConf is the whole configuration the tests run: nginx in the
// foreground as one process (master_process off: the test starts and
// stops it, and it runs as whoever runs the test), everything it writes
// under prefix, listening on listen (127.0.0.1:PORT).
func nginxConf(prefix, listen string, addrs []string) string {
	indent := func(s string) string {
		lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
		for i, l := range lines {
			lines[i] = "    " + l
		}
		return strings.Join(lines, "\n") + "\n"
	}
	return fmt.Sprintf(`daemon off;
master_process off;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
events { worker_connections 512; }
http {
    access_log off;
    client_body_temp_path %[1]s/tmp/body;
    proxy_temp_path %[1]s/tmp/proxy;
    fastcgi_temp_path %[1]s/tmp/fastcgi;
    uwsgi_temp_path %[1]s/tmp/uwsgi;
    scgi_temp_path %[1]s/tmp/scgi;
%[2]s    server {
        listen %[3]s;
        client_max_body_size 2m;
%[4]s    }
}
`, prefix, indent(Upstream(addrs)), listen, indent(indent(Location)))
}

// Where FindNginx looks (tests change them).
var (
	lookPath  = exec.LookPath
	sbinNginx = "/usr/sbin/nginx"
)

// NginxSkipEnv names the reason a CI job has no nginx (as the PostgreSQL
// tests' PACT_TEST_POSTGRES_SKIP does).
const NginxSkipEnv = "PACT_TEST_NGINX_SKIP"

// FindNginx returns the nginx binary (PATH, then /usr/sbin/nginx). run is
// false with why when the tests that need it are to be skipped; err is set
// when they must run but cannot: under CI (CI=true) without nginx, unless
// PACT_TEST_NGINX_SKIP gives the reason.
func FindNginx() (path string, run bool, why string, err error) {
	if p, err := lookPath("nginx"); err == nil {
		return p, true, "", nil
	}
	if _, err := os.Stat(sbinNginx); err == nil {
		return sbinNginx, true, "", nil
	}
	if reason := os.Getenv(NginxSkipEnv); reason != "" {
		return "", false, fmt.Sprintf("nginx is not installed: the replica tests are skipped (%s=%q)", NginxSkipEnv, reason), nil
	}
	if os.Getenv("CI") == "true" {
		return "", false, "", errors.New("nginx is not installed under CI=true: the replica tests must run (.ci/run installs nginx-light; a CI job without it says why in " + NginxSkipEnv + ")")
	}
	return "", false, "nginx is not installed: the replica tests are skipped; apt-get install nginx-light", nil
}
