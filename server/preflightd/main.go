// Command preflightd serves Flink Preflight over gRPC and HTTP/JSON: autoscalers and platforms
// ask it whether a Flink job can restore from a checkpoint at a new parallelism.
//
// On startup it prints the bound addresses on stdout, one per line ("grpc-addr=HOST:PORT",
// "http-addr=HOST:PORT"), so that callers can pass port 0; logs go to stderr as JSON, one line
// per RPC with its request ID, code, duration, source and verdict. SIGTERM or SIGINT drains:
// health turns NOT_SERVING (gRPC health and /healthz) for --drain-delay, in-flight checks finish
// (up to --shutdown-timeout), and the process exits 0.
//
// gRPC (--grpc-addr): preflight.v1.PreflightService (CheckRescale, CheckRescaleUpload,
// InspectCheckpoint, Decide), grpc.health.v1.Health, and server reflection (grpcurl works without
// .proto files).
//
// HTTP (--http-addr): POST /v1/check, POST /v1/inspect and POST /v1/decide (the JSON mapping of
// the gRPC API), GET /openapi.json, GET /metrics (Prometheus), GET /healthz, GET /readyz. Headers must arrive
// within 10 s, a JSON body within 30 s; idle keep-alive connections close after 60 s; a wrong
// method gets 405 with Allow; every response carries X-Request-Id.
//
// Operations (--ops-addr, plain HTTP even when the API listeners use mutual TLS): GET /healthz
// (liveness), GET /readyz (503 while draining), GET /metrics.
//
// Admission: every request reserves memory from --memory-budget (2 MiB + 4 × its _metadata size;
// a check of a cached layout 2 MiB + 2 × the layout's measured size) and a check also one of
// --max-concurrent slots for its simulation; uploads take the slot only once the whole file has
// arrived. What does not fit waits up to --queue-wait, least-loaded peer first, then gets
// RESOURCE_EXHAUSTED naming the budget or the slots. An upload that sends nothing for
// --upload-idle-timeout is ended (DEADLINE_EXCEEDED); one whose bytes differ from its header's
// size_bytes gets INVALID_ARGUMENT. An answer in pieces whose client reads nothing for
// --send-idle-timeout is ended (DEADLINE_EXCEEDED) and its check cancelled. The default budget
// is three quarters of the container's memory limit (cgroup v2 memory.max or v1
// memory.limit_in_bytes), else half of physical memory. Unless GOMEMLIMIT is set, Go's soft
// memory limit follows what is reserved: 64 MiB for the daemon itself plus the requests' and
// cached layouts' and answers' reservations, less the binary's resident pages (at most the
// budget + 64 MiB, and 90% of the container limit); unless GOGC is set, the collector runs at
// GOGC=400 beneath it.
//
// Sources: CheckRescale and InspectCheckpoint read only URIs under an --allow prefix: local
// folders (symlinks resolved and re-checked; ".." refused), file://, s3://, gs://, azblob://
// (gocloud.dev URLs; an entry's query options such as endpoint and region apply to every request
// under it, and a request may not choose its own), and http(s):// with --enable-http-sources.
// Object-store credentials come from the environment as usual (AWS_*, GOOGLE_APPLICATION_CREDENTIALS,
// AZURE_STORAGE_*).
//
// Error codes: INVALID_ARGUMENT (malformed _metadata, with a preflight.v1.MetadataFormatError
// detail naming the byte offset and field; invalid plan, with a BadRequest detail), NOT_FOUND,
// PERMISSION_DENIED (outside the allowlist), RESOURCE_EXHAUSTED (over --max-upload-bytes or
// --max-inline-bytes, or all --max-concurrent slots busy, with RetryInfo), UNAVAILABLE (object
// store unreachable, with RetryInfo), DEADLINE_EXCEEDED and CANCELLED.
//
// Metrics: preflight_rpc_requests_total{method,code}, preflight_rpc_duration_seconds{method},
// preflight_checks_in_flight, preflight_verdicts_total{verdict},
// preflight_metadata_decoded_bytes_total, preflight_metadata_decode_seconds,
// preflight_layout_cache_requests_total{result=hit|shared|miss}, plus Go and process metrics.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/flinkpreflight/preflight/internal/admission"
	"github.com/flinkpreflight/preflight/internal/buildinfo"
	"github.com/flinkpreflight/preflight/internal/bytesize"
	"github.com/flinkpreflight/preflight/internal/flagconfig"
	"github.com/flinkpreflight/preflight/internal/procmem"
	"github.com/flinkpreflight/preflight/server"
)

