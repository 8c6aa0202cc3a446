package server

import (
	"cmp"
	"log/slog"
	"runtime"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	flinkadmission "github.com/flinkpreflight/preflight/internal/admission"
	"github.com/flinkpreflight/preflight/internal/engine"
	"github.com/flinkpreflight/preflight/internal/flinkrest"
)

// Defaults of Config's zero values.
const (
	DefaultMaxUploadBytes  = 512 << 20
	DefaultMaxInlineBytes  = 8 << 20
	DefaultRequestTimeout  = 2 * time.Minute
	DefaultMaxTimeout      = 10 * time.Minute
	DefaultCacheEntries    = 32
	DefaultShutdownTimeout = 30 * time.Second
	// DefaultQueueWait lets ordinary bursts (50 callers on 2 × cores slots) wait their turn.
	DefaultQueueWait = time.Second
	// DefaultUploadIdleTimeout ends an upload that sends nothing for this long.
	DefaultUploadIdleTimeout = 30 * time.Second
	// DefaultSendIdleTimeout ends an answer in pieces whose client reads nothing for this long.
	DefaultSendIdleTimeout = 30 * time.Second
	// DefaultPeerShare is the part of the memory budget one peer's arriving uploads may hold.
	DefaultPeerShare = 0.5
	// DefaultCacheShare is the part of the memory budget the layout cache may hold at most.
	DefaultCacheShare = 4 // 1/4
	// DefaultResultCacheShare is the part of CacheBytes cached answers may hold at most.
	DefaultResultCacheShare = 4 // 1/4
	// DefaultRevalidateInterval bounds how stale a cached answer or layout can be.
	DefaultRevalidateInterval = time.Second
	// HTTP listener limits: headers, the whole body of a JSON request, and keep-alive idleness.
	DefaultHTTPReadHeaderTimeout = 10 * time.Second
	DefaultHTTPBodyTimeout       = 30 * time.Second
	DefaultHTTPIdleTimeout       = 60 * time.Second
	DefaultHTTPMaxHeaderBytes    = 64 << 10
)

// Config assembles a Server. Zero values take the defaults above.
type Config struct {
	// Engine runs the checks; nil means engine.New().
	Engine *engine.Engine

	// Allow is the allowlist of URI prefixes CheckRescale and InspectCheckpoint may read (see
	// source.Config.Allow). Empty: only inline bytes and uploads are accepted.
	Allow []string
	// EnableHTTPSources allows http(s):// URIs inside the allowlist.
	EnableHTTPSources bool

	// MaxUploadBytes bounds a _metadata file, uploaded or read from a URI (RESOURCE_EXHAUSTED).
	MaxUploadBytes int64
	// MaxInlineBytes bounds CheckpointSource.metadata; it also sets the gRPC receive limit.
	MaxInlineBytes int64
	// UploadMinRate is the slowest average rate, in bytes per second, at which an HTTP upload
	// body may arrive once UploadRateGrace has passed (a slow-loris guard that does not cap the
	// total time of a large upload); 0 means DefaultUploadMinRate, negative disables it.
	UploadMinRate int64
	// UploadRateGrace is the time an HTTP upload gets before UploadMinRate counts; 0 means
	// DefaultUploadRateGrace.
	UploadRateGrace time.Duration
	// MaxConcurrent bounds the checks simulating at once (decoding and receiving hold no slot,
	// only memory); 0 means 2 × GOMAXPROCS.
	MaxConcurrent int
	// QueueWait is how long a request waits for a slot or memory before RESOURCE_EXHAUSTED; 0
	// means DefaultQueueWait, negative fails at once.
	QueueWait time.Duration
	// MemoryBudget is the memory requests and cached layouts may hold (see internal/memmodel); 0
	// derives it from the container's memory limit (DefaultMemoryBudget).
	MemoryBudget int64
	// CacheBytes bounds the layout cache in bytes (it also gives way to requests); 0 means a
	// quarter of MemoryBudget.
	CacheBytes int64
	// PeerShare is the part of MemoryBudget one peer's uploads may hold while they arrive
	// (a peer's first upload is always admitted); 0 means DefaultPeerShare.
	PeerShare float64
	// UploadIdleTimeout ends an upload whose client sends no message for this long; 0 means
	// DefaultUploadIdleTimeout.
	UploadIdleTimeout time.Duration
	// SendIdleTimeout ends an answer in pieces (CheckRescaleStream, CheckRescaleUploadStream,
	// /v1/check:stream) when sending one piece makes no progress for this long, because the
	// client reads nothing: the check it holds a slot and memory for is cancelled. It also
	// bounds each write of a /v1 HTTP response. 0 means DefaultSendIdleTimeout.
	SendIdleTimeout time.Duration
	// RequestTimeout applies to requests without a deadline; MaxTimeout caps any deadline.
	RequestTimeout, MaxTimeout time.Duration
	// CacheEntries is the size of the LRU cache of decoded layouts (by source cache key);
	// negative disables it.
	CacheEntries int
	// ResultCacheBytes bounds the cached CheckRescale answers (memo.go), which share CacheBytes
	// and the memory budget with the layouts; 0 means DefaultResultCacheShare of CacheBytes,
	// negative disables the result cache.
	ResultCacheBytes int64
	// RevalidateInterval is how long a URI's file version (size + mtime or ETag) is trusted
	// without asking the source again, when its layout or answer is cached: a changed file is
	// noticed at most this long after it changed. 0 means DefaultRevalidateInterval; negative
	// asks the source on every request.
	RevalidateInterval time.Duration

	// HTTP listener limits; zero values take the defaults above. HTTPBodyTimeout bounds reading
	// a whole JSON request body.
	HTTPReadHeaderTimeout, HTTPBodyTimeout, HTTPIdleTimeout time.Duration
	HTTPMaxHeaderBytes                                      int
	// UpstreamTimeout bounds waiting for an http(s) or object-store source to answer or to send
	// more bytes (0: source.DefaultUpstreamTimeout).
	UpstreamTimeout time.Duration

	// TLSCertFile and TLSKeyFile enable TLS on both listeners; TLSClientCAFile also requires
	// client certificates signed by that CA (mutual TLS).
	TLSCertFile, TLSKeyFile, TLSClientCAFile string

	// DrainDelay is how long Shutdown reports NOT_SERVING before it stops accepting RPCs, so
	// that load balancers polling health move traffic away first.
	DrainDelay time.Duration
	// ShutdownTimeout bounds the graceful stop; in-flight RPCs are then cancelled.
	ShutdownTimeout time.Duration

	// FlinkREST configures calls to Flink's REST API (Decide, and CheckRescale with a job):
	// timeout, TLS and a bearer token. The REST URL must be under an http(s) Allow entry.
	FlinkREST flinkrest.Options
	// FlinkAdmission is the policy of the Flink Kubernetes Operator admission
	// (flinkadmission.go): the REST URL template of a resource, the failure policy, the deadline.
	// Its REST URLs, like Decide's, must lie under an http(s) Allow entry.
	FlinkAdmission flinkadmission.Config

	// OnReserved, if set, is called with the bytes requests and cached layouts and answers hold
	// (admission's reservations) whenever they change, under admission's lock: it must be quick
	// and must not call the server. preflightd sets MemoryLimiter.Follow.
	OnReserved func(reserved int64)

	// Logger receives JSON request logs; nil discards them.
	Logger *slog.Logger
	// Registry receives the metrics; nil creates one (with Go and process collectors).
	Registry *prometheus.Registry
}

