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
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/auth"
)

// selfSigned writes a throwaway certificate for 127.0.0.1.
func selfSigned(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "dedupstudio test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	return certFile, keyFile
}

// Served over TLS, the session cookie is __Host- prefixed and Secure.
func TestServeTLS(t *testing.T) {
	certFile, keyFile := selfSigned(t)
	store := openStore(t, "tls.db")
	hash, _ := auth.HashPassword("tls test password", testKDF)
	if _, err := store.CreateUser(context.Background(), "test", "tina", "annotator", hash); err != nil {
		t.Fatal(err)
	}
	base, _ := serveStore(t, store, Config{TLSCert: certFile, TLSKey: keyFile})
	if !strings.HasPrefix(base, "https://") {
		t.Fatalf("URL %s", base)
	}
	client := &http.Client{
		Transport:     &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	res, err := client.PostForm(base+"/login", url.Values{"name": {"tina"}, "password": {"tls test password"}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("login over TLS: %d", res.StatusCode)
	}
	c := res.Cookies()[0]
	if c.Name != "__Host-dedup_session" || !c.Secure || !c.HttpOnly || c.Path != "/" {
		t.Errorf("cookie over TLS: %+v", c)
	}
}
