package main

// (a) CheckRescale on a cached checkpoint vs grpc.health.v1.Health/Check (the echo baseline),
// against one preflightd, measured by two load generators in the same run: ghz (an external
// process) and the native generator (gen.go, in this process). -gen chooses: both (default),
// ghz or native. Each round runs, per generator, the echo and then a DENY and an ALLOW plan of
// the same cached file, so the ratios are side by side; the best round of each counts.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

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
	b, err := os.ReadFile("/proc/" + strconv.Itoa(d.Cmd.Process.Pid) + "/stat")
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

// runGhz runs ghz once and returns what it measured, with its CPU and the daemon's.
func runGhz(o options, conc, requests int, d *daemon, call, data, out string) (*loadResult, error) {
	cpu0 := d.cpu()
	// The step timeout bounds ghz from outside: ghz's own -x (max duration) makes it run for
	// the whole duration whatever -n says (ghz v0.121.0).
	ctx, cancel := context.WithTimeout(context.Background(), o.stepTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(o.bin, "ghz"), "--insecure", "--call", call, "-d", data,
		"-c", strconv.Itoa(conc), "-n", strconv.Itoa(requests), "--timeout", o.genTimeout.String(),
		"-O", "json", "-o", out, d.GRPCAddr)
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("ghz %s: %v\n%s", call, err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return nil, err
	}
	var g ghzReport
	if err := json.Unmarshal(b, &g); err != nil {
		return nil, fmt.Errorf("ghz output %s: %w", out, err)
	}
	r := &loadResult{count: g.Count, errors: g.errors(), wall: time.Duration(g.Total), rps: g.Rps,
		p50: g.pct(50), p99: g.pct(99), p999: -1, errDistribution: g.ErrorDistribution,
		genCPU: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), daemonCPU: -1}
	if cpu1 := d.cpu(); cpu0 >= 0 && cpu1 >= 0 {
		r.daemonCPU = cpu1 - cpu0
	}
	return r, nil
}

// throughputCall is one of (a)'s requests, as each generator sends it.
type throughputCall struct {
	name, file string // for the table, and ghz's output file
	ghzCall    string
	ghzData    string // the request as JSON
	native     genCall
	check      bool // a CheckRescale (counted against the result cache)
}

// generator runs one call at a concurrency and a count.
type generator struct {
	name  string // "ghz" or "native"
	cpu   string // how the CPU column names it
	run   func(c throughputCall, conc, n int, tag string) (*loadResult, error)
	sends func(n int) int // checks a run of n sends (warm-up and reference included)
}

func throughputCalls(o options) ([]throughputCall, error) {
	calls := []throughputCall{{name: "Health/Check (echo)", file: "echo", ghzCall: "grpc.health.v1.Health/Check", ghzData: "{}", native: echoCall()}}
	// Two plans for the same cached file: compact-operator=8 is DENY (with the nearest-safe
	// search), =4 is ALLOW.
	for _, p := range []struct {
		name string
		par  int32
		want pb.Verdict
	}{{"DENY (compact-operator=8)", 8, pb.Verdict_VERDICT_DENY}, {"ALLOW (compact-operator=4)", 4, pb.Verdict_VERDICT_ALLOW}} {
		data, err := json.Marshal(map[string]any{"checkpoint": map[string]any{"uri": o.cached}, "plan": map[string]any{"parallelism": map[string]int32{"compact-operator": p.par}}})
		if err != nil {
			return nil, err
		}
		req := &pb.CheckRescaleRequest{Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: o.cached}},
			Plan: &pb.RescalePlan{VertexParallelism: map[string]int32{"compact-operator": p.par}}}
		calls = append(calls, throughputCall{name: "CheckRescale cached " + p.name, file: fmt.Sprintf("check%d", p.par),
			ghzCall: "preflight.v1.PreflightService/CheckRescale", ghzData: string(data),
			native: checkCall(p.name, req, p.want), check: true})
	}
	return calls, nil
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
	defer d.Stop()
	calls, err := throughputCalls(o)
	if err != nil {
		return nil, err
	}
	gens, closeGens, err := generators(o, d)
	if err != nil {
		return nil, err
	}
	defer closeGens()
	results, checksSent, err := throughputRounds(o, gens, calls)
	if err != nil {
		return nil, err
	}
	if err := checkCaches(d, checksSent, (len(calls)-1)*o.conc); err != nil {
		return nil, err
	}
	rows := throughputRows(o, gens, calls, results)
	if o.lowConc > 0 {
		// Latency without queueing: at c=50 a closed loop's mean latency is 50 ÷ RPS (Little's
		// law) whatever the server does, so the same calls at low concurrency show service time.
		for _, gen := range gens {
			for _, c := range calls {
				r, err := gen.run(c, o.lowConc, o.lowRequests, "low-"+c.file)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", gen.name, err)
				}
				logf("(a) %s c=%d %s: %.0f rps p50 %v p99 %v p99.9 %v errors %d", gen.name, o.lowConc, c.name, r.rps, r.p50, r.p99, r.p999, r.errors)
				rows = append(rows, row{fmt.Sprintf("(a) %s: %s, c=%d", gen.name, c.name, o.lowConc), throughputMetric, throughputValue(r, gen.cpu), "", ""})
			}
		}
	}
	return rows, nil
}