func (c *Config) setDefaults() {
	if c.Engine == nil {
		c.Engine = engine.New()
	}
	c.MaxUploadBytes = cmp.Or(c.MaxUploadBytes, DefaultMaxUploadBytes)
	c.MaxInlineBytes = cmp.Or(c.MaxInlineBytes, DefaultMaxInlineBytes)
	c.UploadMinRate = cmp.Or(c.UploadMinRate, DefaultUploadMinRate)
	c.UploadRateGrace = cmp.Or(c.UploadRateGrace, DefaultUploadRateGrace)
	if c.MaxConcurrent == 0 {
		c.MaxConcurrent = 2 * runtime.GOMAXPROCS(0)
	}
	c.QueueWait = cmp.Or(c.QueueWait, DefaultQueueWait)
	if c.MemoryBudget <= 0 {
		c.MemoryBudget = DefaultMemoryBudget()
	}
	c.CacheBytes = cmp.Or(c.CacheBytes, c.MemoryBudget/DefaultCacheShare)
	c.ResultCacheBytes = cmp.Or(c.ResultCacheBytes, c.CacheBytes/DefaultResultCacheShare)
	c.RevalidateInterval = cmp.Or(c.RevalidateInterval, DefaultRevalidateInterval)
	if c.PeerShare <= 0 || c.PeerShare > 1 {
		c.PeerShare = DefaultPeerShare
	}
	c.UploadIdleTimeout = positiveOr(c.UploadIdleTimeout, DefaultUploadIdleTimeout)
	c.SendIdleTimeout = positiveOr(c.SendIdleTimeout, DefaultSendIdleTimeout)
	c.HTTPReadHeaderTimeout = positiveOr(c.HTTPReadHeaderTimeout, DefaultHTTPReadHeaderTimeout)
	c.HTTPBodyTimeout = positiveOr(c.HTTPBodyTimeout, DefaultHTTPBodyTimeout)
	c.HTTPIdleTimeout = positiveOr(c.HTTPIdleTimeout, DefaultHTTPIdleTimeout)
	c.HTTPMaxHeaderBytes = positiveOr(c.HTTPMaxHeaderBytes, DefaultHTTPMaxHeaderBytes)
	c.RequestTimeout = cmp.Or(c.RequestTimeout, DefaultRequestTimeout)
	c.MaxTimeout = cmp.Or(c.MaxTimeout, DefaultMaxTimeout)
	if c.MaxTimeout < c.RequestTimeout {
		c.MaxTimeout = c.RequestTimeout
	}
	c.CacheEntries = cmp.Or(c.CacheEntries, DefaultCacheEntries)
	c.ShutdownTimeout = cmp.Or(c.ShutdownTimeout, DefaultShutdownTimeout)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// positiveOr is v, or def when v is zero or negative.
func positiveOr[T int | int64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// maxRecvMsgBytes is the gRPC receive limit: an inline file plus room for the plan, and at least
// gRPC's default so that 1 MiB upload chunks always fit.
func (c *Config) maxRecvMsgBytes() int {
	n := c.MaxInlineBytes + 1<<20
	if n < 4<<20 {
		n = 4 << 20
	}
	return int(n)
}
