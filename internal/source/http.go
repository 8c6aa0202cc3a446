package source

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"
)

// The http(s) backend: a _metadata served by a web server or a file server's folder listing,
// enabled by Config.EnableHTTP. Redirects must stay inside the allowlist (New); busy upstreams'
// Retry-After hints are honoured within MaxRetryWait and clamped to MaxRetryAfter (upstream.go).

func (o *Opener) openHTTP(ctx context.Context, u *url.URL, _ *remoteRule) (*Object, error) {
	base := *u
	var candidates []url.URL
	switch {
	case strings.HasSuffix(base.Path, "/"):
		base.Path += MetadataName
		candidates = []url.URL{base}
	case path.Base(base.Path) == MetadataName:
		candidates = []url.URL{base}
	default:
		folder := base
		folder.Path += "/" + MetadataName
		candidates = []url.URL{base, folder}
	}
	var tried []string
	var waited time.Duration // on Retry-After hints, over all candidates
	for _, c := range candidates {
		shown := redact(&c)
		tried = append(tried, shown)
		obj, found, err := o.getHTTP(ctx, &c, shown, &waited)
		if err != nil || found {
			return obj, err
		}
	}
	return nil, newError(NotFound, strings.Join(tried, " nor "), "no such file", nil)
}

// getHTTP GETs one candidate URL: the object, not found (false, nil), or an error. An upstream
// that is busy (429, 503) with a Retry-After is asked again after that delay when the wait fits
// in MaxRetryWait and before the caller's deadline; otherwise its hint, clamped, is passed on.
func (o *Opener) getHTTP(ctx context.Context, c *url.URL, shown string, waited *time.Duration) (*Object, bool, error) {
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.String(), nil)
		if err != nil {
			return nil, false, newError(Invalid, shown, "", err)
		}
		w := o.watch(ctx)
		resp, err := o.http.Do(req.WithContext(w.ctx))
		if err != nil {
			w.stop()
			if f := w.fault(c.Host, shown); f != nil {
				return nil, false, f
			}
			var se *Error
			if errors.As(err, &se) {
				return nil, false, se // a redirect outside the allowlist
			}
			return nil, false, &Error{Kind: Unavailable, Path: shown, Msg: fmt.Sprintf("upstream %s unreachable: %s", c.Host, describe(err)), Err: err, RetryAfter: o.cfg.RetryAfter}
		}
		switch {
		case resp.StatusCode == http.StatusOK && isListing(resp):
			resp.Body.Close()
			w.stop()
			return nil, false, nil // a folder: try its _metadata
		case resp.StatusCode == http.StatusOK:
		case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
			resp.Body.Close()
			w.stop()
			return nil, false, nil
		case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
			resp.Body.Close()
			w.stop()
			return nil, false, newError(PermissionDenied, shown, resp.Status, nil)
		default:
			resp.Body.Close()
			w.stop()
			retry, hinted := parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
			if !hinted {
				retry = o.cfg.RetryAfter
			}
			busy := resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable
			if busy && hinted && attempt < maxRetries && o.canWait(ctx, retry, *waited) {
				t := time.NewTimer(retry)
				select {
				case <-t.C:
				case <-ctx.Done():
					t.Stop()
					return nil, false, ctx.Err()
				}
				*waited += retry
				continue
			}
			return nil, false, &Error{Kind: Unavailable, Path: shown, Msg: fmt.Sprintf("upstream %s answered %s", c.Host, resp.Status), RetryAfter: retry}
		}
		if err := o.checkSize(shown, resp.ContentLength); err != nil {
			resp.Body.Close()
			w.stop()
			return nil, false, err
		}
		var key string
		if v := resp.Header.Get("ETag") + resp.Header.Get("Last-Modified"); v != "" && resp.ContentLength >= 0 {
			key = fmt.Sprintf("%s|%d|%s", shown, resp.ContentLength, v)
		}
		w.progress()
		host := c.Host
		body := &watchedBody{rc: resp.Body, w: w, host: host, shown: shown, wrap: func(err error) error {
			return &Error{Kind: Unavailable, Path: shown, Msg: fmt.Sprintf("upstream %s broke off: %s", host, describe(err)), Err: err, RetryAfter: o.cfg.RetryAfter}
		}}
		return &Object{ReadCloser: o.limit(shown, body), URI: shown, Size: resp.ContentLength, CacheKey: key}, true, nil
	}
}

// canWait reports whether waiting d more (after waited) stays within MaxRetryWait and ends
// before the caller's deadline, keeping room to fetch afterwards.
func (o *Opener) canWait(ctx context.Context, d, waited time.Duration) bool {
	if waited+d > MaxRetryWait {
		return false
	}
	if dl, ok := ctx.Deadline(); ok {
		left := time.Until(dl)
		return d < left-deadlineReserve(left)-d/2
	}
	return true
}

// isListing reports a response that is a folder, not a file: the server redirected to a path
// ending in "/" (as file servers do for folders) or answered with HTML. A _metadata is binary.
func isListing(resp *http.Response) bool {
	return strings.HasSuffix(resp.Request.URL.Path, "/") || strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html")
}
