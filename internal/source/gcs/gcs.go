// Package gcs registers the gs:// scheme with package source: Google Cloud Storage through
// gocloud.dev/blob/gcsblob. Import it for its side effect in a main package (or
// internal/source/cloud for every store); libraries must not, so that they stay free of the SDK.
// Credentials come from Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS, ...).
package gcs

import (
	_ "gocloud.dev/blob/gcsblob" // registers gs:// with gocloud's URL mux

	"github.com/flinkpreflight/preflight/internal/source"
	"github.com/flinkpreflight/preflight/internal/source/blobdriver"
)

// Scheme is the URI scheme this package serves.
const Scheme = "gs"

func init() { source.Register(Scheme, blobdriver.Driver{}) }
