// Package gcs registers the gs:// scheme with package source: Google Cloud Storage through its
// JSON API over net/http, authenticated with golang.org/x/oauth2/google. Import it for its side
// effect in a main package (or internal/source/cloud for every store).
//
// It reads, stats and lists objects and nothing else, so it does without
// cloud.google.com/go/storage, whose gRPC transport, xDS and protos are resident in every
// binary before it reads anything (bench/README.md, "Binary footprint").
//
// Credentials are Application Default Credentials with the devstorage.read_only scope:
// GOOGLE_APPLICATION_CREDENTIALS, gcloud's application-default file, workload identity, or the
// GCE/GKE metadata server. STORAGE_EMULATOR_HOST points every bucket at an emulator without
// authentication, as Google's SDKs do (http:// unless it names a scheme). Allowlist entries take
// these query options:
//
//   - anonymous=true (or access_id=-): send no credentials (public buckets);
//   - endpoint=URL: another JSON API endpoint, e.g. a Private Service Connect one (a plain
//     http:// endpoint needs anonymous=true unless it is on this host: no token crosses a
//     network in clear);
//   - universe_domain=DOMAIN: a Google Cloud universe other than googleapis.com;
//   - access_id and private_key_path (other than access_id=-) are accepted and ignored: they only
//     configured URL signing in the gocloud driver this one replaced;
//   - grpc and zonal are refused when true: this driver speaks the JSON API only.
package gcs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"

	"github.com/flinkpreflight/preflight/internal/source"
)

// Scheme is the URI scheme this package serves.
const Scheme = "gs"

// ReadOnlyScope is the OAuth scope the driver asks for: it only ever reads.
const ReadOnlyScope = "https://www.googleapis.com/auth/devstorage.read_only"

// EmulatorHostEnv names the environment variable that points Google's SDKs at an emulator.
const EmulatorHostEnv = "STORAGE_EMULATOR_HOST"

func init() { source.Register(Scheme, Driver{}) }

// Driver opens gs:// buckets. Its zero value is ready to use.
type Driver struct{}

var _ source.Driver = Driver{}

// OpenBucket opens the bucket u names (gs://bucket?options). It finds the credentials (unless the
// bucket is read anonymously) but sends no request.
func (Driver) OpenBucket(ctx context.Context, u *url.URL) (source.Bucket, error) {
	if u.Host == "" {
		return nil, &OptionError{Msg: "no bucket name"}
	}
	opts, err := parseOptions(u.Query())
	if err != nil {
		return nil, err
	}
	b := &bucket{name: u.Host, transport: newTransport()}
	b.http = newClient(b.transport)
	endpoint := opts.endpoint
	anonymous := opts.anonymous
	if endpoint == "" {
		if host := os.Getenv(EmulatorHostEnv); host != "" {
			// As cloud.google.com/go/storage does: the emulator's scheme or http, no credentials.
			endpoint, anonymous = host, true
			if !strings.Contains(host, "://") {
				endpoint = "http://" + host
			}
		}
	}
	var ts oauth2.TokenSource
	if !anonymous {
		creds, err := google.FindDefaultCredentialsWithParams(withTokenClient(ctx), google.CredentialsParams{
			Scopes:         []string{ReadOnlyScope},
			UniverseDomain: opts.universeDomain,
		})
		if err != nil {
			return nil, &CredentialsError{Err: err}
		}
		if endpoint == "" && opts.universeDomain == "" {
			// A credentials file may name its universe; on GCE the metadata server does. When it
			// cannot be asked, googleapis.com it is (a wrong guess ends in a 401 naming it).
			if ud, err := creds.GetUniverseDomain(); err == nil && ud != "" {
				endpoint = "https://storage." + ud
			}
		}
		// The token source keeps the context for its own token requests: it must outlive this call.
		ts = creds.TokenSource
		b.identity = credentialsIdentity(creds.JSON)
	} else {
		b.identity = "anonymous requests"
	}
	if endpoint == "" {
		endpoint = "https://storage." + defaultUniverse(opts.universeDomain)
	}
	base, err := parseEndpoint(endpoint)
	if err != nil {
		return nil, err
	}
	if base.Scheme == "http" && ts != nil && !isLoopback(base.Hostname()) {
		return nil, &OptionError{Msg: fmt.Sprintf("endpoint %s is plain http: add anonymous=true (credentials are only sent over https or to this host)", base.Redacted())}
	}
	b.base = base
	if ts != nil {
		b.http = newClient(&oauth2.Transport{Source: ts, Base: b.transport})
	}
	return b, nil
}

