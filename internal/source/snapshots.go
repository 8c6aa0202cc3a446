package source

import (
	"context"
	"net/url"
	"sort"
	"strings"
)

// Snapshots lists every complete snapshot (chk-N or savepoint-* folder holding a _metadata)
// directly under a job's checkpoint folder, local or in an object store, ordered by checkpoint
// ID and then by _metadata modification time (savepoints carry no ID). incomplete names the
// chk-N folders without a _metadata. The folder must be inside the allowlist, as for Open.
func (o *Opener) Snapshots(ctx context.Context, uri string) (snaps []Snapshot, incomplete []string, err error) {
	snaps, incomplete, err = o.listFolder(ctx, uri, "listing checkpoints")
	if err != nil {
		return nil, nil, err
	}
	sort.SliceStable(snaps, func(a, b int) bool {
		if snaps[a].ID != snaps[b].ID {
			return snaps[a].ID < snaps[b].ID
		}
		return snaps[a].ModTime.Before(snaps[b].ModTime)
	})
	return snaps, incomplete, nil
}

// listFolder lists the snapshot folders (complete and incomplete) directly under a job's
// checkpoint folder, local (a path or file:// URI) or in an object store; purpose names the
// operation in the error for any other scheme.
func (o *Opener) listFolder(ctx context.Context, uri, purpose string) (snaps []Snapshot, incomplete []string, err error) {
	uri = CanonicalFileURI(uri)
	scheme, _, hasScheme := strings.Cut(uri, "://")
	switch {
	case !hasScheme || strings.EqualFold(scheme, "file"):
		p := uri
		if hasScheme {
			u, perr := url.Parse(uri)
			if perr != nil {
				return nil, nil, newError(Invalid, "", "cannot parse URI", perr)
			}
			p = u.Path
		}
		return o.latestLocal(p)
	case strings.EqualFold(scheme, "http") || strings.EqualFold(scheme, "https"):
		return nil, nil, newError(Invalid, uri, purpose+" needs a local, s3, gs or azblob folder", nil)
	}
	if _, ok := driverFor(scheme); !ok {
		if _, known := driverPackages[strings.ToLower(scheme)]; known {
			return nil, nil, newError(Invalid, uri, purpose+": "+unsupportedScheme(scheme), nil)
		}
		return nil, nil, newError(Invalid, uri, purpose+" needs a local, s3, gs or azblob folder", nil)
	}
	u, err := url.Parse(uri)
	if err != nil {
		return nil, nil, newError(Invalid, "", "cannot parse URI", err)
	}
	return o.listStored(ctx, u)
}
