package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Bounds on trusting an upstream (an http(s) server or object store).
const (
	// DefaultUpstreamTimeout is how long an upstream may take to answer, or to send the next
	// bytes of a body, before the read fails as Unavailable.
	DefaultUpstreamTimeout = 30 * time.Second
	// MaxRetryAfter clamps every retry delay this package advises (Error.RetryAfter): an
	// upstream's Retry-After of years becomes a minute.
	MaxRetryAfter = 60 * time.Second
	// MaxRetryWait bounds the time one Open spends waiting for an upstream's Retry-After before
	// trying again; a longer hint is passed on to the caller instead of waited for.
	MaxRetryWait = 30 * time.Second
	// maxRetries bounds the attempts after a Retry-After.
	maxRetries = 2
)

// Causes of an upstream exchange the watchdog ended.
var (
	errUpstreamIdle     = errors.New("upstream idle")
	errUpstreamDeadline = errors.New("upstream out of time")
)

// watchdog bounds one exchange with an upstream: it cancels when the upstream makes no progress
// for the timeout, or shortly before the caller's own deadline. The caller then learns that the
// upstream (named) was unavailable, instead of a DEADLINE_EXCEEDED that blames nobody.
type watchdog struct {
	parent context.Context
	ctx    context.Context
	cancel context.CancelCauseFunc
	stopDL context.CancelFunc
	timer  *time.Timer
	idle   time.Duration
}

// deadlineReserve is how long before the caller's deadline an upstream is given up: a tenth of
// the time left, at most a second.
func deadlineReserve(left time.Duration) time.Duration {
	return min(time.Second, left/10)
}

func (o *Opener) watch(parent context.Context) *watchdog {
	w := &watchdog{parent: parent, idle: o.cfg.UpstreamTimeout}
	w.ctx, w.cancel = context.WithCancelCause(parent)
	w.stopDL = func() {}
	if dl, ok := parent.Deadline(); ok {
		w.ctx, w.stopDL = context.WithDeadlineCause(w.ctx, dl.Add(-deadlineReserve(time.Until(dl))), errUpstreamDeadline)
	}
	w.timer = time.AfterFunc(w.idle, func() { w.cancel(errUpstreamIdle) })
	return w
}

// progress restarts the idle timer.
func (w *watchdog) progress() { w.timer.Reset(w.idle) }

func (w *watchdog) stop() {
	w.timer.Stop()
	w.stopDL()
	w.cancel(nil)
}

// fault turns an error of the exchange into the caller's context error (the caller gave up), an
// Unavailable error naming host (the watchdog gave up), or nil (neither: look at err itself).
func (w *watchdog) fault(host, shown string) error {
	if err := w.parent.Err(); err != nil {
		return err
	}
	if w.ctx.Err() == nil {
		return nil
	}
	var msg string
	switch context.Cause(w.ctx) {
	case errUpstreamIdle:
		msg = fmt.Sprintf("upstream %s sent nothing for %v", host, w.idle)
	case errUpstreamDeadline:
		msg = fmt.Sprintf("upstream %s did not finish before the request's deadline", host)
	default:
		return nil
	}
	return &Error{Kind: Unavailable, Path: shown, Msg: msg, RetryAfter: clampRetry(w.idle / 6)}
}

// watchedBody feeds the watchdog on every read and stops it at Close.
type watchedBody struct {
	rc    io.ReadCloser
	w     *watchdog
	host  string
	shown string
	wrap  func(error) error // maps other read errors
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.w.progress()
	}
	if err != nil && err != io.EOF {
		if f := b.w.fault(b.host, b.shown); f != nil {
			return n, f
		}
		if b.wrap != nil {
			err = b.wrap(err)
		}
	}
	return n, err
}

func (b *watchedBody) Close() error {
	err := b.rc.Close()
	b.w.stop()
	return err
}

// clampRetry keeps a retry delay within 0..MaxRetryAfter.
func clampRetry(d time.Duration) time.Duration {
	return min(max(d, 0), MaxRetryAfter)
}

// parseRetryAfter reads an HTTP Retry-After (delay-seconds or an HTTP-date, RFC 9110 10.2.3),
// clamped to 0..MaxRetryAfter without overflowing on absurd values.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if v[0] >= '0' && v[0] <= '9' {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			var ne *strconv.NumError
			if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
				return MaxRetryAfter, true // all digits, too many of them
			}
			return 0, false
		}
		if n > uint64(MaxRetryAfter/time.Second) {
			return MaxRetryAfter, true
		}
		return time.Duration(n) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return clampRetry(t.Sub(now)), true
}

// describe classifies a transport error for the caller without its details (which can name
// server-side files, such as a credentials path): the full error goes to the server's log.
func describe(err error) string {
	var ne net.Error
	var dns *net.DNSError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &dns):
		return "name lookup failed"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection reset"
	case errors.As(err, &ne) && ne.Timeout():
		return "timed out"
	case strings.Contains(err.Error(), "tls:"), strings.Contains(err.Error(), "x509:"):
		return "TLS handshake failed"
	}
	return "transport error"
}
