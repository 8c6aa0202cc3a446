package pemfile

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestCertPool(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ca, junk := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "junk.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(junk, []byte("not PEM"), 0o600); err != nil {
		t.Fatal(err)
	}
	if pool, err := CertPool(ca, "test: CA file"); err != nil || pool == nil {
		t.Fatalf("a CA file: %v", err)
	}
	if _, err := CertPool(junk, "test: CA file"); err == nil || err.Error() != "test: CA file "+junk+": no PEM certificate" {
		t.Fatalf("a file without a certificate: %v", err)
	}
	if _, err := CertPool(filepath.Join(dir, "missing.pem"), "test: CA file"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a missing file: %v, want it to wrap fs.ErrNotExist", err)
	}
}
