package server

import (
	"log/slog"
	"runtime"
	"time"

	"github.com/prometheus/client_golang/prometheus"

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
	// MaxConcurrent bounds the checks decoding or simulating at once; 0 means 2 × GOMAXPROCS.
	MaxConcurrent int
	// QueueWait is how long a check waits for a free slot before RESOURCE_EXHAUSTED; 0 fails at
	// once, which lets an autoscaler retry elsewhere instead of piling up behind big files.
	QueueWait time.Duration
	// RequestTimeout applies to requests without a deadline; MaxTimeout caps any deadline.
	RequestTimeout, MaxTimeout time.Duration
	// CacheEntries is the size of the LRU cache of decoded layouts (by source cache key);
	// negative disables it.
	CacheEntries int

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

	// Logger receives JSON request logs; nil discards them.
	Logger *slog.Logger
	// Registry receives the metrics; nil creates one (with Go and process collectors).
	Registry *prometheus.Registry
}

func (c *Config) setDefaults() {
	if c.Engine == nil {
		c.Engine = engine.New()
	}
	if c.MaxUploadBytes == 0 {
		c.MaxUploadBytes = DefaultMaxUploadBytes
	}
	if c.MaxInlineBytes == 0 {
		c.MaxInlineBytes = DefaultMaxInlineBytes
	}
	if c.MaxConcurrent == 0 {
		c.MaxConcurrent = 2 * runtime.GOMAXPROCS(0)
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	if c.MaxTimeout == 0 {
		c.MaxTimeout = DefaultMaxTimeout
	}
	if c.MaxTimeout < c.RequestTimeout {
		c.MaxTimeout = c.RequestTimeout
	}
	if c.CacheEntries == 0 {
		c.CacheEntries = DefaultCacheEntries
	}
	if c.ShutdownTimeout == 0 {
		c.ShutdownTimeout = DefaultShutdownTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
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
