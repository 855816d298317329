package storetest

import (
	"fmt"
	"os"
	"testing"
)

// The PostgreSQL half of the tests runs against the server
// PACT_TEST_POSTGRES_URL names (.ci/postgres starts a throwaway one and
// prints it). Without it the tests are skipped, saying so; under CI
// (CI=true) a missing URL is a failure, so that the suite cannot pass by
// skipping, unless PACT_TEST_POSTGRES_SKIP gives the reason this CI job
// has no PostgreSQL (the macOS and Windows jobs: it runs on Linux).
const (
	PostgresURLEnv  = "PACT_TEST_POSTGRES_URL"
	PostgresSkipEnv = "PACT_TEST_POSTGRES_SKIP"
)

// PostgresURL returns the URL of the test server; run is false with why
// when the PostgreSQL tests are to be skipped, and err is set when they
// must run but cannot (CI without a server).
func PostgresURL() (url string, run bool, why string, err error) {
	if u := os.Getenv(PostgresURLEnv); u != "" {
		return u, true, "", nil
	}
	if reason := os.Getenv(PostgresSkipEnv); reason != "" {
		return "", false, fmt.Sprintf("%s is unset: the PostgreSQL tests are skipped (%s=%q)", PostgresURLEnv, PostgresSkipEnv, reason), nil
	}
	if os.Getenv("CI") == "true" {
		return "", false, "", fmt.Errorf("%s is unset under CI=true: the PostgreSQL tests must run (.ci/run starts a PostgreSQL and sets it; a CI job without one says why in %s)", PostgresURLEnv, PostgresSkipEnv)
	}
	return "", false, fmt.Sprintf("%s is unset: the PostgreSQL tests are skipped; eval \"$(.ci/postgres start)\" starts a throwaway PostgreSQL and sets it", PostgresURLEnv), nil
}

// RequirePostgres returns the test server's URL, or skips the test saying
// why, or fails it under CI (see PostgresURL).
func RequirePostgres(t testing.TB) string {
	t.Helper()
	u, run, why, err := PostgresURL()
	if err != nil {
		t.Fatal(err)
	}
	if !run {
		t.Skip(why)
	}
	return u
}
