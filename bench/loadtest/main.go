// Command loadtest runs Preflight's benchmarks side by side in one run and prints a Markdown
// table (bench/run.sh builds the binaries and the files and calls it; see bench/README.md):
//
//	(a) CheckRescale on a cached checkpoint vs grpc.health.v1.Health/Check (the echo baseline),
//	    both at the same concurrency against the same preflightd, measured by ghz and by the
//	    native generator in this process (throughput.go, gen.go);
//	(b) cold checks of a 1 MiB and a 168 MiB _metadata, uploaded with the CLI and read from S3
//	    (versitygw), each against a fresh preflightd: wall time and the daemon's peak RSS;
//	(c) in-process decode throughput (checkpoint.ReadLayout) vs `cat FILE > /dev/null`.
//
// Everything runs on 127.0.0.1; every loop has a count and every step a timeout.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/engine"
	"github.com/flinkpreflight/preflight/internal/testutil"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// Targets of the issue.
const (
	targetRPSRatio = 0.5
	targetP99      = 10 * time.Millisecond
	targetBigWall  = 3 * time.Second
	targetBigRSS   = 256 << 20
)

// S3 credentials of the benchmark's own versitygw (root account of a throwaway gateway).
const (
	s3Access = "preflight-bench"
	s3Secret = "preflight-bench-secret"
	s3Bucket = "ckpts"
)

type options struct {
	work, bin, versitygw string
	small, big, cached   string
	requests, conc       int
	lowConc, lowRequests int
	rpcOnly              bool
	rpcDaemonArgs        string
	gen, genCodec        string // (a)'s load generators: both, ghz or native; the native one's codec
	genConns, genWarmup  int
	genGOGC              int           // the native generator's GC percent during its runs
	genTimeout           time.Duration // per request, both generators
	rounds, decodeRuns   int
	soakN                int
	soakOnly             bool
	stepTimeout          time.Duration
}

func main() {
	var o options
	flag.StringVar(&o.work, "work", "", "work folder (examples/, 1mib/_metadata, big/_metadata; results go here)")
	flag.StringVar(&o.bin, "bin", "", "folder with preflightd, preflight and ghz")
	flag.StringVar(&o.versitygw, "versitygw", "", "versitygw binary; empty skips the S3 cases")
	flag.StringVar(&o.cached, "cached", "", "checkpoint for the cached CheckRescale case (default WORK/examples/compact-sink/_metadata)")
	flag.IntVar(&o.requests, "n", 20000, "requests per ghz run")
	flag.IntVar(&o.conc, "c", 50, "ghz concurrency")
	flag.IntVar(&o.lowConc, "low-c", 2, "concurrency of the extra latency point (0 skips it)")
	flag.IntVar(&o.lowRequests, "low-n", 5000, "requests of the extra latency point")
	flag.IntVar(&o.rounds, "rounds", 2, "alternating echo/check ghz rounds")
	flag.IntVar(&o.decodeRuns, "decode-runs", 3, "timed runs of each decode measurement (the best counts)")
	flag.IntVar(&o.soakN, "soak-n", 10000, "requests of the soak (d); 0 skips it")
	flag.BoolVar(&o.soakOnly, "soak-only", false, "run only the soak (d)")
	flag.BoolVar(&o.rpcOnly, "rpc-only", false, "run only the cached CheckRescale vs echo (a)")
	flag.StringVar(&o.rpcDaemonArgs, "rpc-daemon-args", "", "extra preflightd flags for (a), space-separated (e.g. \"--no-result-cache --revalidate-interval=-1s\" for the layout cache alone)")
	flag.StringVar(&o.gen, "gen", "both", "load generators of (a): both (ghz and the native one, interleaved per round), ghz or native")
	flag.IntVar(&o.genConns, "gen-conns", 1, "gRPC connections the native generator's callers share")
	flag.StringVar(&o.genCodec, "gen-codec", "raw", "native generator: raw (pre-encoded requests, answers compared byte for byte) or pb (the generated client, every answer decoded)")
	flag.IntVar(&o.genGOGC, "gen-gogc", 400, "native generator: this process's GC percent during its runs (its garbage collections pause its callers; the daemon keeps its own setting)")
	flag.IntVar(&o.genWarmup, "gen-warmup", 1000, "native generator: unmeasured requests before each measured run")
	flag.DurationVar(&o.genTimeout, "gen-timeout", 20*time.Second, "timeout of every single request (ghz --timeout and the native generator)")
	flag.DurationVar(&o.stepTimeout, "step-timeout", 3*time.Minute, "bound on every single step")
	flag.Parse()
	if o.work == "" || o.bin == "" {
		fmt.Fprintln(os.Stderr, "usage: loadtest -work DIR -bin DIR [-versitygw PATH]")
		os.Exit(2)
	}
	o.small = filepath.Join(o.work, "1mib", "_metadata")
	o.big = filepath.Join(o.work, "big", "_metadata")
	if o.cached == "" {
		o.cached = filepath.Join(o.work, "examples", "compact-sink", "_metadata")
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(1)
	}
}

