package delegation

import (
	"context"
	"testing"

	"github.com/pact-cli/pact/store"
)

func openTestDB(t testing.TB, path string) *store.DB {
	db, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestDBStore_RoundTripAndDamage: grants are kept as their JSON
// documents, so a field added to Grant later survives a round trip and an
// update, and a damaged document is reported without hiding the others.
func TestDBStore_RoundTripAndDamage(t *testing.T) {
	db := openTestDB(t, t.TempDir()+"/pact.db")
	s := DBStore{DB: db.ForUser(store.LocalUser)}
	a := Grant{Brand: "https://b.example/card", InterfaceURL: "https://p.example/a2a/B", Scopes: []string{"orders:read"}, GrantID: "g1"}
	b := Grant{Brand: "https://a.example/card", InterfaceURL: "https://p.example/a2a/A", GrantID: "g2"}
	for _, g := range []Grant{a, b} {
		if err := s.Put(g); err != nil {
			t.Fatal(err)
		}
	}
	got, ok, err := s.Get(a.InterfaceURL)
	if err != nil || !ok || got.GrantID != "g1" || !got.HasScopes("orders:read") {
		t.Fatalf("Get = %+v %v %v", got, ok, err)
	}
	list, err := s.List()
	if err != nil || len(list) != 2 || list[0].GrantID != "g2" {
		t.Fatalf("List = %+v %v (want sorted by brand)", list, err)
	}
	if err := s.Delete(b.InterfaceURL); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Get(b.InterfaceURL); ok {
		t.Fatal("deleted grant still there")
	}
	if err := db.Exec(context.Background(), `INSERT INTO grants (interface_url, brand, data) VALUES ('x', 'x', '{broken')`); err != nil {
		t.Fatal(err)
	}
	list, err = s.List()
	if err == nil || len(list) != 1 || list[0].GrantID != "g1" {
		t.Fatalf("a damaged grant: List = %+v, %v", list, err)
	}
}
