// Package flinkrest reads what an autoscaler's pre-flight needs from a running Flink job through
// the JobManager's REST API: the job's vertices (JobVertexID, name, parallelism, max
// parallelism), the operators chained into each vertex where Flink says so (the stream graph
// of Flink 2.x, the vertex names of 1.x), its checkpoints (latest completed checkpoint, latest
// savepoint, the one it restored from) and its checkpoint configuration. It chooses the newest
// restorable checkpoint and says why. It reads nothing else and decides nothing: the URL has been
// allowed by the caller, and the checkpoint it names is opened by internal/source.
//
// Shapes follow Flink's REST API (JobDetailsInfo, JobPlanInfo, CheckpointingStatistics,
// CheckpointConfigInfo); testdata holds responses for Flink 1.15, 1.19/1.20 and 2.x.
package flinkrest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
)

// Kind classifies errors so that callers can map them (gRPC codes, exit codes).
type Kind int

const (
	// Invalid: a malformed job ID or URL.
	Invalid Kind = iota + 1
	// NotFound: Flink does not know the job.
	NotFound
	// FailedPrecondition: the job has no restorable checkpoint, or one Preflight cannot read.
	FailedPrecondition
	// Unavailable: the REST endpoint is unreachable or failed.
	Unavailable
	// PermissionDenied: Flink refused the token (401/403).
	PermissionDenied
)

// Error is a failure to learn about the job.
type Error struct {
	Kind Kind
	Msg  string
	Err  error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return "flink rest: " + e.Msg + ": " + e.Err.Error()
	}
	return "flink rest: " + e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

// IsKind reports whether err is an *Error of kind k.
func IsKind(err error, k Kind) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == k
}

// Options configure the HTTP client.
type Options struct {
	// Timeout bounds each request (0: 10 s).
	Timeout time.Duration
	// CAFile is a PEM bundle to verify https endpoints (empty: the system roots).
	CAFile string
	// InsecureSkipVerify disables certificate verification (tests, self-signed clusters).
	InsecureSkipVerify bool
	// TokenFile holds a bearer token sent as "Authorization: Bearer ..." (read at each call, so
	// rotated tokens are picked up). TokenEnv names an environment variable holding one instead.
	TokenFile, TokenEnv string
	// Transport overrides the HTTP transport (tests).
	Transport http.RoundTripper
}

// Client talks to one JobManager REST endpoint.
type Client struct {
	base *url.URL
	http *http.Client
	opts Options
}