// stringList is a repeatable flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }
func (s *stringList) Repeatable()        {} // PREFLIGHT_ALLOW takes several, separated by spaces

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "preflightd:", err)
		os.Exit(1)
	}
}

// options are preflightd's flags: the server's configuration and the daemon's own.
type options struct {
	cfg                         server.Config
	allow                       stringList
	grpcAddr, httpAddr, opsAddr *string
	logLevel                    *string
	version, noResultCache      *bool
	admissionPolicy             *string
}

// newFlagSet declares every flag of preflightd into a new flag set.
func newFlagSet() (*flag.FlagSet, *options) {
	fs := flag.NewFlagSet("preflightd", flag.ContinueOnError)
	o := &options{}
	cfg := &o.cfg
	o.grpcAddr = fs.String("grpc-addr", "127.0.0.1:8443", "gRPC listen address (port 0 picks a free port)")
	o.httpAddr = fs.String("http-addr", "127.0.0.1:8080", "HTTP listen address for /v1 JSON, /metrics, /openapi.json, /healthz; empty disables")
	o.opsAddr = fs.String("ops-addr", "", "plain-HTTP listen address for /healthz, /readyz and /metrics (probes and scrapes without client certificates); empty disables")
	o.logLevel = fs.String("log-level", "info", "debug, info, warn or error")
	o.version = fs.Bool("version", false, "print the version, VCS revision and Go version, and exit")
	_ = fs.String("config", "", "configuration file: one flag per line as \"name: value\" (lists for --allow); see README")
	fs.Var(&o.allow, "allow", "URI prefix the server may read (repeatable): a local folder, file://, s3://bucket/prefix?options, gs://, azblob://, http(s)://")
	fs.BoolVar(&cfg.EnableHTTPSources, "enable-http-sources", false, "allow http(s):// checkpoint URIs (still subject to --allow)")
	cfg.MaxUploadBytes, cfg.MaxInlineBytes = server.DefaultMaxUploadBytes, server.DefaultMaxInlineBytes
	fs.Var(bytesize.Value{P: &cfg.MaxUploadBytes}, "max-upload-bytes", "largest _metadata accepted, uploaded or read from a URI (a size: 512MiB, 1GiB, bytes)")
	fs.Var(bytesize.Value{P: &cfg.MaxInlineBytes}, "max-inline-bytes", "largest _metadata accepted inline in CheckRescale (also sets the gRPC receive limit)")
	fs.IntVar(&cfg.MaxConcurrent, "max-concurrent", 0, "checks simulating at once (0: 2 x GOMAXPROCS)")
	fs.DurationVar(&cfg.QueueWait, "queue-wait", server.DefaultQueueWait, "how long a request waits for a slot or memory before RESOURCE_EXHAUSTED (negative: no wait)")
	fs.Var(bytesize.Value{P: &cfg.MemoryBudget}, "memory-budget", "memory requests and cached layouts may hold, e.g. 2GiB (0: 3/4 of the container's memory limit, else 1/2 of physical memory)")
	fs.Var(bytesize.Value{P: &cfg.CacheBytes}, "cache-bytes", "bytes of decoded layouts kept in the cache (0: a quarter of the memory budget)")
	fs.Float64Var(&cfg.PeerShare, "peer-share", server.DefaultPeerShare, "part of the memory budget one peer's arriving uploads may hold")
	fs.DurationVar(&cfg.UploadIdleTimeout, "upload-idle-timeout", server.DefaultUploadIdleTimeout, "end an upload that sends no message for this long")
	fs.DurationVar(&cfg.SendIdleTimeout, "send-idle-timeout", server.DefaultSendIdleTimeout, "end an answer in pieces (CheckRescaleStream, /v1/check:stream) when one piece (at most 1 MiB; an HTTP write: 64 KiB) is not taken by the client within this long")
	fs.DurationVar(&cfg.UpstreamTimeout, "upstream-timeout", 30*time.Second, "how long an http(s) or object-store source may take to answer or to send more bytes")
	fs.DurationVar(&cfg.RequestTimeout, "request-timeout", server.DefaultRequestTimeout, "deadline of requests that set none")
	fs.DurationVar(&cfg.MaxTimeout, "max-request-timeout", server.DefaultMaxTimeout, "cap on any request deadline")
	fs.StringVar(&cfg.TLSCertFile, "tls-cert", "", "server certificate (PEM); enables TLS on both listeners")
	fs.StringVar(&cfg.TLSKeyFile, "tls-key", "", "server private key (PEM)")
	fs.StringVar(&cfg.TLSClientCAFile, "tls-client-ca", "", "CA (PEM) that client certificates must chain to; enables mutual TLS")
	fs.IntVar(&cfg.CacheEntries, "cache-entries", server.DefaultCacheEntries, "decoded layouts kept in the LRU cache (negative disables)")
	// Result cache and source revalidation (issue #16, server/memo.go).
	fs.Var(bytesize.Value{P: &cfg.ResultCacheBytes}, "result-cache-bytes", "bytes of finished CheckRescale answers kept, within --cache-bytes (0: a quarter of it)")
	o.noResultCache = fs.Bool("no-result-cache", false, "cache no finished answers: every request runs the check")
	fs.DurationVar(&cfg.RevalidateInterval, "revalidate-interval", server.DefaultRevalidateInterval, "how long a checkpoint's file version (size + mtime or ETag) is trusted before its source is asked again: a changed file is seen at most this late (negative, e.g. -1s: every request)")
	fs.DurationVar(&cfg.DrainDelay, "drain-delay", 0, "how long to report NOT_SERVING before refusing new RPCs on SIGTERM")
	fs.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", server.DefaultShutdownTimeout, "how long in-flight RPCs may run after SIGTERM")
	// Autoscaler pre-flight (issue #11): calls to Flink's REST API. The REST URL must be under an
	// http(s) --allow prefix.
	fs.DurationVar(&cfg.FlinkREST.Timeout, "flink-rest-timeout", 10*time.Second, "timeout of each call to a Flink REST API (Decide, CheckRescale with a job)")
	fs.StringVar(&cfg.FlinkREST.CAFile, "flink-rest-ca", "", "CA (PEM) to verify https Flink REST endpoints (default: system roots)")
	fs.StringVar(&cfg.FlinkREST.TokenFile, "flink-rest-token-file", "", "file holding a bearer token for Flink's REST API (re-read at every call)")
	fs.StringVar(&cfg.FlinkREST.TokenEnv, "flink-rest-token-env", "", "environment variable holding a bearer token for Flink's REST API")
	o.admissionPolicy = admissionFlags(fs, &cfg.FlinkAdmission)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: preflightd [flags]\n\nEvery flag can also be set as an environment variable PREFLIGHT_<FLAG> (e.g. PREFLIGHT_MAX_UPLOAD_BYTES=1GiB;\nPREFLIGHT_ALLOW takes several prefixes separated by spaces) or in the --config file.\nPrecedence: flag > environment > config file > default. Sizes take units (512MiB), durations Go syntax (30s, 2m).\n\n")
		// The flag package prints -name; the README, the config file's errors and every other
		// help here say --name (both work), so the usage does too.
		out := fs.Output()
		var b strings.Builder
		fs.SetOutput(&b)
		fs.PrintDefaults()
		fs.SetOutput(out)
		fmt.Fprint(out, strings.ReplaceAll("\n"+b.String(), "\n  -", "\n  --")[1:])
	}
	return fs, o
}

