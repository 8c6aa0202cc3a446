package source

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// The local backend: paths and file:// URIs inside the allowlist's folders and files. Folder
// entries are opened through an os.Root, so that no symlink can lead out of them between the
// allowlist check and the open.

// CanonicalFileURI turns Flink's form of a local URI, "file:/path" (the form of its savepoint and
// checkpoint pointers), into "file:///path"; any other string is returned as it is.
func CanonicalFileURI(uri string) string {
	if len(uri) > len("file:/") && strings.EqualFold(uri[:len("file:")], "file:") && uri[5] == '/' && uri[6] != '/' {
		return "file://" + uri[5:]
	}
	return uri
}

// FilePath returns the local path that target names: a path as it is, or the path of a
// file:///path, file://localhost/path or Flink's file:/path URI. local is false for a URI of
// another scheme (s3://, http://, …) or a file URI with a host, which Opener.Open refuses.
func FilePath(target string) (path string, local bool) {
	target = CanonicalFileURI(target)
	scheme, rest, ok := strings.Cut(target, "://")
	switch {
	case !ok || scheme == "" || strings.ContainsAny(scheme, "/\\."):
		return target, true
	case !strings.EqualFold(scheme, "file"):
		return "", false
	}
	if h, p, ok := strings.Cut(rest, "/"); ok && (h == "" || strings.EqualFold(h, "localhost")) {
		return "/" + p, true
	}
	return "", false // a host or no path: Opener.Open refuses it with the reason
}

// LocalPath vets a local path or file:// URI against the allowlist, the way Open does for
// _metadata files (no "..", lexical check first, symlinks resolved and re-checked), and returns
// the resolved path. It serves callers that read other local files than _metadata, such as the
// classpath check's jars and folders; object-store and http(s) URIs are refused as Invalid.
// Regular files over MaxBytes are TooLarge.
func (o *Opener) LocalPath(uri string) (string, error) {
	if uri == "" {
		return "", newError(Invalid, "", "empty path", nil)
	}
	uri = CanonicalFileURI(uri)
	p := uri
	if scheme, _, ok := strings.Cut(uri, "://"); ok {
		if !strings.EqualFold(scheme, "file") {
			return "", newError(Invalid, "", fmt.Sprintf("%s:// is not supported here: name a local path or a file:// URI", scheme), nil)
		}
		u, err := url.Parse(uri)
		if err != nil {
			return "", newError(Invalid, "", "cannot parse URI", err)
		}
		if (u.Host != "" && u.Host != "localhost") || u.RawQuery != "" || u.Fragment != "" {
			return "", newError(Invalid, "", "file URIs name no host, query or fragment", nil)
		}
		p = u.Path
	}
	if hasDotDot(p) {
		return "", newError(PermissionDenied, p, msgDotDot, nil)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", newError(Invalid, p, "", err)
	}
	if o.matchLocal(abs, true) == nil {
		return "", newError(PermissionDenied, abs, msgOutside, nil)
	}
	resolved, err := o.resolve(abs, p)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(resolved)
	if err != nil {
		return "", localError(p, err)
	}
	if fi.Mode().IsRegular() {
		if err := o.checkSize(abs, fi.Size()); err != nil {
			return "", err
		}
	}
	return resolved, nil
}

// matchLocal returns the rule containing p, comparing with each rule's resolved folder and, when
// lexical is set, also with the folder as written.
func (o *Opener) matchLocal(p string, lexical bool) *localRule {
	for _, r := range o.local {
		if within(p, r.dir, r.root != nil) || (lexical && within(p, r.lexical, r.root != nil)) {
			return r
		}
	}
	return nil
}

func within(p, base string, isDir bool) bool {
	if p == base {
		return true
	}
	if !isDir {
		return false
	}
	rel, err := filepath.Rel(base, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

func (o *Opener) openLocal(p string) (*Object, error) {
	// Errors and reports show the path as the caller wrote it: a relative path made absolute
	// would reveal the daemon's working directory.
	shown := p
	if !filepath.IsAbs(p) {
		shown = filepath.ToSlash(filepath.Clean(p))
	}
	if hasDotDot(p) {
		return nil, newError(PermissionDenied, shown, msgDotDot, nil)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil, newError(Invalid, shown, "", err)
	}
	// The lexical check comes first so that nothing about paths outside the allowlist (not even
	// whether they exist) leaks to the caller.
	if o.matchLocal(abs, true) == nil {
		return nil, newError(PermissionDenied, shown, msgOutside, nil)
	}
	resolved, err := o.resolve(abs, shown)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(resolved)
	if err != nil {
		return nil, localError(shown, err)
	}
	if fi.IsDir() {
		abs = filepath.Join(abs, MetadataName)
		shown = path.Join(shown, MetadataName)
		if resolved, err = o.resolve(abs, shown); err != nil {
			return nil, err
		}
	}
	rule := o.matchLocal(resolved, false)
	var f *os.File
	if rule.root != nil {
		rel, err := filepath.Rel(rule.dir, resolved)
		if err != nil {
			return nil, newError(PermissionDenied, shown, msgOutside, err)
		}
		// os.Root refuses any symlink leaving the folder, which closes the window between
		// resolving above and opening here.
		f, err = rule.root.Open(rel)
		if err != nil {
			return nil, localError(shown, err)
		}
	} else if f, err = os.Open(resolved); err != nil {
		return nil, localError(shown, err)
	}
	fi, err = f.Stat()
	if err != nil {
		f.Close()
		return nil, localError(shown, err)
	}
	if fi.IsDir() {
		f.Close()
		return nil, newError(NotFound, shown, "is a folder", nil)
	}
	if err := o.checkSize(shown, fi.Size()); err != nil {
		f.Close()
		return nil, err
	}
	uri := shown
	if filepath.IsAbs(p) {
		uri = "file://" + filepath.ToSlash(abs)
	}
	return &Object{
		ReadCloser: o.limit(shown, f),
		URI:        uri,
		Size:       fi.Size(),
		CacheKey:   fmt.Sprintf("file://%s|%d|%d", filepath.ToSlash(resolved), fi.Size(), fi.ModTime().UnixNano()),
	}, nil
}

// resolve follows symlinks and re-checks the result against the allowlist.
func (o *Opener) resolve(abs, shown string) (string, error) {
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", localError(shown, err)
	}
	if o.matchLocal(resolved, false) == nil {
		return "", newError(PermissionDenied, shown, msgSymlinkOutside, nil)
	}
	return resolved, nil
}

func localError(p string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return newError(NotFound, p, "no such file", nil)
	case errors.Is(err, fs.ErrPermission):
		return newError(PermissionDenied, p, "not readable by the server", err)
	}
	// What is left is mostly os.Root refusing an escape; refusing is the safe answer.
	return newError(PermissionDenied, p, "cannot open", err)
}

func (o *Opener) latestLocal(p string) ([]Snapshot, []string, error) {
	if hasDotDot(p) {
		return nil, nil, newError(PermissionDenied, p, msgDotDot, nil)
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
		return nil, nil, newError(PermissionDenied, shown, msgOutside, nil)
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
