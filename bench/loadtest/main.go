// Command loadtest runs Preflight's benchmarks side by side in one run and prints a Markdown
// table (bench/run.sh builds the binaries and the files and calls it; see bench/README.md):
//
//	(a) CheckRescale on a cached checkpoint vs grpc.health.v1.Health/Check (the echo baseline),
//	    both with ghz at the same concurrency against the same preflightd;
//	(b) cold checks of a 1 MiB and a 168 MiB _metadata, uploaded with the CLI and read from S3
//	    (versitygw), each against a fresh preflightd: wall time and the daemon's peak RSS;
//	(c) in-process decode throughput (checkpoint.ReadLayout) vs `cat FILE > /dev/null`.
//
// Everything runs on 127.0.0.1; every loop has a count and every step a timeout.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/engine"
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

type daemon struct {
	cmd    *exec.Cmd
	addr   string
	http   string // when started with --http-addr
	opsURL string // when started with --ops-addr
	stderr *bytes.Buffer
	done   chan struct{}
}

func startDaemon(o options, env []string, args ...string) (*daemon, error) {
	d := &daemon{stderr: &bytes.Buffer{}, done: make(chan struct{})}
	d.cmd = exec.Command(filepath.Join(o.bin, "preflightd"), append([]string{"--grpc-addr=127.0.0.1:0", "--http-addr=", "--log-level=warn"}, args...)...)
	d.cmd.Env = append(os.Environ(), env...)
	d.cmd.Stderr = d.stderr
	stdout, err := d.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := d.cmd.Start(); err != nil {
		return nil, err
	}
	wantHTTP := slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--http-addr=") && a != "--http-addr=" })
	wantOps := slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--ops-addr=") && a != "--ops-addr=" })
	addr := make(chan [3]string, 1)
	go func() {
		var a [3]string
		sent := false
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "grpc-addr="); ok {
				a[0] = v
			}
			if v, ok := strings.CutPrefix(sc.Text(), "http-addr="); ok {
				a[1] = v
			}
			if v, ok := strings.CutPrefix(sc.Text(), "ops-addr="); ok {
				a[2] = v
			}
			if !sent && a[0] != "" && (!wantHTTP || a[1] != "") && (!wantOps || a[2] != "") {
				addr <- a
				sent = true
			}
		}
	}()
	go func() { d.cmd.Wait(); close(d.done) }()
	select {
	case a := <-addr:
		d.addr, d.http, d.opsURL = a[0], a[1], a[2]
		return d, nil
	case <-d.done:
		return nil, fmt.Errorf("preflightd exited: %s", d.stderr)
	case <-time.After(20 * time.Second):
		d.stop()
		return nil, errors.New("preflightd printed no address in 20s")
	}
}

func (d *daemon) stop() {
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(10 * time.Second):
		d.cmd.Process.Kill()
		<-d.done
	}
}

// metric reads a sample from the daemon's /metrics (-1 when absent).
func (d *daemon) metric(name string) float64 { return scrape(d.http, name) }

// ops reads a sample from the /metrics of the daemon's ops listener.
func (d *daemon) ops(name string) float64 { return scrape(d.opsURL, name) }

func scrape(addr, name string) float64 {
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return -1
}

// status reads a field of /proc/PID/status in bytes.
func (d *daemon) status(field string) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(d.cmd.Process.Pid) + "/status")
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

// --- (a) throughput -----------------------------------------------------------------------

// ghzReport is the part of ghz's JSON output the table needs.
type ghzReport struct {
	Count        int64   `json:"count"`
	Total        int64   `json:"total"` // ns
	Rps          float64 `json:"rps"`
	Average      int64   `json:"average"`
	Fastest      int64   `json:"fastest"`
	Slowest      int64   `json:"slowest"`
	LatencyDistr []struct {
		Percentage int   `json:"percentage"`
		Latency    int64 `json:"latency"`
	} `json:"latencyDistribution"`
	StatusCodeDistribution map[string]int64 `json:"statusCodeDistribution"`
	ErrorDistribution      map[string]int64 `json:"errorDistribution"`

	// CPU time per request of ghz itself and of the daemon during the run (not ghz output):
	// on a shared machine they show where the time went better than RPS does.
	ghzCPU, daemonCPU time.Duration
}

// cpuPerRequest formats the two CPU figures.
func (g *ghzReport) cpuPerRequest() string {
	per := func(d time.Duration) string {
		if g.Count == 0 || d < 0 {
			return "?"
		}
		return fmt.Sprintf("%.0f µs", float64(d)/float64(g.Count)/1e3)
	}
	return per(g.daemonCPU) + " daemon / " + per(g.ghzCPU) + " ghz"
}

func (g *ghzReport) pct(p int) time.Duration {
	for _, l := range g.LatencyDistr {
		if l.Percentage == p {
			return time.Duration(l.Latency)
		}
	}
	return -1
}

func (g *ghzReport) errors() int64 {
	var n int64
	for code, c := range g.StatusCodeDistribution {
		if code != "OK" {
			n += c
		}
	}
	return n
}