func run(args []string) error {
	fs, o := newFlagSet()
	cfg := &o.cfg
	configFile, err := flagconfig.Parse(fs, args, "PREFLIGHT", "config", os.LookupEnv)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	bi := buildinfo.Get()
	if *o.version {
		fmt.Println(bi.Line("preflightd"))
		return nil
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*o.logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	cfg.Logger = slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level, ReplaceAttr: readableDurations}))
	cfg.Logger.Info("preflightd starting", slog.String("version", bi.Version), slog.String("revision", bi.Revision),
		slog.Bool("modified", bi.Modified), slog.String("go", bi.GoVersion), slog.String("config", configFile))
	cfg.Allow = o.allow
	if err := admissionPolicyFlags(&cfg.FlinkAdmission, *o.admissionPolicy); err != nil {
		return err
	}
	if *o.noResultCache {
		cfg.ResultCacheBytes = -1
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		setMemoryLimit(cfg)
	}
	srv, err := server.New(*cfg)
	if err != nil {
		return err
	}
	ls, err := listen(o)
	if err != nil {
		return err
	}
	cfg.Logger.Info("serving", slog.String("grpc", ls.grpc.Addr().String()), slog.Any("allow", []string(o.allow)), slog.Int64("memory_budget", srv.Config().MemoryBudget))
	return serve(srv, ls, cfg.Logger)
}