// generators are the load generators -gen asks for (ghz, the native one, or both), and what
// closes them.
func generators(o options, d *daemon) ([]generator, func(), error) {
	var gens []generator
	closeFn := func() {}
	if o.gen == "both" || o.gen == "ghz" {
		gens = append(gens, generator{name: "ghz", cpu: "ghz",
			run: func(c throughputCall, conc, n int, tag string) (*loadResult, error) {
				return runGhz(o, conc, n, d, c.ghzCall, c.ghzData, filepath.Join(o.work, "ghz-"+tag+".json"))
			},
			sends: func(n int) int { return n }})
	}
	if o.gen == "both" || o.gen == "native" {
		ng, err := newNativeGen(d.GRPCAddr, o.genConns, o.genCodec, o.genTimeout)
		if err != nil {
			return nil, nil, err
		}
		closeFn = ng.close
		gens = append(gens, generator{name: "native", cpu: "generator",
			run: func(c throughputCall, conc, n int, _ string) (*loadResult, error) {
				ctx, cancel := context.WithTimeout(context.Background(), o.stepTimeout)
				defer cancel()
				defer debug.SetGCPercent(debug.SetGCPercent(o.genGOGC))
				return ng.run(ctx, c.native, conc, n, o.genWarmup, d.cpu)
			},
			sends: func(n int) int { return 1 + o.genWarmup + n }})
		logf("(a) native generator: %d connection(s), codec %s, warm-up %d, timeout %v per request, GOGC %d", len(ng.conns), o.genCodec, o.genWarmup, o.genTimeout, o.genGOGC)
	}
	if len(gens) == 0 {
		closeFn()
		return nil, nil, fmt.Errorf("-gen %q: want both, ghz or native", o.gen)
	}
	return gens, closeFn, nil
}

// throughputRounds runs every call with every generator, o.rounds times, alternating which
// generator goes first: results[generator][call][round], and the checks sent in all.
func throughputRounds(o options, gens []generator, calls []throughputCall) ([][][]*loadResult, int, error) {
	results := make([][][]*loadResult, len(gens))
	for g := range gens {
		results[g] = make([][]*loadResult, len(calls))
	}
	checksSent := 0
	for i := range o.rounds {
		logf("(a) round %d/%d: -c %d -n %d, echo then DENY and ALLOW (cached %s), load average %s", i+1, o.rounds, o.conc, o.requests, o.cached, loadavg())
		for k := range gens {
			g := (k + i) % len(gens)
			for ci, c := range calls {
				r, err := gens[g].run(c, o.conc, o.requests, fmt.Sprintf("%s-%d", c.file, i))
				if err != nil {
					return nil, 0, fmt.Errorf("%s: %w", gens[g].name, err)
				}
				if c.check {
					checksSent += gens[g].sends(o.requests)
				}
				logf("    %-6s %-40s %6.0f rps p50 %v p99 %v p99.9 %v errors %d %v, CPU per request %s", gens[g].name, c.name, r.rps, r.p50, r.p99, r.p999, r.errors, r.errDistribution, r.cpuPerRequest(gens[g].cpu))
				results[g][ci] = append(results[g][ci], r)
			}
		}
	}
	return results, checksSent, nil
}

