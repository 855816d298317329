package main

import (
	"strings"
	"testing"
	"time"

	"github.com/pact-cli/pact/iostreams"
)

// Every --json time is RFC 3339 to the second, whatever precision the value
// was kept with; a string that merely looks like a time is left alone.
func TestJSON_TimesAreWholeSeconds(t *testing.T) {
	at := time.Date(2026, 11, 30, 19, 13, 18, 123456789, time.UTC)
	v := map[string]any{
		"pinnedAt": at, "at": at, "created": at.In(time.FixedZone("X", 3600)), "deadSince": &at,
		"text": `"at":"2026-11-30T19:13:18.5Z"`, "note": "2026-11-30T19:13:18.5Z",
		"items": []any{map[string]any{"expiresAt": at}},
	}
	io, _, out, _ := iostreams.Test()
	a := &app{io: io}
	if err := a.printJSON(v); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{`"pinnedAt": "2026-11-30T19:13:18Z"`, `"at": "2026-11-30T19:13:18Z"`, `"created": "2026-11-30T20:13:18+01:00"`,
		`"deadSince": "2026-11-30T19:13:18Z"`, `"expiresAt": "2026-11-30T19:13:18Z"`, `"note": "2026-11-30T19:13:18.5Z"`, `"text": "\"at\":\"2026-11-30T19:13:18.5Z\""`} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %s:\n%s", want, got)
		}
	}
	out.Reset()
	if err := a.printJSONLine(v); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), ".123456789") {
		t.Errorf("JSON line: %s", out)
	}
}