// row is one line of the results table.
type row struct {
	bench, metric, value, target, met string
}

func run(o options) error {
	var rows []row
	logf("machine: %d CPUs (GOMAXPROCS %d), load average %s", runtime.NumCPU(), runtime.GOMAXPROCS(0), loadavg())
	defer func() { logf("load average at the end: %s", loadavg()) }()
	if o.soakOnly {
		return soakAndReport(o, rows)
	}

	// (a) cached CheckRescale vs health echo.
	a, err := benchThroughput(o)
	if err != nil {
		return fmt.Errorf("(a): %w", err)
	}
	rows = append(rows, a...)
	if o.rpcOnly {
		o.soakN = 0
		return soakAndReport(o, rows)
	}

	// (b) cold checks.
	var gw *gateway
	if o.versitygw != "" {
		if gw, err = startGateway(o); err != nil {
			return fmt.Errorf("versitygw: %w", err)
		}
		defer gw.stop()
	} else {
		logf("no versitygw: S3 cases skipped")
	}
	for _, c := range []struct {
		name, path string
		big        bool
	}{{"1 MiB", o.small, false}, {"168 MiB", o.big, true}} {
		r, err := benchCold(o, c.name, c.path, c.big, gw)
		if err != nil {
			return fmt.Errorf("(b) %s: %w", c.name, err)
		}
		rows = append(rows, r...)
	}

	// (c) decode throughput.
	for _, p := range []struct{ name, path string }{{"1 MiB", o.small}, {"168 MiB", o.big}} {
		r, err := benchDecode(o, p.name, p.path)
		if err != nil {
			return fmt.Errorf("(c) %s: %w", p.name, err)
		}
		rows = append(rows, r...)
	}

	return soakAndReport(o, rows)
}

// soakAndReport runs the soak (d) unless -soak-n=0, then prints and writes the table; a soak
// failure is reported after the table.
func soakAndReport(o options, rows []row) error {
	var soakErr error
	if o.soakN > 0 {
		var r []row
		r, soakErr = soak(o)
		rows = append(rows, r...)
	}
	var out strings.Builder
	fmt.Fprintf(&out, "\n| benchmark | metric | value | target | met |\n|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&out, "| %s | %s | %s | %s | %s |\n", r.bench, r.metric, r.value, r.target, r.met)
	}
	fmt.Print(out.String())
	if err := os.WriteFile(filepath.Join(o.work, "results.md"), []byte(out.String()), 0o644); err != nil {
		return err
	}
	if soakErr != nil {
		return fmt.Errorf("(d) soak: %w", soakErr)
	}
	return nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, time.Now().UTC().Format("15:04:05 ")+format+"\n", args...)
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

func yes(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

// --- preflightd ---------------------------------------------------------------------------

type daemon struct{ *testutil.Daemon }

// startDaemon starts o.bin's preflightd with only the gRPC listener and args (which may turn the
// HTTP and ops listeners on), env added to the environment.
func startDaemon(o options, env []string, args ...string) (*daemon, error) {
	d, err := testutil.StartDaemon(filepath.Join(o.bin, "preflightd"), env, append([]string{"--grpc-addr=127.0.0.1:0", "--http-addr=", "--log-level=warn"}, args...)...)
	if err != nil {
		return nil, err
	}
	return &daemon{d}, nil
}

// ops reads a sample from the /metrics of the daemon's ops listener.
func (d *daemon) ops(name string) float64 { return testutil.Scrape(d.OpsAddr, name) }

// status reads a field of /proc/PID/status in bytes.
func (d *daemon) status(field string) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(d.Cmd.Process.Pid) + "/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n << 10
		}
	}
	return -1
}

