// Package statefiles answers "will the restore find its files?" (verify_files): it lists every
// state file a checkpoint's _metadata references (checkpoint.ReadFileRefs), resolves relative
// handles against the checkpoint folder exactly as Flink does, merges the references to one file
// (file-merging segments share their physical file), stats each file with bounded concurrency
// through package source (the same drivers and allowlist as the _metadata itself) and compares
// the recorded sizes. It reports in API terms: the findings PF210 (missing, wrong or refused
// files) and PF211 (files it could not verify) and the FileVerification summary. It reads no
// file's content and decides nothing about parallelism.
package statefiles

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/source"
)

// File is one distinct state file the checkpoint references.
type File struct {
	// URI is where Flink reads the file: a local path, file:// or object-store URI; "" when it
	// cannot be verified here (Unverifiable says why).
	URI string
	// Recorded is the path as _metadata records it; Relative is set for a RelativeFileStateHandle's
	// (tag 6), resolved against the folder of _metadata.
	Recorded string
	Relative bool
	// Size is the size file handles recorded (-1 when only segments reference the file);
	// MinSize the largest end of a segment in it (or Size).
	Size, MinSize int64
	// SizeConflict is set when two file handles recorded different sizes for the file.
	SizeConflict bool
	// Operator and Subtask are the first reference's.
	Operator checkpoint.OperatorID
	Subtask  int
	// Refs counts the handles and segments pointing to it.
	Refs int
	// Unverifiable says why the file cannot be verified here ("" when it can).
	Unverifiable string
}

// MaxFiles bounds the distinct files one verification holds (about 300 bytes each with their
// outcome): a _metadata of more file handles, hostile or not, does not grow it further; the
// references past it are counted (Result.Skipped) and reported as not verified.
const MaxFiles = 1 << 20

// List reads the _metadata stream r (of the expected size, 0 when unknown) and returns every
// distinct file it references, sorted by URI (then recorded path). metadataURI is where the
// _metadata was read (its folder resolves relative handles); "" for an upload, whose relative
// files are then unverifiable.
func List(ctx context.Context, r io.Reader, size int64, metadataURI string) ([]File, error) {
	files, _, err := list(ctx, r, size, metadataURI, MaxFiles)
	return files, err
}

// list is List holding at most limit files; it returns how many references it skipped.
func list(ctx context.Context, r io.Reader, size int64, metadataURI string, limit int) ([]File, int64, error) {
	byKey := map[string]*File{}
	var order []*File
	var skipped int64
	err := checkpoint.ReadFileRefs(ctx, r, size, func(ref checkpoint.FileRef) {
		uri, why := Target(ref, metadataURI)
		key := uri
		if uri == "" {
			key = "\x00" + ref.Path
		}
		f := byKey[key]
		if f == nil && len(order) >= limit {
			skipped++
			return
		}
		if f == nil {
			f = &File{URI: uri, Recorded: ref.Path, Relative: ref.Kind == checkpoint.StreamRelativeFile, Size: -1,
				Operator: ref.Operator, Subtask: ref.Subtask, Unverifiable: why}
			byKey[key] = f
			order = append(order, f)
		}
		f.Refs++
		if ref.Kind != checkpoint.StreamSegment {
			if f.Size >= 0 && f.Size != ref.Size {
				f.SizeConflict = true
			}
			if f.Size < 0 {
				f.Size = ref.Size
			}
		}
		f.MinSize = max(f.MinSize, ref.MinSize())
	})
	if err != nil {
		return nil, 0, err
	}
	out := make([]File, len(order))
	for i, f := range order {
		out[i] = *f
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].URI != out[j].URI {
			return out[i].URI < out[j].URI
		}
		return out[i].Recorded < out[j].Recorded
	})
	return out, skipped, nil
}

