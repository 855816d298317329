package a2aclient

import (
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// assembleBytes is the bytes allocated to assemble a reply of n one-byte
// chunks appended to one artifact, the text so far taken after each (as
// Stream gives it to its callback), and the final text.
func assembleBytes(t *testing.T, n int, alternate bool) (uint64, string) {
	t.Helper()
	a := &assembly{}
	events := make([]a2a.Event, n)
	for i := range events {
		id := "a-1"
		if alternate && i%2 == 1 {
			id = "a-0" // an earlier artifact: the joined text changes in the middle
		}
		first := i == 0 || (alternate && i == 1) // each artifact's first chunk
		events[i] = &a2a.TaskArtifactUpdateEvent{TaskID: "t-1", ContextID: "c-1", Append: !first,
			Artifact: &a2a.Artifact{ID: a2a.ArtifactID(id), Parts: a2a.ContentParts{a2a.NewTextPart("x")}}}
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, ev := range events {
		if err := a.add(ev); err != nil {
			t.Fatal(err)
		}
		_ = a.text()
	}
	a.done = true
	final := a.text()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, final
}

// Issue 31 item 14: the cost of a streamed reply is linear in its chunks.
// Twice the chunks allocate about twice the bytes (a copy of everything
// before at each chunk made it four times: 40,000 tiny chunks took 172 s
// of CPU), also when the chunks go to two artifacts in turn, and the text
// is the whole reply.
func TestIssue31_14_StreamAssemblyIsLinearInItsChunks(t *testing.T) {
	for _, alternate := range []bool{false, true} {
		const n = 20000
		small, text := assembleBytes(t, n, alternate)
		large, text2 := assembleBytes(t, 2*n, alternate)
		if !alternate && (text != strings.Repeat("x", n) || text2 != strings.Repeat("x", 2*n)) {
			t.Fatalf("the text of %d chunks is %d bytes", n, len(text))
		}
		if alternate && (len(text) != n+2 || len(text2) != 2*n+2) {
			t.Fatalf("alternating: the text of %d chunks is %d bytes", n, len(text))
		}
		if ratio := float64(large) / float64(small); ratio > 2.6 {
			t.Errorf("alternate=%v: %d chunks allocate %d bytes, %d chunks %d bytes (×%.1f): not linear", alternate, n, small, 2*n, large, ratio)
		}
	}
}

// Issue 31 item 14: a stream whose events keep coming (one every 50 ms
// here, every 20 s in the field) never stalls, and was read forever. It is
// read for MaxStreamDuration at most, every attempt included, then fails
// with STREAM_TOO_LONG, which says the message may have been delivered and
// names its messageId; it is not sent again.
func TestIssue31_14_AStreamThatNeverEndsIsReadForItsLimit(t *testing.T) {
	endless := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		fmt.Fprintf(w, "data: %s\n\n", evTask)
		w.(http.Flusher).Flush()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-r.Context().Done():
				return
			case <-tick.C:
				fmt.Fprintf(w, "data: %s\n\n", fmt.Sprintf(evChunk, "more "))
				w.(http.Flusher).Flush()
			}
		}
	}
	rec, _, evs, err := runStream(t, &Client{MaxStreamDuration: 400 * time.Millisecond, StreamStall: 10 * time.Second}, endless)
	var e *Error
	if !errors.As(err, &e) || e.Reason != ReasonTooLong {
		t.Fatalf("an endless stream: %v", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "may have been delivered") || !strings.Contains(msg, "messageId "+rec.ids[0]) || !strings.Contains(msg, "400ms") {
		t.Fatalf("the error does not say what happened: %s", msg)
	}
	if len(rec.paths) != 1 || len(evs) < 2 {
		t.Fatalf("requests %v, %d events", rec.paths, len(evs))
	}
}
