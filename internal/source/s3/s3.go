// Package s3 registers the s3:// scheme with package source: Amazon S3 and S3-compatible stores
// through gocloud.dev/blob/s3blob (AWS SDK v2). Import it for its side effect in a main package
// (or internal/source/cloud for every store); libraries must not, so that they stay free of the
// SDK. Allowlist entries take s3blob's query options (endpoint, region, use_path_style, ...);
// credentials come from the environment as the AWS SDK finds them.
package s3

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/s3blob" // registers s3:// with gocloud's URL mux

	"github.com/flinkpreflight/preflight/internal/source"
	"github.com/flinkpreflight/preflight/internal/source/blobdriver"
)

// Scheme is the URI scheme this package serves.
const Scheme = "s3"

func init() { source.Register(Scheme, blobdriver.Driver{Identity: identity}) }

// identity names the AWS access key ID the bucket's client signs with, and where the SDK found
// it (environment, shared credentials file, web identity, ...); never the secret.
func identity(ctx context.Context, b *blob.Bucket) string {
	var c *s3.Client
	if !b.As(&c) || c == nil || c.Options().Credentials == nil {
		return ""
	}
	creds, err := c.Options().Credentials.Retrieve(ctx)
	if err != nil {
		return fmt.Sprintf("no AWS credentials (%v)", err)
	}
	if creds.AccessKeyID == "" {
		return "anonymous AWS requests"
	}
	s := "AWS access key " + creds.AccessKeyID
	if creds.Source != "" {
		s += " (from " + creds.Source + ")"
	}
	return s
}