// setMemoryLimit has the Go runtime's soft memory limit follow the memory the daemon has
// reserved (server.MemoryLimiter, at most the budget + its baseline), and sets GOGC unless the
// environment sets it.
func setMemoryLimit(cfg *server.Config) {
	// The GC works harder near the limit instead of letting the heap grow past what requests
	// and caches reserved.
	lim := server.NewMemoryLimiter(cfg.MemoryBudget, procmem.FileBacked, debug.SetMemoryLimit)
	cfg.OnReserved = lim.Follow
	gogc := 100
	if os.Getenv("GOGC") == "" {
		// With the soft limit bounding the heap, collecting at 5× what is live instead of 2×
		// costs no memory past the limit and fewer collections per request (measured in
		// bench/README.md, "(a) with a native load generator").
		gogc = server.DaemonGCPercent
		debug.SetGCPercent(gogc)
	}
	limit, from := server.ContainerMemoryLimit()
	cfg.Logger.Info("memory limit", slog.String("from", from), slog.Int64("limit_bytes", limit),
		slog.Int64("soft_limit_bytes", server.SoftMemoryLimit(cfg.MemoryBudget)), slog.Int64("idle_soft_limit_bytes", lim.Limit(0)),
		slog.Int("gogc", gogc))
}

// listeners are the daemon's open sockets; http and ops are nil when disabled.
type listeners struct {
	grpc, http, ops net.Listener
}

// listen opens the listeners and prints their addresses on stdout (for scripts that pass port 0).
func listen(o *options) (listeners, error) {
	var ls listeners
	var err error
	if ls.grpc, err = net.Listen("tcp", *o.grpcAddr); err != nil {
		return ls, err
	}
	if *o.httpAddr != "" {
		if ls.http, err = net.Listen("tcp", *o.httpAddr); err != nil {
			return ls, err
		}
	}
	if *o.opsAddr != "" {
		if ls.ops, err = net.Listen("tcp", *o.opsAddr); err != nil {
			return ls, err
		}
	}
	fmt.Printf("grpc-addr=%s\n", ls.grpc.Addr())
	if ls.http != nil {
		fmt.Printf("http-addr=%s\n", ls.http.Addr())
	}
	if ls.ops != nil {
		fmt.Printf("ops-addr=%s\n", ls.ops.Addr())
	}
	return ls, nil
}

// serve runs the servers until one fails or a SIGTERM/SIGINT asks for a graceful shutdown.
func serve(srv *server.Server, ls listeners, logger *slog.Logger) error {
	errc := make(chan error, 3)
	if ls.ops != nil {
		go func() { errc <- srv.ServeOpsListener(ls.ops) }()
	}
	go func() { errc <- srv.ServeGRPC(ls.grpc) }()
	if ls.http != nil {
		go func() { errc <- srv.ServeHTTPListener(ls.http) }()
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	select {
	case s := <-sig:
		logger.Info("signal", slog.String("signal", s.String()))
		signal.Stop(sig) // a second signal kills the process the default way
		if err := srv.Shutdown(context.Background()); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return nil
	case err := <-errc:
		srv.Close()
		return err
	}
}

// readableDurations logs durations as Go duration strings ("1.5s") instead of slog's JSON default
// of integer nanoseconds.
func readableDurations(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		return slog.String(a.Key, a.Value.Duration().String())
	}
	return a
}

// admissionFlags declares the --admission-* flags; the failure policy is checked by
// admissionPolicyFlags.
func admissionFlags(fs *flag.FlagSet, c *admission.Config) *string {
	// Flink Kubernetes Operator admission (issue #27, server/flinkadmission.go): the REST URL of a
	// FlinkDeployment or FlinkSessionJob; it too must be under an http(s) --allow prefix.
	fs.StringVar(&c.RESTTemplate, "admission-flink-rest", admission.DefaultRESTTemplate, "Flink REST URL of a resource in "+server.FlinkAdmissionPath+": {name} (FlinkDeployment, or a FlinkSessionJob's deploymentName), {namespace}, {port} (rest.port, default 8081)")
	policy := fs.String("admission-failure-policy", "open", "answer of "+server.FlinkAdmissionPath+" when the check cannot run: open (allow with a warning) or closed (deny with the reason)")
	fs.DurationVar(&c.Timeout, "admission-timeout", admission.DefaultTimeout, "deadline of a whole admission answer (keep it below the webhook's timeoutSeconds)")
	return policy
}

// admissionPolicyFlags checks the --admission-* flags.
func admissionPolicyFlags(c *admission.Config, policy string) error {
	switch policy {
	case "open":
	case "closed":
		c.FailClosed = true
	default:
		return fmt.Errorf("--admission-failure-policy %q: want open or closed", policy)
	}
	if c.Timeout <= 0 {
		return fmt.Errorf("--admission-timeout %v: want a positive duration", c.Timeout)
	}
	t := strings.ToLower(c.RESTTemplate)
	if !strings.HasPrefix(t, "http://") && !strings.HasPrefix(t, "https://") {
		return fmt.Errorf("--admission-flink-rest %q: want an http(s) URL template", c.RESTTemplate)
	}
	return nil
}
