package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// Snapshot is a complete checkpoint or savepoint found in a job's checkpoint folder.
type Snapshot struct {
	// URI of the snapshot's folder, in the form Open takes (a local path, or scheme://bucket/key).
	URI string
	// Kind is "checkpoint" (chk-N) or "savepoint" (savepoint-*).
	Kind string
	// ID is N of chk-N; 0 for savepoints (their folder names carry no ID).
	ID int64
	// ModTime of its _metadata.
	ModTime time.Time
}

// Latest finds the newest complete snapshot in a job's checkpoint folder: the chk-N and
// savepoint-* folders directly under uri that hold a _metadata (a chk-N without one is still in
// progress, failed, or being deleted). Newest is the latest _metadata modification time; between
// equal times the higher checkpoint ID. uri itself holding a _metadata is a snapshot already.
// The note names the choice, its age and what was skipped. The folder must be inside the
// allowlist, as for Open.
func (o *Opener) Latest(ctx context.Context, uri string) (Snapshot, string, error) {
	snaps, incomplete, err := o.listFolder(ctx, uri, "finding the latest checkpoint")
	if err != nil {
		return Snapshot{}, "", err
	}
	if len(snaps) == 0 {
		msg := "no complete checkpoint (chk-N/_metadata) or savepoint (savepoint-*/_metadata) in the folder"
		if len(incomplete) > 0 {
			msg += fmt.Sprintf("; incomplete: %s", strings.Join(incomplete, ", "))
		}
		return Snapshot{}, "", newError(NotFound, uri, msg, nil)
	}
	sort.SliceStable(snaps, func(a, b int) bool {
		if !snaps[a].ModTime.Equal(snaps[b].ModTime) {
			return snaps[a].ModTime.After(snaps[b].ModTime)
		}
		return snaps[a].ID > snaps[b].ID
	})
	best := snaps[0]
	note := fmt.Sprintf("newest of %d complete snapshots in %s: %s", len(snaps), uri, path.Base(best.URI))
	if !best.ModTime.IsZero() {
		note += fmt.Sprintf(", written %s ago", time.Since(best.ModTime).Round(time.Second))
	}
	if len(incomplete) > 0 {
		note += fmt.Sprintf("; skipped incomplete %s", strings.Join(incomplete, ", "))
	}
	return best, note, nil
}

// snapshotName classifies a folder name: chk-N or savepoint-*.
func snapshotName(name string) (kind string, id int64, ok bool) {
	if n, found := strings.CutPrefix(name, "chk-"); found {
		id, err := strconv.ParseInt(n, 10, 64)
		return "checkpoint", id, err == nil && id >= 0
	}
	if strings.HasPrefix(name, "savepoint-") {
		return "savepoint", 0, true
	}
	return "", 0, false
}

func (o *Opener) latestLocal(p string) ([]Snapshot, []string, error) {
	if hasDotDot(p) {
		return nil, nil, newError(PermissionDenied, p, `".." is not allowed`, nil)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil, nil, newError(Invalid, p, "", err)
	}
	shown := abs // errors show a relative path as given, not the daemon's working directory
	if !filepath.IsAbs(p) {
		shown = filepath.ToSlash(filepath.Clean(p))
	}
	if o.matchLocal(abs, true) == nil {
		return nil, nil, newError(PermissionDenied, shown, "outside the allowlist", nil)
	}
	resolved, err := o.resolve(abs, shown)
	if err != nil {
		return nil, nil, err
	}
	if fi, err := os.Stat(filepath.Join(resolved, MetadataName)); err == nil && fi.Mode().IsRegular() {
		kind, id, _ := snapshotName(filepath.Base(abs))
		if kind == "" {
			kind = "checkpoint"
		}
		return []Snapshot{{URI: abs, Kind: kind, ID: id, ModTime: fi.ModTime()}}, nil, nil
	}
	entries, err := os.ReadDir(resolved)
	if err != nil {
		return nil, nil, localError(shown, err)
	}
	var snaps []Snapshot
	var incomplete []string
	for _, e := range entries {
		kind, id, ok := snapshotName(e.Name())
		if !ok || !e.IsDir() {
			continue
		}
		dir := filepath.Join(abs, e.Name())
		// Each candidate is re-checked against the allowlist (a symlinked folder may leave it).
		res, err := o.resolve(filepath.Join(dir, MetadataName), path.Join(shown, e.Name(), MetadataName))
		if err != nil {
			var se *Error
			if errors.As(err, &se) && se.Kind == NotFound {
				incomplete = append(incomplete, e.Name())
				continue
			}
			return nil, nil, err
		}
		fi, err := os.Stat(res)
		if err != nil || !fi.Mode().IsRegular() {
			incomplete = append(incomplete, e.Name())
			continue
		}
		snaps = append(snaps, Snapshot{URI: dir, Kind: kind, ID: id, ModTime: fi.ModTime()})
	}
	return snaps, incomplete, nil
}

func (o *Opener) latestBlob(ctx context.Context, uri string) ([]Snapshot, []string, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return nil, nil, newError(Invalid, "", "cannot parse URI", err)
	}
	rule, err := o.matchRemote(u)
	if err != nil {
		return nil, nil, err
	}
	b, err := o.bucket(ctx, rule)
	shown := func(k string) string { return rule.scheme + "://" + u.Host + "/" + k }
	if err != nil {
		return nil, nil, o.blobError(ctx, nil, u.Host, shown(""), err)
	}
	prefix := strings.TrimPrefix(u.Path, "/")
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	if attrs, err := b.Attributes(ctx, prefix+MetadataName); err == nil {
		kind, id, _ := snapshotName(path.Base(strings.TrimSuffix(prefix, "/")))
		if kind == "" {
			kind = "checkpoint"
		}
		return []Snapshot{{URI: shown(strings.TrimSuffix(prefix, "/")), Kind: kind, ID: id, ModTime: attrs.ModTime}}, nil, nil
	}
	it := b.List(&blob.ListOptions{Prefix: prefix, Delimiter: "/"})
	var snaps []Snapshot
	var incomplete []string
	for n := 0; ; n++ {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		if n >= 10000 {
			return nil, nil, newError(Invalid, shown(prefix), "more than 10000 entries: name a job's checkpoint folder", nil)
		}
		obj, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, o.blobError(ctx, nil, u.Host, shown(prefix), err)
		}
		if !obj.IsDir {
			continue
		}
		name := path.Base(strings.TrimSuffix(obj.Key, "/"))
		kind, id, ok := snapshotName(name)
		if !ok {
			continue
		}
		attrs, err := b.Attributes(ctx, obj.Key+MetadataName)
		if gcerrors.Code(err) == gcerrors.NotFound {
			incomplete = append(incomplete, name)
			continue
		}
		if err != nil {
			return nil, nil, o.blobError(ctx, nil, u.Host, shown(obj.Key+MetadataName), err)
		}
		snaps = append(snaps, Snapshot{URI: shown(strings.TrimSuffix(obj.Key, "/")), Kind: kind, ID: id, ModTime: attrs.ModTime})
	}
	return snaps, incomplete, nil
}