// --- (b) cold checks ----------------------------------------------------------------------

type gateway struct {
	cmd  *exec.Cmd
	addr string
	done chan struct{}
}

func startGateway(o options) (*gateway, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	root := filepath.Join(o.work, "s3") // the gateway's posix root, fresh each run
	if err := os.RemoveAll(root); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	g := &gateway{addr: addr, done: make(chan struct{})}
	g.cmd = exec.Command(o.versitygw, "--port", addr, "posix", root)
	g.cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY="+s3Access, "ROOT_SECRET_KEY="+s3Secret)
	logFile, err := os.Create(filepath.Join(o.work, "versitygw.log"))
	if err != nil {
		return nil, err
	}
	g.cmd.Stdout, g.cmd.Stderr = logFile, logFile
	if err := g.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { g.cmd.Wait(); logFile.Close(); close(g.done) }()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			g.stop()
			return nil, fmt.Errorf("versitygw did not listen on %s", addr)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.stepTimeout)
	defer cancel()
	c := g.client()
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(s3Bucket)}); err != nil {
		g.stop()
		return nil, err
	}
	for key, path := range map[string]string{"1mib/_metadata": o.small, "big/_metadata": o.big} {
		f, err := os.Open(path)
		if err != nil {
			g.stop()
			return nil, err
		}
		_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(s3Bucket), Key: aws.String(key), Body: f})
		f.Close()
		if err != nil {
			g.stop()
			return nil, fmt.Errorf("put %s: %w", key, err)
		}
	}
	logf("versitygw on %s holds s3://%s/{1mib,big}/_metadata", addr, s3Bucket)
	return g, nil
}

func (g *gateway) client() *s3.Client {
	return s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String("http://" + g.addr), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(s3Access, s3Secret, "")})
}

func (g *gateway) bucketURL() string {
	q := url.Values{}
	q.Set("endpoint", "http://"+g.addr)
	q.Set("use_path_style", "true")
	q.Set("disable_https", "true")
	q.Set("region", "us-east-1")
	return "s3://" + s3Bucket + "?" + q.Encode()
}

func (g *gateway) env() []string {
	return []string{"AWS_ACCESS_KEY_ID=" + s3Access, "AWS_SECRET_ACCESS_KEY=" + s3Secret, "AWS_REGION=us-east-1",
		"AWS_CONFIG_FILE=" + os.DevNull, "AWS_SHARED_CREDENTIALS_FILE=" + os.DevNull, "AWS_EC2_METADATA_DISABLED=true"}
}

func (g *gateway) stop() {
	g.cmd.Process.Kill()
	<-g.done
}

