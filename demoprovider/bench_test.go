package demoprovider

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// BenchmarkMessageSend measures one authenticated message:send round trip
// on loopback (PA JWT verification with a cached JWKS, agent turn, reply).
func BenchmarkMessageSend(b *testing.B) {
	e := start(b, nil)
	iface := e.example().InterfaceURL
	tok := e.jwt("u1")
	b.ResetTimer()
	for i := range b.N {
		req, _ := http.NewRequest(http.MethodPost, iface+"/message:send", strings.NewReader(msgBody(fmt.Sprint("m", i), "", "A-88213")))
		req.Header.Set("Authorization", "Bearer "+tok)
		res, err := testClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			b.Fatalf("status %d", res.StatusCode)
		}
	}
}