// Target returns the URI Flink reads ref from, or "" and the reason it cannot be verified here.
func Target(ref checkpoint.FileRef, metadataURI string) (uri, why string) {
	if ref.Kind == checkpoint.StreamRelativeFile {
		if colon, slash := strings.IndexByte(ref.Path, ':'), strings.IndexByte(ref.Path, '/'); colon > 0 && (slash < 0 || colon < slash) {
			// Flink's Path(String) reads a scheme before the first slash: the child is then an
			// absolute URI, and URI.resolve returns it as it is.
			return Absolute(ref.Path)
		}
		if metadataURI == "" {
			return "", "relative to the checkpoint folder, which an uploaded _metadata does not name"
		}
		return Resolve(metadataURI, ref.Path), ""
	}
	return Absolute(ref.Path)
}

// Resolve resolves a RelativeFileStateHandle's path against the folder of the _metadata at
// metadataURI exactly as Flink does (MetadataV2V3SerializerBase: new Path(exclusiveDir,
// relativePath), the exclusive dir being the folder of _metadata): the relative path is
// normalised as Flink's Path(String) does (backslashes become slashes, repeated slashes one, a
// trailing slash dropped), a leading slash is dropped (Path(Path, Path) keeps the child relative),
// and the result is resolved as java.net.URI.resolve does (dot segments removed).
func Resolve(metadataURI, rel string) string {
	dirURI := metadataURI[:strings.LastIndex(metadataURI, "/")+1]
	child := normalizeFlinkPath(rel)
	child = strings.TrimPrefix(child, "/")
	prefix, dir := "", dirURI
	if scheme, rest, ok := strings.Cut(source.CanonicalFileURI(dirURI), "://"); ok {
		host, p, _ := strings.Cut(rest, "/")
		prefix, dir = scheme+"://"+host, "/"+p
	}
	joined := path.Join(dir, child)
	if dir == "" || !strings.HasPrefix(dir, "/") {
		// A relative local path (the CLI's ./chk-1/_metadata): keep it relative.
		joined = path.Join(".", dir, child)
	}
	return prefix + joined
}

var repeatedSlashes = regexp.MustCompile(`/{2,}`)

// normalizeFlinkPath is Flink's Path.normalizePath.
func normalizeFlinkPath(p string) string {
	p = strings.ReplaceAll(p, `\`, "/")
	p = repeatedSlashes.ReplaceAllString(p, "/")
	if len(p) > 1 && strings.HasSuffix(p, "/") {
		p = strings.TrimSuffix(p, "/")
	}
	return p
}

// Absolute maps a FileStateHandle's or segment's path, as Flink's file systems write it, onto
// the URI package source reads: file:/p and /p are local; s3a://, s3p:// and s3n:// are the
// s3:// bucket (Flink's S3 file systems share S3's layout); gs:// stays; Azure's
// wasb(s)://container@account.host/p and abfs(s)://container@account.host/p become
// azblob://container/p (the driver's account is the environment's). Anything else (hdfs://,
// oss://, viewfs://) has no driver: "" and the reason.
func Absolute(p string) (uri, why string) {
	if local, ok := source.FilePath(p); ok {
		if !strings.HasPrefix(local, "/") {
			return "", "neither a URI nor an absolute path"
		}
		return "file://" + local, ""
	}
	u, err := url.Parse(p)
	if err != nil || u.Host == "" {
		return "", "not a URI this tool can read"
	}
	scheme := strings.ToLower(u.Scheme)
	switch scheme {
	case "s3", "s3a", "s3p", "s3n":
		return "s3://" + u.Host + u.EscapedPath(), ""
	case "gs":
		return "gs://" + u.Host + u.EscapedPath(), ""
	case "wasb", "wasbs", "abfs", "abfss":
		if u.User == nil || u.User.Username() == "" {
			return "", fmt.Sprintf("%s:// path without a container@account authority", scheme)
		}
		return "azblob://" + u.User.Username() + u.EscapedPath(), ""
	}
	return "", fmt.Sprintf("no driver for %s:// (supported: local files, s3, gs, Azure)", scheme)
}