const throughputMetric = "RPS / p50 / p99 / p99.9; CPU per request"

// throughputValue is a result's cell: RPS, latencies, errors and CPU per request.
func throughputValue(r *loadResult, cpu string) string {
	ms := func(d time.Duration) string {
		if d < 0 {
			return "–"
		}
		return fmt.Sprintf("%.2f ms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.0f / %s / %s / %s (%d errors); %s", r.rps, ms(r.p50), ms(r.p99), ms(r.p999), r.errors, r.cpuPerRequest(cpu))
}

// throughputRows are the table rows per generator: the echo, each check, and each check's RPS
// ratio to the echo. The best round of each counts (the machine is shared: the best is the least
// disturbed).
func throughputRows(o options, gens []generator, calls []throughputCall, results [][][]*loadResult) []row {
	best := func(rs []*loadResult) *loadResult {
		b := rs[0]
		for _, r := range rs[1:] {
			if r.rps > b.rps {
				b = r
			}
		}
		return b
	}
	c := strconv.Itoa(o.conc)
	var rows []row
	for g, gen := range gens {
		echo := best(results[g][0])
		rows = append(rows, row{fmt.Sprintf("(a) %s: %s, c=%s", gen.name, calls[0].name, c), throughputMetric, throughputValue(echo, gen.cpu), "baseline", ""})
		var ratioRows []row
		for ci := 1; ci < len(calls); ci++ {
			check := best(results[g][ci])
			ratio := check.rps / echo.rps
			var ratios []string
			for i := range results[g][ci] {
				ratios = append(ratios, fmt.Sprintf("%.0f%%", 100*results[g][ci][i].rps/results[g][0][i].rps))
			}
			rows = append(rows, row{fmt.Sprintf("(a) %s: %s, c=%s", gen.name, calls[ci].name, c), throughputMetric, throughputValue(check, gen.cpu), "p99 ≤ 10 ms", yes(check.p99 <= targetP99 && check.errors == 0)})
			ratioRows = append(ratioRows, row{fmt.Sprintf("(a) %s: CheckRescale %s ÷ echo", gen.name, strings.Fields(strings.TrimPrefix(calls[ci].name, "CheckRescale cached "))[0]), "RPS ratio, best ÷ best (per round)", fmt.Sprintf("%.0f%% (%s)", 100*ratio, strings.Join(ratios, ", ")), "≥ 50%", yes(ratio >= targetRPSRatio)})
		}
		rows = append(rows, ratioRows...)
	}
	return rows
}

// checkCaches reads the daemon's /metrics: the checks must have been served from the caches. The
// file decoded once, and every answer after the first ones of each plan (up to -c callers ask at
// once; with single-flight they share one computation) from the result cache when the daemon has
// it, else from the layout cache. A request that joins a computation in flight counts as
// "shared", not as a hit.
func checkCaches(d *daemon, sent, firstAsks int) error {
	hits := d.Metric(`preflight_layout_cache_requests_total{result="hit"}`) + max(0, d.Metric(`preflight_layout_cache_requests_total{result="shared"}`))
	misses := d.Metric(`preflight_layout_cache_requests_total{result="miss"}`)
	// Absent (-1) when the daemon runs without a result cache.
	rhits := max(0, d.Metric(`preflight_result_cache_requests_total{result="hit"}`)) + max(0, d.Metric(`preflight_result_cache_requests_total{result="shared"}`))
	rmisses := max(0, d.Metric(`preflight_result_cache_requests_total{result="miss"}`))
	logf("(a) layout cache: %.0f hits (with shared), %.0f misses; result cache: %.0f hits (with shared), %.0f misses; %d checks sent", hits, misses, rhits, rmisses, sent)
	total := float64(sent)
	switch {
	case misses > 1:
		return fmt.Errorf("the cached file was decoded %.0f times", misses)
	case rhits+rmisses > 0 && rhits < total-float64(firstAsks):
		return fmt.Errorf("CheckRescale was not answered from the result cache: %.0f hits, %.0f misses of %.0f", rhits, rmisses, total)
	case rhits+rmisses == 0 && hits < total-1:
		return fmt.Errorf("CheckRescale was not served from the layout cache: %.0f hits, %.0f misses", hits, misses)
	}
	return nil
}
