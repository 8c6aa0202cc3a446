package source

import (
	"context"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
)

// StatFile returns the attributes of the file or object uri names: a local path or file://
// URI, or an object in a store whose driver is registered, inside the allowlist exactly as Open
// requires (no "..", symlinks resolved and re-checked, the allowlist entry's query options).
// Unlike Open it looks for no _metadata inside a folder: a folder is NotFound. It serves the
// verification of the state files a checkpoint references. A location outside the allowlist is
// a PermissionDenied error matching ErrOutsideAllowlist; http(s) URIs and unknown schemes are
// Invalid.
func (o *Opener) StatFile(ctx context.Context, uri string) (ObjectAttrs, error) {
	if uri == "" {
		return ObjectAttrs{}, newError(Invalid, "", "empty URI", nil)
	}
	p, local := FilePath(uri)
	if local {
		return o.statLocal(p)
	}
	u, err := url.Parse(CanonicalFileURI(uri))
	if err != nil {
		return ObjectAttrs{}, newError(Invalid, "", "cannot parse URI", err)
	}
	if u.Fragment != "" || u.User != nil {
		return ObjectAttrs{}, newError(Invalid, redact(u), "URI must not carry a fragment or user info", nil)
	}
	if _, ok := driverFor(u.Scheme); !ok {
		return ObjectAttrs{}, newError(Invalid, redact(u), unsupportedScheme(u.Scheme), nil)
	}
	rule, err := o.matchRemote(u)
	if err != nil {
		return ObjectAttrs{}, err
	}
	key := strings.TrimPrefix(u.Path, "/")
	shown := rule.scheme + "://" + u.Host + "/" + key
	b, err := o.bucket(ctx, rule)
	if err != nil {
		return ObjectAttrs{}, o.storeError(ctx, rule, nil, u.Host, shown, err)
	}
	w := o.watch(ctx)
	attrs, err := b.Stat(w.ctx, key)
	defer w.stop()
	if err != nil {
		return ObjectAttrs{}, o.storeError(ctx, rule, w, u.Host, shown, err)
	}
	return attrs, nil
}

// statLocal is StatFile of a local path.
func (o *Opener) statLocal(p string) (ObjectAttrs, error) {
	if hasDotDot(p) {
		return ObjectAttrs{}, newError(PermissionDenied, p, msgDotDot, nil)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return ObjectAttrs{}, newError(Invalid, p, "", err)
	}
	if o.matchLocal(abs, true) == nil {
		return ObjectAttrs{}, newError(PermissionDenied, p, msgOutside, nil)
	}
	resolved, err := o.resolve(abs, p)
	if err != nil {
		return ObjectAttrs{}, err
	}
	rule := o.matchLocal(resolved, false)
	var fi fs.FileInfo
	if rule.root != nil {
		rel, err := filepath.Rel(rule.dir, resolved)
		if err != nil {
			return ObjectAttrs{}, newError(PermissionDenied, p, msgOutside, err)
		}
		fi, err = rule.root.Stat(rel)
		if err != nil {
			return ObjectAttrs{}, localError(p, err)
		}
	} else if fi, err = os.Stat(resolved); err != nil {
		return ObjectAttrs{}, localError(p, err)
	}
	if fi.IsDir() {
		return ObjectAttrs{}, newError(NotFound, p, "is a folder", nil)
	}
	return ObjectAttrs{Size: fi.Size(), ModTime: fi.ModTime()}, nil
}

// Identifier is implemented by buckets that can name the identity they read as (an access key
// ID, a service account), for the errors of a refused read.
type Identifier interface {
	Identity(ctx context.Context) string
}

// Identity names who reads uri, where that is known: the user the process runs as for local
// files, the bucket's identity for stores whose driver implements Identifier; "" otherwise.
func (o *Opener) Identity(ctx context.Context, uri string) string {
	if _, local := FilePath(uri); local {
		uid := strconv.Itoa(os.Getuid())
		if u, err := user.LookupId(uid); err == nil {
			return fmt.Sprintf("local user %s (uid %s)", u.Username, uid)
		}
		return "local uid " + uid
	}
	u, err := url.Parse(uri)
	if err != nil {
		return ""
	}
	rule, err := o.matchRemote(u)
	if err != nil || rule.driver == nil {
		return ""
	}
	b, err := o.bucket(ctx, rule)
	if err != nil {
		return ""
	}
	if id, ok := b.(Identifier); ok {
		return id.Identity(ctx)
	}
	return ""
}

// ListFolder hands fn the objects directly under the folder (key prefix) uri names, with their
// sizes (-1 when the store does not say), until fn returns false or the listing ends; the
// folder must lie inside the allowlist as for StatFile. One listing request answers for up to a
// thousand objects, where StatFile asks once per object. Only object stores list: a local path
// or an http(s) URI is Invalid (stat those one by one).
func (o *Opener) ListFolder(ctx context.Context, uri string, fn func(name string, size int64) bool) error {
	if _, local := FilePath(uri); local {
		return newError(Invalid, uri, "local folders are not listed", nil)
	}
	u, err := url.Parse(uri)
	if err != nil {
		return newError(Invalid, "", "cannot parse URI", err)
	}
	if _, ok := driverFor(u.Scheme); !ok {
		return newError(Invalid, redact(u), unsupportedScheme(u.Scheme), nil)
	}
	rule, err := o.matchRemote(u)
	if err != nil {
		return err
	}
	prefix := strings.TrimPrefix(u.Path, "/")
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	shown := rule.scheme + "://" + u.Host + "/" + prefix
	b, err := o.bucket(ctx, rule)
	if err != nil {
		return o.storeError(ctx, rule, nil, u.Host, shown, err)
	}
	for e, err := range b.List(ctx, prefix) {
		if err != nil {
			return o.storeError(ctx, rule, nil, u.Host, shown, err)
		}
		if e.IsDir {
			continue
		}
		if !fn(strings.TrimPrefix(e.Key, prefix), e.Size) {
			return nil
		}
	}
	return nil
}