// ErrorKind classifies by HTTP status: 404 NotFound, 401/403 PermissionDenied, 400 Invalid,
// everything else (3xx, 429, 5xx, transport failures, corrupt bodies) Unavailable. Missing
// credentials and refused tokens are PermissionDenied; bad allowlist options and objects stored
// compressed Invalid.
func (Driver) ErrorKind(err error) source.Kind {
	var he *HTTPError
	var oe *OptionError
	var ce *CredentialsError
	var ee *EncodingError
	var re *oauth2.RetrieveError
	switch {
	case errors.As(err, &re):
		// The token endpoint refused the credentials (revoked, wrong audience, no such account).
		if re.Response != nil && re.Response.StatusCode >= 400 && re.Response.StatusCode < 500 && re.Response.StatusCode != http.StatusTooManyRequests {
			return source.PermissionDenied
		}
	case errors.As(err, &he):
		switch he.Status {
		case http.StatusNotFound:
			return source.NotFound
		case http.StatusUnauthorized, http.StatusForbidden:
			return source.PermissionDenied
		case http.StatusBadRequest:
			return source.Invalid
		}
	case errors.As(err, &oe), errors.As(err, &ee):
		return source.Invalid
	case errors.As(err, &ce):
		return source.PermissionDenied
	}
	return source.Unavailable
}

// options are an allowlist entry's query options.
type options struct {
	anonymous      bool
	endpoint       string
	universeDomain string
}

func parseOptions(q url.Values) (options, error) {
	var o options
	for k, vs := range q {
		v := vs[len(vs)-1]
		switch k {
		case "anonymous":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return o, &OptionError{Msg: fmt.Sprintf("anonymous=%q: want true or false", v)}
			}
			o.anonymous = o.anonymous || b
		case "access_id":
			// In gocloud's driver "-" meant an unauthenticated client; any other value only
			// named the signer of signed URLs, which this driver never makes.
			if v == "-" {
				o.anonymous = true
			}
		case "private_key_path":
			// Signed URLs only (see access_id).
		case "endpoint":
			o.endpoint = v
		case "universe_domain":
			if v == "" || strings.ContainsAny(v, "/:?#@ ") {
				return o, &OptionError{Msg: fmt.Sprintf("universe_domain=%q: want a domain such as googleapis.com", v)}
			}
			o.universeDomain = v
		case "grpc", "zonal":
			b, err := strconv.ParseBool(v)
			if err != nil || b {
				return o, &OptionError{Msg: fmt.Sprintf("%s=%s: this driver reads through the JSON API only", k, v)}
			}
		default:
			return o, &OptionError{Msg: fmt.Sprintf("unknown option %q (gs:// takes anonymous, endpoint, universe_domain)", k)}
		}
	}
	return o, nil
}

func defaultUniverse(ud string) string {
	if ud != "" {
		return ud
	}
	return "googleapis.com"
}

// parseEndpoint accepts an absolute http(s) URL with at most a path prefix (the JSON API's
// paths, /storage/v1/..., go below it).
func parseEndpoint(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, &OptionError{Msg: fmt.Sprintf("endpoint %q: want http(s)://host[:port][/path]", s)}
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	// Google's SDK takes endpoints ending in /storage/v1/; the paths built here add that part.
	u.Path = strings.TrimSuffix(u.Path, "/storage/v1")
	return u, nil
}

// isLoopback reports a host that names this machine: a token sent there in clear does not cross
// a network.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// OptionError is an allowlist entry's query option the driver cannot use.
type OptionError struct{ Msg string }

func (e *OptionError) Error() string { return "gcs: " + e.Msg }

// CredentialsError is a failure to find Application Default Credentials.
type CredentialsError struct{ Err error }

func (e *CredentialsError) Error() string {
	return "gcs: no Google credentials (set GOOGLE_APPLICATION_CREDENTIALS, run `gcloud auth application-default login`, run on GCE/GKE, or add anonymous=true for a public bucket): " + e.Err.Error()
}

func (e *CredentialsError) Unwrap() error { return e.Err }

// credentialsIdentity names the identity of Application Default Credentials from their JSON: a
// service account's e-mail, or the kind of credentials ("" from the metadata server, whose
// account this driver does not ask for).
func credentialsIdentity(js []byte) string {
	var c struct {
		Type        string `json:"type"`
		ClientEmail string `json:"client_email"`
	}
	if len(js) == 0 || json.Unmarshal(js, &c) != nil {
		return ""
	}
	if c.ClientEmail != "" {
		return "GCP service account " + c.ClientEmail
	}
	if c.Type != "" {
		return "GCP credentials of type " + c.Type
	}
	return ""
}