// benchCold checks one file through a fresh daemon per path: the CLI uploads the local file,
// then the CLI names the S3 object. The daemon's layout cache is off, and its VmHWM after the
// one check is the peak of that case alone.
func benchCold(o options, name, path string, big bool, gw *gateway) ([]row, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	type path_ struct {
		label, target string
		env           []string
		args          []string
	}
	paths := []path_{{"upload (CLI --server)", path, nil, nil}}
	if gw != nil {
		key := "1mib/_metadata"
		if big {
			key = "big/_metadata"
		}
		paths = append(paths, path_{"S3 (CLI --server s3://)", "s3://" + s3Bucket + "/" + key, gw.env(), []string{"--allow=" + gw.bucketURL()}})
	}
	var rows []row
	for _, p := range paths {
		d, err := startDaemon(o, p.env, append([]string{"--cache-entries=-1", "--max-upload-bytes=" + strconv.FormatInt(2*fi.Size()+1<<20, 10)}, p.args...)...)
		if err != nil {
			return nil, err
		}
		base := d.status("VmRSS")
		ctx, cancel := context.WithTimeout(context.Background(), o.stepTimeout)
		cmd := exec.CommandContext(ctx, filepath.Join(o.bin, "preflight"), "check", p.target, "--server", d.GRPCAddr, "--insecure", "--parallelism", "8", "-o", "json")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		start := time.Now()
		err = cmd.Run()
		wall := time.Since(start)
		cancel()
		peak := d.status("VmHWM")
		d.Stop()
		// Exit 1 is a DENY: a valid answer (the orphan-union file is denied).
		var ee *exec.ExitError
		if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
			return nil, fmt.Errorf("preflight check %s: %v\n%s\n%s", p.target, err, stderr.String(), d.Stderr)
		}
		var rep struct {
			Verdict    string `json:"verdict"`
			Checkpoint struct {
				SizeBytes string `json:"sizeBytes"`
			} `json:"checkpoint"`
		}
		if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
			return nil, fmt.Errorf("preflight check %s: output: %v", p.target, err)
		}
		if rep.Checkpoint.SizeBytes != strconv.FormatInt(fi.Size(), 10) {
			return nil, fmt.Errorf("preflight check %s: report says %s bytes, the file has %d", p.target, rep.Checkpoint.SizeBytes, fi.Size())
		}
		logf("(b) %s %s: %v, daemon RSS %d MiB before, peak %d MiB; %s", name, p.label, wall.Round(time.Millisecond), base>>20, peak>>20, rep.Verdict)
		r := row{
			bench:  fmt.Sprintf("(b) cold check %s, %s", name, p.label),
			metric: "wall / daemon peak RSS",
			value:  fmt.Sprintf("%.2f s (%.0f MB/s) / %d MiB (%s)", wall.Seconds(), float64(fi.Size())/1e6/wall.Seconds(), peak>>20, strings.TrimPrefix(rep.Verdict, "VERDICT_")),
		}
		if big {
			r.target = "≤ 3 s / ≤ 256 MiB"
			r.met = yes(wall <= targetBigWall && peak <= targetBigRSS)
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// --- (c) decode throughput ----------------------------------------------------------------

// benchDecode times `cat FILE > /dev/null` and checkpoint.ReadLayout over the open file (the
// file is in the page cache for both: cat runs first), and the engine's whole check. The best of
// decodeRuns counts for each.
func benchDecode(o options, name, path string) ([]row, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	size := float64(fi.Size())
	bestOf := func(f func() error) (time.Duration, error) {
		var ds []time.Duration
		for range o.decodeRuns {
			runtime.GC()
			start := time.Now()
			if err := f(); err != nil {
				return 0, err
			}
			ds = append(ds, time.Since(start))
		}
		return slices.Min(ds), nil
	}
	cat, err := bestOf(func() error {
		ctx, cancel := context.WithTimeout(context.Background(), o.stepTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, "cat", path)
		cmd.Stdout, _ = os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		defer cmd.Stdout.(*os.File).Close()
		return cmd.Run()
	})
	if err != nil {
		return nil, err
	}
	withFile := func(f func(io.Reader) error) func() error {
		return func() error {
			fh, err := os.Open(path)
			if err != nil {
				return err
			}
			defer fh.Close()
			return f(fh)
		}
	}
	decode, err := bestOf(withFile(func(r io.Reader) error { _, err := checkpoint.ReadLayout(r); return err }))
	if err != nil {
		return nil, err
	}
	eng := engine.New()
	plan := &pb.RescalePlan{DefaultParallelism: 8}
	full, err := bestOf(withFile(func(r io.Reader) error {
		_, err := eng.Check(context.Background(), engine.Request{Input: engine.Input{Reader: r, Source: path}, Plan: plan})
		return err
	}))
	if err != nil {
		return nil, err
	}
	mbs := func(d time.Duration) float64 { return size / 1e6 / d.Seconds() }
	logf("(c) %s: cat %v (%.0f MB/s), ReadLayout %v (%.0f MB/s), engine check %v (%.0f MB/s)", name, cat, mbs(cat), decode, mbs(decode), full, mbs(full))
	return []row{
		{fmt.Sprintf("(c) decode %s", name), "cat / ReadLayout / engine check", fmt.Sprintf("%.0f / %.0f / %.0f MB/s", mbs(cat), mbs(decode), mbs(full)), "", ""},
		{fmt.Sprintf("(c) decode %s", name), "ReadLayout ÷ cat, throughput", fmt.Sprintf("%.0f%% (%v vs %v)", 100*cat.Seconds()/decode.Seconds(), decode.Round(10*time.Microsecond), cat.Round(10*time.Microsecond)), "", ""},
	}, nil
}
