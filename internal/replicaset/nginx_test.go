package replicaset

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// trimmed is s's lines without their indentation.
func trimmed(s string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		out = append(out, strings.TrimSpace(l))
	}
	return out
}

func containsLines(hay, needle []string) bool {
	for i := 0; i+len(needle) <= len(hay); i++ {
		match := true
		for j := range needle {
			if hay[i+j] != needle[j] {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// TestIssue30_ReadmeShowsTheNginxConfigTheTestsRun: the README's
// "Running several replicas" shows the upstream and location blocks the
// replica tests run, line for line.
func TestIssue30_ReadmeShowsTheNginxConfigTheTestsRun(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := trimmed(string(b))
	for name, block := range map[string]string{
		"location": Location,
		"upstream": Upstream([]string{"127.0.0.1:8081", "127.0.0.1:8082", "127.0.0.1:8083"}),
	} {
		if !containsLines(readme, trimmed(block)) {
			t.Errorf("the README does not show the %s block the tests run:\n%s", name, block)
		}
	}
	conf := nginxConf("/p", "127.0.0.1:1", []string{"127.0.0.1:2"})
	if !containsLines(trimmed(conf), trimmed(Location)) || !strings.Contains(conf, "listen 127.0.0.1:1;") {
		t.Fatalf("the tests' configuration lacks the location block:\n%s", conf)
	}
}

// TestIssue30_WithoutNginxSkippedLocallyFailedUnderCI: no nginx is a skip
// that says how to install it, but a failure under CI=true, unless
// PACT_TEST_NGINX_SKIP says why the job has none.
func TestIssue30_WithoutNginxSkippedLocallyFailedUnderCI(t *testing.T) {
	lp, sb := lookPath, sbinNginx
	t.Cleanup(func() { lookPath, sbinNginx = lp, sb })
	lookPath = func(string) (string, error) { return "", errors.New("not found") }
	sbinNginx = t.TempDir() + "/nginx"
	t.Setenv(NginxSkipEnv, "")
	t.Setenv("CI", "")
	if _, run, why, err := FindNginx(); run || err != nil || !strings.Contains(why, "apt-get install nginx-light") {
		t.Fatalf("locally: run %v, why %q, err %v", run, why, err)
	}
	t.Setenv("CI", "true")
	if _, run, _, err := FindNginx(); run || err == nil || !strings.Contains(err.Error(), NginxSkipEnv) {
		t.Fatalf("under CI: run %v, err %v", run, err)
	}
	t.Setenv(NginxSkipEnv, "nginx runs in the linux job")
	if _, run, why, err := FindNginx(); run || err != nil || !strings.Contains(why, "linux job") {
		t.Fatalf("under CI with a reason: run %v, why %q, err %v", run, why, err)
	}
	lookPath = func(string) (string, error) { return "/opt/bin/nginx", nil }
	if p, run, _, err := FindNginx(); !run || err != nil || p != "/opt/bin/nginx" {
		t.Fatalf("installed: %q %v %v", p, run, err)
	}
}