// cpu is the daemon's user + system CPU time so far (/proc/PID/stat; -1 if unreadable).
func (d *daemon) cpu() time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(d.cmd.Process.Pid) + "/stat")
	if err != nil {
		return -1
	}
	// Fields after the command name in parentheses: state is field 3, utime 14, stime 15.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return -1
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	const clockTicks = 100 // USER_HZ on Linux
	return time.Duration(u+st) * time.Second / clockTicks
}

func runGhz(o options, d *daemon, call, data, out string) (*ghzReport, error) {
	return runGhzAt(o, o.conc, o.requests, d, call, data, out)
}

func runGhzAt(o options, conc, requests int, d *daemon, call, data, out string) (*ghzReport, error) {
	addr := d.addr
	cpu0 := d.cpu()
	// The step timeout bounds ghz from outside: ghz's own -x (max duration) makes it run for
	// the whole duration whatever -n says (ghz v0.121.0).
	ctx, cancel := context.WithTimeout(context.Background(), o.stepTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(o.bin, "ghz"), "--insecure", "--call", call, "-d", data,
		"-c", strconv.Itoa(conc), "-n", strconv.Itoa(requests), "--timeout", "20s",
		"-O", "json", "-o", out, addr)
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("ghz %s: %v\n%s", call, err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return nil, err
	}
	var r ghzReport
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("ghz output %s: %w", out, err)
	}
	r.ghzCPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if cpu1 := d.cpu(); cpu0 >= 0 && cpu1 >= 0 {
		r.daemonCPU = cpu1 - cpu0
	} else {
		r.daemonCPU = -1
	}
	return &r, nil
}

