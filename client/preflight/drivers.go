//go:build !preflight_nocloud

package main

// The object-store drivers (s3://, gs://, azblob://) are linked by the binary, not by the
// packages it uses. They are most of its size: `go build -tags preflight_nocloud` leaves them
// out (local files and http(s) only; an object-store URI is then refused naming what is missing).
import _ "github.com/flinkpreflight/preflight/internal/source/cloud"
