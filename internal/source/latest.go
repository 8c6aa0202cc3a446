package source

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
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
