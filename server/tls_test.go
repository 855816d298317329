package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestIssue29_ServesHTTPSFromCertificateFiles: with --tls-cert and
// --tls-key the server answers HTTPS (TLS 1.2 or later) and nothing in
// plain HTTP.
func TestIssue29_ServesHTTPSFromCertificateFiles(t *testing.T) {
	dir := t.TempDir()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)

	ts := startServer(t, nil) // for its identity and store
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	opts := ts.srv.opts
	opts.Settings.TLSCert, opts.Settings.TLSKey = certFile, keyFile
	srv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	defer func() { cancel(); <-done }()
	pool := x509.NewCertPool()
	cert, _ := x509.ParseCertificate(der)
	pool.AddCert(cert)
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := hc.Get("https://" + ln.Addr().String() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.TLS == nil || resp.TLS.Version < tls.VersionTLS12 {
		t.Fatalf("%d %+v", resp.StatusCode, resp.TLS)
	}
	if resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + ln.Addr().String() + "/healthz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Fatal("plain HTTP answered on the TLS port")
		}
	}
}

// TestIssue29_UserEnvIsThePerUserConstructionPoint: each User's env signs
// as the server (iss = the issuer) with a sub of their own per Provider,
// and sees registrations added while the server runs.
func TestIssue29_UserEnvIsThePerUserConstructionPoint(t *testing.T) {
	ts := startServer(t, nil)
	ctx := context.Background()
	a, _, _ := ts.admin.AddUser(ctx, "alice")
	b, _, _ := ts.admin.AddUser(ctx, "bob")
	if _, err := ts.srv.UserEnv(ctx, "u_nobody"); err == nil {
		t.Fatal("an env for a User that does not exist")
	}
	ea, err := ts.srv.UserEnv(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(ea.Registrations.Providers) != 0 {
		t.Fatalf("registrations %+v", ea.Registrations.Providers)
	}
	if _, _, err := ts.admin.AddProvider(ctx, "https://provider.example.com", "aud-1"); err != nil {
		t.Fatal(err)
	}
	ea, _ = ts.srv.UserEnv(ctx, a.ID)
	eb, _ := ts.srv.UserEnv(ctx, b.ID)
	reg, ok := ea.Registrations.Match("https://provider.example.com/a2a/brand")
	if !ok || reg.Audience != "aud-1" {
		t.Fatalf("no match for a registered Provider: %+v", ea.Registrations.Providers)
	}
	if ea.Sub("aud-1") == eb.Sub("aud-1") || ea.Sub("aud-1") == ea.Sub("aud-2") || len(ea.Sub("aud-1")) != 43 {
		t.Fatal("subs are not per (User, Provider)")
	}
	if ea.Issuer != ts.url || ea.Signer.Issuer() != ts.url {
		t.Fatalf("issuer %s / %s", ea.Issuer, ea.Signer.Issuer())
	}
	tok, err := ea.Signer.Mint("aud-1", ea.Sub("aud-1"))
	if err != nil || tok == "" {
		t.Fatal(err)
	}
}
