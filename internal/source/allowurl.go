package source

import (
	"net/url"
	"strings"
)

// AllowURL checks a URL the server is asked to call that is not a checkpoint (the Flink REST
// endpoint of an autoscaler's Decide): it must lie under an http(s) entry of the allowlist.
// --enable-http-sources is not needed: it only governs reading checkpoints over http(s).
func (o *Opener) AllowURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return newError(Invalid, "", "cannot parse URL", err)
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return newError(Invalid, redact(u), "want an http(s) URL", nil)
	}
	if u.User != nil {
		return newError(Invalid, redact(u), "URL must not carry user info", nil)
	}
	_, err = o.matchRemote(u)
	return err
}
