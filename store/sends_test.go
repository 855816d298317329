package store

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

// Issue 19: every part of a turn is kept with it; a file's bytes once (by SHA-256), up to
// MaxBlob, a bigger file as a note.
func TestAppendTurns_KeepsEveryPart(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	now := time.Date(2026, 9, 30, 12, 0, 0, 0, time.UTC)
	conv := Conversation{Brand: "https://b.example/card", InterfaceURL: "https://p.example/a2a/b", ContextID: "ctx-1", LastMessageAt: now}
	pdf := []byte("%PDF-1.7 invoice")
	big := bytes.Repeat([]byte("x"), MaxBlob+1)
	parts := []Part{
		{Kind: PartData, JSON: `{"order":"A-88213","total":42}`},
		{Kind: PartFile, Name: "invoice.pdf", MediaType: "application/pdf", Data: pdf},
		{Kind: PartFile, Name: "link.pdf", URL: "https://b.example/x.pdf"},
		{Kind: PartFile, Name: "huge.bin", Data: big},
	}
	if err := db.AppendTurns(ctx, conv,
		Turn{MessageID: "m-1", Role: "user", Text: "hi", At: now},
		Turn{MessageID: "r-1", Role: "agent", Text: "here", At: now, Parts: parts},
		Turn{MessageID: "r-2", Role: "agent", Text: "again", At: now, Parts: parts[1:2]}); err != nil {
		t.Fatal(err)
	}
	turns, err := db.Turns(ctx, conv.InterfaceURL, conv.ContextID)
	if err != nil {
		t.Fatal(err)
	}
	if len(turns) != 3 || len(turns[0].Parts) != 0 || len(turns[1].Parts) != 4 || len(turns[2].Parts) != 1 {
		t.Fatalf("turns %+v", turns)
	}
	got := turns[1].Parts
	if got[0].Kind != PartData || got[0].JSON != parts[0].JSON {
		t.Errorf("data part %+v", got[0])
	}
	if got[1].Name != "invoice.pdf" || got[1].MediaType != "application/pdf" || got[1].Size != int64(len(pdf)) || got[1].SHA256 == "" {
		t.Errorf("file part %+v", got[1])
	}
	if got[2].URL != "https://b.example/x.pdf" {
		t.Errorf("URL part %+v", got[2])
	}
	if got[3].Size != int64(len(big)) || !strings.Contains(got[3].Note, "not kept") {
		t.Errorf("a file too big to keep: %+v", got[3])
	}
	data, ok, err := db.Blob(ctx, got[1].SHA256)
	if err != nil || !ok || !bytes.Equal(data, pdf) {
		t.Fatalf("Blob: %q %v %v", data, ok, err)
	}
	if _, ok, _ := db.Blob(ctx, got[3].SHA256); ok {
		t.Error("the bytes of a file bigger than MaxBlob were kept")
	}
	c, _ := db.conn(ctx)
	var n int
	if err := c.QueryRow(`SELECT count(*) FROM blobs`).Scan(&n); err != nil || n != 1 {
		t.Errorf("%d blobs for one file kept twice, want 1 (%v)", n, err)
	}
}

// Issue 19: a send is on record before it leaves; one left in state sending is found
// unanswered later; the draft and the queue are kept.
func TestSendsAndDrafts(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	now := time.Date(2026, 9, 30, 12, 0, 0, 0, time.UTC)
	brand := "https://b.example/card"
	for i, id := range []string{"m-1", "m-2", "m-3"} {
		if err := db.RecordSend(ctx, Send{MessageID: id, Brand: brand, InterfaceURL: "i", ContextID: "ctx", Text: "text " + id, At: now.Add(time.Duration(i) * time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	db.SetSendState(ctx, "m-1", SendDelivered, "")
	db.SetSendState(ctx, "m-3", SendFailed, "refused")
	un, err := db.Unanswered(ctx, brand)
	if err != nil || len(un) != 1 || un[0].MessageID != "m-2" || un[0].Text != "text m-2" || un[0].ContextID != "ctx" {
		t.Fatalf("Unanswered = %+v, %v", un, err)
	}
	d := Draft{Input: "half a\nthought", Queue: []string{"one", "two\nlines"}}
	if err := db.SaveDraft(ctx, brand, d); err != nil {
		t.Fatal(err)
	}
	got, err := db.LoadDraft(ctx, brand)
	if err != nil || got.Input != d.Input || !slices.Equal(got.Queue, d.Queue) {
		t.Fatalf("LoadDraft = %+v, %v", got, err)
	}
	db.SaveDraft(ctx, brand, Draft{})
	if got, _ := db.LoadDraft(ctx, brand); got.Input != "" || got.Queue != nil {
		t.Fatalf("an empty draft was kept: %+v", got)
	}
}
