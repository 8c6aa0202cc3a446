// Package blobdriver adapts gocloud.dev/blob to source.Driver, for the object-store drivers
// (internal/source/s3, azure) that reach their store through gocloud. It imports no store
// SDK itself: each driver package links its own (gocloud's s3blob, azureblob), which
// registers the URL scheme with gocloud's default URL mux, and registers a Driver from here with
// package source.
package blobdriver

import (
	"context"
	"errors"
	"io"
	"iter"
	"net/url"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/flinkpreflight/preflight/internal/source"
)

// Driver opens buckets through gocloud's default URL mux, so the allowlist entry's query
// options are gocloud's (endpoint, region, use_path_style, ...).
type Driver struct {
	// Identity, when set, names the identity a bucket reads as (see source.Identifier): the
	// store's package knows its SDK's credentials, this one does not.
	Identity func(ctx context.Context, b *blob.Bucket) string
}

var _ source.Driver = Driver{}

// OpenBucket opens the bucket u names (scheme://bucket?options).
func (d Driver) OpenBucket(ctx context.Context, u *url.URL) (source.Bucket, error) {
	b, err := blob.DefaultURLMux().OpenBucketURL(ctx, u)
	if err != nil {
		return nil, err
	}
	if d.Identity != nil {
		return identified{bucket{b}, d.Identity}, nil
	}
	return bucket{b}, nil
}

// identified is a bucket that names its identity.
type identified struct {
	bucket
	identity func(ctx context.Context, b *blob.Bucket) string
}

func (b identified) Identity(ctx context.Context) string { return b.identity(ctx, b.b) }

// ErrorKind classifies by gocloud's portable error codes.
func (Driver) ErrorKind(err error) source.Kind {
	switch gcerrors.Code(err) {
	case gcerrors.NotFound:
		return source.NotFound
	case gcerrors.PermissionDenied:
		return source.PermissionDenied
	case gcerrors.InvalidArgument:
		return source.Invalid
	}
	return source.Unavailable
}

type bucket struct{ b *blob.Bucket }

func (b bucket) Stat(ctx context.Context, key string) (source.ObjectAttrs, error) {
	a, err := b.b.Attributes(ctx, key)
	if err != nil {
		return source.ObjectAttrs{}, err
	}
	return source.ObjectAttrs{Size: a.Size, ModTime: a.ModTime, ETag: a.ETag}, nil
}

func (b bucket) NewReader(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	r, err := b.b.NewReader(ctx, key, nil)
	if err != nil {
		return nil, 0, err
	}
	return r, r.Size(), nil
}

func (b bucket) List(ctx context.Context, prefix string) iter.Seq2[source.ListEntry, error] {
	return func(yield func(source.ListEntry, error) bool) {
		it := b.b.List(&blob.ListOptions{Prefix: prefix, Delimiter: "/"})
		for {
			obj, err := it.Next(ctx)
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				yield(source.ListEntry{}, err)
				return
			}
			if !yield(source.ListEntry{Key: obj.Key, IsDir: obj.IsDir, Size: obj.Size}, nil) {
				return
			}
		}
	}
}

func (b bucket) Close() error { return b.b.Close() }
