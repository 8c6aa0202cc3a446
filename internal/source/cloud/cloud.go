// Package cloud links every object-store driver of package source (S3, GCS, Azure Blob Storage).
// Only the two mains (client/preflight, server/preflightd) and the tests that read from a store
// import it: every other package stays free of the stores' SDKs, which are most of a binary's
// size and modules.
package cloud

import (
	_ "github.com/flinkpreflight/preflight/internal/source/azure" // azblob://
	_ "github.com/flinkpreflight/preflight/internal/source/gcs"   // gs://
	_ "github.com/flinkpreflight/preflight/internal/source/s3"    // s3://
)
