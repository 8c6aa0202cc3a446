// Package pemfile reads the PEM files of trusted certificates that the client (--ca-file) and
// the daemon (--tls-client-ca) are given.
package pemfile

import (
	"crypto/x509"
	"fmt"
	"os"
)

// CertPool returns a pool of the certificates in the PEM file at path. A file that cannot be read
// or holds no certificate is an error whose text starts with what (e.g. "client: CA file").
func CertPool(path, what string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s %s: no PEM certificate", what, path)
	}
	return pool, nil
}
