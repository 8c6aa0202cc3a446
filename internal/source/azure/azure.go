// Package azure registers the azblob:// scheme with package source: Azure Blob Storage through
// gocloud.dev/blob/azureblob. Import it for its side effect in a main package (or
// internal/source/cloud for every store); libraries must not, so that they stay free of the SDK.
// The account and credentials come from the environment (AZURE_STORAGE_ACCOUNT, ...).
package azure

import (
	_ "gocloud.dev/blob/azureblob" // registers azblob:// with gocloud's URL mux

	"github.com/flinkpreflight/preflight/internal/source"
	"github.com/flinkpreflight/preflight/internal/source/blobdriver"
)

// Scheme is the URI scheme this package serves.
const Scheme = "azblob"

func init() { source.Register(Scheme, blobdriver.Driver{}) }