// New returns a client for the REST endpoint at base (http or https).
func New(base string, opts Options) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(base, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &Error{Kind: Invalid, Msg: fmt.Sprintf("REST URL %q: want http(s)://host:port", base)}
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, &Error{Kind: Invalid, Msg: fmt.Sprintf("REST URL %q: no user info, query or fragment", redact(u))}
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	tr := opts.Transport
	if tr == nil {
		var err error
		if tr, err = sharedTransport(opts); err != nil {
			return nil, err
		}
	}
	return &Client{base: u, opts: opts, http: &http.Client{
		Transport: tr,
		Timeout:   opts.Timeout,
		// Flink's REST API does not redirect; following one could leave the allowed endpoint.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}, nil
}

// URL is the endpoint's base URL.
func (c *Client) URL() string { return c.base.String() }

// ValidJobID reports whether id is a JobID as Flink prints it: 32 hex characters.
func ValidJobID(id string) bool {
	if len(id) != 32 {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil
}

func (c *Client) token() (string, error) {
	switch {
	case c.opts.TokenFile != "":
		b, err := os.ReadFile(c.opts.TokenFile)
		if err != nil {
			return "", &Error{Kind: Invalid, Msg: "token file", Err: err}
		}
		return strings.TrimSpace(string(b)), nil
	case c.opts.TokenEnv != "":
		t := strings.TrimSpace(os.Getenv(c.opts.TokenEnv))
		if t == "" {
			return "", &Error{Kind: Invalid, Msg: fmt.Sprintf("environment variable %s holds no token", c.opts.TokenEnv)}
		}
		return t, nil
	}
	return "", nil
}

// maxBody bounds a REST response: a job's details with thousands of vertices stay far below.
const maxBody = 32 << 20

// get fetches path (below the base URL) into v. A 404 yields NotFound with notFound as message.
func (c *Client) get(ctx context.Context, path string, v any, notFound string) error {
	u := *c.base
	u.Path = strings.TrimRight(u.Path, "/") + path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return &Error{Kind: Invalid, Msg: "request", Err: err}
	}
	req.Header.Set("Accept", "application/json")
	tok, err := c.token()
	if err != nil {
		return err
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	shown := redact(&u)
	resp, err := c.http.Do(req)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		return &Error{Kind: Unavailable, Msg: "GET " + shown + ": unreachable", Err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		return &Error{Kind: Unavailable, Msg: "GET " + shown + ": reading the response", Err: err}
	}
	switch {
	case resp.StatusCode == http.StatusOK:
	case resp.StatusCode == http.StatusNotFound:
		return &Error{Kind: NotFound, Msg: notFound + " (" + flinkErrors(body, resp.Status) + ")"}
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return &Error{Kind: PermissionDenied, Msg: "GET " + shown + ": " + resp.Status}
	default:
		return &Error{Kind: Unavailable, Msg: "GET " + shown + ": " + flinkErrors(body, resp.Status)}
	}
	if len(body) > maxBody {
		return &Error{Kind: Unavailable, Msg: fmt.Sprintf("GET %s: response larger than %d bytes", shown, maxBody)}
	}
	if err := json.Unmarshal(body, v); err != nil {
		return &Error{Kind: Unavailable, Msg: "GET " + shown + ": not a Flink REST response", Err: err}
	}
	return nil
}

// flinkErrors renders Flink's ErrorResponseBody ({"errors": [...]}) or the status.
func flinkErrors(body []byte, status string) string {
	var e struct {
		Errors []string `json:"errors"`
	}
	if json.Unmarshal(body, &e) == nil && len(e.Errors) > 0 {
		msg := strings.TrimSpace(strings.SplitN(e.Errors[0], "\n", 2)[0])
		if len(msg) > 300 {
			msg = msg[:300] + "..."
		}
		return status + ": " + msg
	}
	return status
}

func redact(u *url.URL) string {
	c := *u
	c.User = nil
	c.RawQuery = ""
	return c.String()
}

// transports are shared by every client with the same TLS settings and timeout, so that a
// server creating a client per request reuses connections instead of leaking idle ones.
var (
	transportsMu sync.Mutex
	transports   = map[transportKey]*http.Transport{}
)

type transportKey struct {
	timeout  time.Duration
	ca       string
	insecure bool
}

func sharedTransport(opts Options) (*http.Transport, error) {
	key := transportKey{opts.Timeout, opts.CAFile, opts.InsecureSkipVerify}
	transportsMu.Lock()
	defer transportsMu.Unlock()
	if t, ok := transports[key]; ok {
		return t, nil
	}
	t := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: opts.Timeout}).DialContext,
		TLSHandshakeTimeout:   opts.Timeout,
		ResponseHeaderTimeout: opts.Timeout,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
	}
	if opts.CAFile != "" || opts.InsecureSkipVerify {
		tc := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: opts.InsecureSkipVerify}
		if opts.CAFile != "" {
			pem, err := os.ReadFile(opts.CAFile)
			if err != nil {
				return nil, &Error{Kind: Invalid, Msg: "CA file", Err: err}
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, &Error{Kind: Invalid, Msg: fmt.Sprintf("CA file %s: no PEM certificate", opts.CAFile)}
			}
			tc.RootCAs = pool
		}
		t.TLSClientConfig = tc
	}
	transports[key] = t
	return t, nil
}
