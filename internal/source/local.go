package source

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// LocalPath vets a local path or file:// URI against the allowlist, the way Open does for
// _metadata files (no "..", lexical check first, symlinks resolved and re-checked), and returns
// the resolved path. It serves callers that read other local files than _metadata, such as the
// classpath check's jars and folders; object-store and http(s) URIs are refused as Invalid.
// Regular files over MaxBytes are TooLarge.
func (o *Opener) LocalPath(uri string) (string, error) {
	if uri == "" {
		return "", newError(Invalid, "", "empty path", nil)
	}
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
		return "", newError(PermissionDenied, p, `".." is not allowed`, nil)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", newError(Invalid, p, "", err)
	}
	if o.matchLocal(abs, true) == nil {
		return "", newError(PermissionDenied, abs, "outside the allowlist", nil)
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