func benchThroughput(o options) ([]row, error) {
	// The example checkpoints are allowlisted so that the URI case is served from the layout
	// cache. The daemon's defaults apply: 2 × GOMAXPROCS slots and a 1 s admission queue, in
	// which 50 concurrent callers wait for a slot instead of being refused.
	args := append([]string{"--allow=" + filepath.Dir(filepath.Dir(o.cached)), "--http-addr=127.0.0.1:0"}, strings.Fields(o.rpcDaemonArgs)...)
	if o.rpcDaemonArgs != "" {
		logf("(a) preflightd %s", o.rpcDaemonArgs)
	}
	d, err := startDaemon(o, nil, args...)
	if err != nil {
		return nil, err
	}
	defer d.stop()
	// Two plans for the same cached file: compact-operator=8 is DENY (with the nearest-safe
	// search), =4 is ALLOW. Each round runs the echo and then both checks, so the ratios are
	// measured side by side.
	type plan struct{ name, file, data string }
	var plans []plan
	for _, p := range []struct {
		name string
		par  int32
	}{{"DENY (compact-operator=8)", 8}, {"ALLOW (compact-operator=4)", 4}} {
		data, err := json.Marshal(map[string]any{"checkpoint": map[string]any{"uri": o.cached}, "plan": map[string]any{"parallelism": map[string]int32{"compact-operator": p.par}}})
		if err != nil {
			return nil, err
		}
		plans = append(plans, plan{p.name, fmt.Sprintf("check%d", p.par), string(data)})
	}
	const checkCall = "preflight.v1.PreflightService/CheckRescale"
	type round struct {
		echo   *ghzReport
		checks []*ghzReport // per plan
	}
	var rounds []round
	for i := range o.rounds {
		logf("(a) round %d/%d: ghz -c %d -n %d Health/Check, then CheckRescale DENY and ALLOW (cached %s)", i+1, o.rounds, o.conc, o.requests, o.cached)
		echo, err := runGhz(o, d, "grpc.health.v1.Health/Check", "{}", filepath.Join(o.work, fmt.Sprintf("ghz-echo-%d.json", i)))
		if err != nil {
			return nil, err
		}
		logf("    echo  %.0f rps p50 %v p99 %v errors %d, CPU per request %s", echo.Rps, echo.pct(50), echo.pct(99), echo.errors(), echo.cpuPerRequest())
		r := round{echo: echo}
		for _, p := range plans {
			check, err := runGhz(o, d, checkCall, p.data, filepath.Join(o.work, fmt.Sprintf("ghz-%s-%d.json", p.file, i)))
			if err != nil {
				return nil, err
			}
			logf("    %s %.0f rps p50 %v p99 %v errors %d %v, CPU per request %s", p.name, check.Rps, check.pct(50), check.pct(99), check.errors(), check.ErrorDistribution, check.cpuPerRequest())
			r.checks = append(r.checks, check)
		}
		rounds = append(rounds, r)
	}
	// The checks must have been served from the caches: the file decoded once, and every answer
	// after the first ones of each plan (up to -c callers ask at once) from the result cache
	// when the daemon has it, else from the layout cache.
	// A request that joins the first decode in flight counts as "shared", not as a hit.
	hits := d.metric(`preflight_layout_cache_requests_total{result="hit"}`) + max(0, d.metric(`preflight_layout_cache_requests_total{result="shared"}`))
	misses := d.metric(`preflight_layout_cache_requests_total{result="miss"}`)
	// Absent (-1) when the daemon runs without a result cache.
	rhits, rmisses := max(0, d.metric(`preflight_result_cache_requests_total{result="hit"}`)), max(0, d.metric(`preflight_result_cache_requests_total{result="miss"}`))
	logf("(a) layout cache: %.0f hits (with shared), %.0f misses; result cache: %.0f hits, %.0f misses", hits, misses, rhits, rmisses)
	total := float64(o.rounds * o.requests * len(plans))
	switch {
	case misses > 1:
		return nil, fmt.Errorf("the cached file was decoded %.0f times", misses)
	case rhits+rmisses > 0 && rhits < total-float64(len(plans)*o.conc):
		return nil, fmt.Errorf("CheckRescale was not answered from the result cache: %.0f hits, %.0f misses of %.0f", rhits, rmisses, total)
	case rhits+rmisses == 0 && hits < total-1:
		return nil, fmt.Errorf("CheckRescale was not served from the layout cache: %.0f hits, %.0f misses", hits, misses)
	}
	// The best round of each counts (the machine is shared: the best is the least disturbed).
	best := func(get func(round) *ghzReport) *ghzReport {
		b := get(rounds[0])
		for _, r := range rounds[1:] {
			if get(r).Rps > b.Rps {
				b = get(r)
			}
		}
		return b
	}
	ms := func(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/1e6) }
	echo := best(func(r round) *ghzReport { return r.echo })
	c := strconv.Itoa(o.conc)
	rows := []row{{"(a) Health/Check (echo), c=" + c, "RPS / p50 / p99; CPU per request", fmt.Sprintf("%.0f / %s / %s (%d errors); %s", echo.Rps, ms(echo.pct(50)), ms(echo.pct(99)), echo.errors(), echo.cpuPerRequest()), "baseline", ""}}
	var ratioRows []row
	for i, p := range plans {
		check := best(func(r round) *ghzReport { return r.checks[i] })
		ratio := check.Rps / echo.Rps
		var ratios []string
		for _, r := range rounds {
			ratios = append(ratios, fmt.Sprintf("%.0f%%", 100*r.checks[i].Rps/r.echo.Rps))
		}
		rows = append(rows, row{"(a) CheckRescale cached " + p.name + ", c=" + c, "RPS / p50 / p99; CPU per request", fmt.Sprintf("%.0f / %s / %s (%d errors); %s", check.Rps, ms(check.pct(50)), ms(check.pct(99)), check.errors(), check.cpuPerRequest()), "p99 ≤ 10 ms", yes(check.pct(99) <= targetP99 && check.errors() == 0)})
		ratioRows = append(ratioRows, row{"(a) CheckRescale " + strings.Fields(p.name)[0] + " ÷ echo", "RPS ratio, best ÷ best (per round)", fmt.Sprintf("%.0f%% (%s)", 100*ratio, strings.Join(ratios, ", ")), "≥ 50%", yes(ratio >= targetRPSRatio)})
	}
	rows = append(rows, ratioRows...)
	if o.lowConc > 0 {
		// Latency without queueing: at c=50 a closed loop's mean latency is 50 ÷ RPS (Little's
		// law) whatever the server does, so the same calls at low concurrency show service time.
		lo := o
		calls := []struct{ name, file, call, data string }{{"Health/Check (echo)", "echo", "grpc.health.v1.Health/Check", "{}"}}
		for _, p := range plans {
			calls = append(calls, struct{ name, file, call, data string }{"CheckRescale cached " + p.name, p.file, checkCall, p.data})
		}
		for _, c := range calls {
			r, err := runGhzAt(lo, o.lowConc, o.lowRequests, d, c.call, c.data, filepath.Join(o.work, "ghz-low-"+c.file+".json"))
			if err != nil {
				return nil, err
			}
			logf("(a) c=%d %s: %.0f rps p50 %v p99 %v errors %d", o.lowConc, c.name, r.Rps, r.pct(50), r.pct(99), r.errors())
			rows = append(rows, row{fmt.Sprintf("(a) %s, c=%d", c.name, o.lowConc), "RPS / p50 / p99; CPU per request", fmt.Sprintf("%.0f / %s / %s (%d errors); %s", r.Rps, ms(r.pct(50)), ms(r.pct(99)), r.errors(), r.cpuPerRequest()), "", ""})
		}
	}
	return rows, nil
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
		cmd := exec.CommandContext(ctx, filepath.Join(o.bin, "preflight"), "check", p.target, "--server", d.addr, "--insecure", "--parallelism", "8", "-o", "json")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		start := time.Now()
		err = cmd.Run()
		wall := time.Since(start)
		cancel()
		peak := d.status("VmHWM")
		d.stop()
		// Exit 1 is a DENY: a valid answer (the orphan-union file is denied).
		var ee *exec.ExitError
		if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
			return nil, fmt.Errorf("preflight check %s: %v\n%s\n%s", p.target, err, stderr.String(), d.stderr)
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
		_, err := eng.Check(context.Background(), engine.Input{Reader: r, Source: path}, plan, nil)
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
