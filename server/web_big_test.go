package server

import (
	"context"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/heapprofiler"
	"github.com/chromedp/cdproto/performance"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/flinkpreflight/preflight/internal/scenarios"
)

// pageHeapBound bounds the JavaScript heap the tab retains after a big file's check. The page must not hold
// the file (an upload streams from disk) nor a report with every subtask (it asks for the chart
// rows): what is left is its code, a bounded report and a bounded DOM, a few MiB. 64 MiB is far
// below the files' sizes and leaves room for a browser's own growth; a page that read the file
// into memory, or drew every subtask of every operator, could not meet it.
const pageHeapBound = 64 << 20

// TestWebPageBigFileInChromium (PREFLIGHT_BIG=1) drives the page on two big checkpoints and
// reports the tab's JavaScript heap and how fast the page answers once the report is drawn:
//   - upload: the 168 MB Kafka orphan-union file through the file input, its source set to 8 from
//     the keyboard;
//   - uri: 300 operators of parallelism 1,024 with a UNION and a SPLIT_DISTRIBUTE state each,
//     opened by its path with four operators set to 2,048 in the link; the page must bound its
//     operators, charts and chart rows, and picking another operator's chart reads that
//     operator's rows from the streamed answer.
func TestWebPageBigFileInChromium(t *testing.T) {
	if os.Getenv("PREFLIGHT_BIG") != "1" {
		t.Skip("set PREFLIGHT_BIG=1 to check big files through the page (takes a minute or two)")
	}
	exe := chromium(t)
	t.Run("upload", func(t *testing.T) {
		path, size := bigKafkaFile(t)
		base := serveHarnessHTTP(t, startInProcess(t, Config{MaxUploadBytes: 2 * size}))
		bctx, foreign := browseFor(t, exe, base, 10*time.Minute)
		start := time.Now()
		if err := chromedp.Do(bctx,
			chromedp.Navigate(base+"/"),
			chromedp.WaitVisible(chromedp.CSS(`#file`)),
			chromedp.SetUploadFiles(chromedp.CSS(`#file`), []string{path}),
			chromedp.WaitVisible(chromedp.CSS(`#result:not([aria-busy]) #verdict`)), // at the stored parallelism
		); err != nil {
			t.Fatalf("uploading the file: %v", err)
		}
		t.Logf("%.1f MiB file: first verdict in %v", float64(size)/(1<<20), time.Since(start).Round(time.Millisecond))
		bigPageCheck(t, bctx, "kafka-source", "8")
		if f := foreign(); len(f) > 0 {
			t.Errorf("the page requested other origins: %q", f)
		}
	})
	t.Run("uri", func(t *testing.T) {
		dir := t.TempDir()
		size := writeSynthetic(t, filepath.Join(dir, "_metadata"), scenarios.Synthetic{Operators: 300, Parallelism: 1024, MaxParallelism: 32768, Split: 1, Union: 1})
		base := serveHarnessHTTP(t, startInProcess(t, Config{MaxUploadBytes: 2 * size, Allow: []string{dir}}))
		bctx, foreign := browseFor(t, exe, base, 10*time.Minute)
		q := url.Values{"uri": {dir}, "set": {"op-1=2048", "op-2=2048", "op-3=2048", "op-299=2048"}}
		start := time.Now()
		if err := chromedp.Do(bctx,
			chromedp.Navigate(base+"/?"+q.Encode()),
			chromedp.WaitVisible(chromedp.CSS(`#result:not([aria-busy]) #verdict`)),
		); err != nil {
			t.Fatalf("opening the checkpoint: %v", err)
		}
		t.Logf("%.1f MiB file: first verdict in %v", float64(size)/(1<<20), time.Since(start).Round(time.Millisecond))
		c := bigPageCheck(t, bctx, "op-0", "2048")
		if c["vertexInputs"] > 201+4 || c["operatorRows"] > 200 || c["charts"] > 8*4 {
			t.Errorf("unbounded page: %v", c)
		}
		if c["barsMax"] > 2*16 {
			t.Errorf("a chart draws %d bars, want at most 16 subtasks (32 bars)", c["barsMax"])
		}
		// Pick the chart of an operator the report has no rows for: op-299 (set in the link), the
		// last. The page asks for its rows alone (subtask_operators), so its place in the report
		// does not matter (when it asked for every subtask, the later the operator, the longer
		// its chart took: bench/README.md, "The web page on big checkpoints").
		start = time.Now()
		picked := `#picked-chart section[data-operator="op-299"] svg`
		if err := chromedp.Do(bctx,
			chromedp.WaitVisible(chromedp.CSS(`#chart-pick`)),
			chromedp.SetValue(chromedp.CSS(`#chart-pick`), pickValue(t, bctx, "op-299")),
			chromedp.Evaluate[chromedp.Void](`document.querySelector('#chart-pick').dispatchEvent(new Event('change'))`),
			chromedp.WaitVisible(chromedp.CSS(picked)),
		); err != nil {
			t.Fatalf("picking op-299's chart: %v", err)
		}
		bars, err := chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelector('`+picked+`').querySelectorAll('rect.after').length`))
		if err != nil || bars != MaxChartSubtasks {
			t.Errorf("op-299's picked chart has %d after bars (%v), want %d", bars, err, MaxChartSubtasks)
		}
		t.Logf("picked op-299's chart in %v", time.Since(start).Round(time.Millisecond))
		bigPageFigures(t, bctx)
		if f := foreign(); len(f) > 0 {
			t.Errorf("the page requested other origins: %q", f)
		}
	})
}

// MaxChartSubtasks is app.js's MAX_CHART_SUBTASKS: the subtasks a picked operator's chart draws.
const MaxChartSubtasks = 64

// pickValue is the value of the #chart-pick option of the operator named label.
func pickValue(t *testing.T, bctx context.Context, label string) string {
	t.Helper()
	v, err := chromedp.Run(bctx, chromedp.Evaluate[string](`([...document.querySelectorAll('#chart-pick option')].find((o) => o.textContent.includes(`+
		"'"+label+":'"+`)) || {value: 'none'}).value`))
	if err != nil || v == "none" {
		t.Fatalf("no option %q in #chart-pick (%v)", label, err)
	}
	return v
}

// writeSynthetic writes s to path and returns its size.
func writeSynthetic(t *testing.T, path string, s scenarios.Synthetic) int64 {
	t.Helper()
	return writeGenerated(t, path, func(w io.Writer) error { return scenarios.WriteSynthetic(w, s) })
}

// bigPageCheck sets the vertex key to p from the keyboard, waits for the report with its
// findings, checks that the page still answers, and logs and returns what the page drew.
func bigPageCheck(t *testing.T, bctx context.Context, key, p string) map[string]int {
	t.Helper()
	input := chromedp.CSS(`#vertices input[data-key="` + key + `"]`)
	start := time.Now()
	if err := chromedp.Do(bctx,
		chromedp.WaitVisible(input),
		chromedp.SetValue(input, ""),
		chromedp.SendKeys(input, p+kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`#result:not([aria-busy]) #verdict`)),
		chromedp.WaitVisible(chromedp.CSS(`#result .finding`)),
	); err != nil {
		t.Fatalf("checking %s at %s: %v", key, p, err)
	}
	took := time.Since(start)

	// Responsiveness: an Evaluate round trip, and typing into the plan field, right after the
	// report is drawn.
	start = time.Now()
	if _, err := chromedp.Run(bctx, chromedp.Evaluate[int](`1 + 1`)); err != nil {
		t.Fatal(err)
	}
	roundTrip := time.Since(start)
	start = time.Now()
	if err := chromedp.Do(bctx, chromedp.SetValue(input, ""), chromedp.SendKeys(input, "12")); err != nil {
		t.Fatal(err)
	}
	typed := time.Since(start)
	if v, err := chromedp.Run(bctx, chromedp.Value(input)); err != nil || v != "12" {
		t.Errorf("the plan field holds %q after typing 12 (%v)", v, err)
	}
	counts, err := chromedp.Run(bctx, chromedp.Evaluate[map[string]int](`({
		findings: document.querySelectorAll('#result .finding').length,
		charts: document.querySelectorAll('#result svg').length,
		barsMax: Math.max(0, ...[...document.querySelectorAll('#result svg')].map((s) => s.querySelectorAll('rect').length)),
		vertexInputs: document.querySelectorAll('#vertices input').length,
		operatorRows: document.querySelectorAll('#operators tbody tr').length,
		nodes: document.getElementsByTagName('*').length})`))
	if err != nil {
		t.Fatal(err)
	}
	verdict, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS(`#verdict`)))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s=%s: verdict %s in %v; %v; Evaluate round trip %v, typing 2 keys %v", key, p, verdict, took.Round(time.Millisecond), counts,
		roundTrip.Round(time.Millisecond), typed.Round(time.Millisecond))
	if counts["findings"] == 0 || !strings.Contains("ALLOW WITH WARNINGS DENY", verdict) {
		t.Errorf("verdict %q and %d findings shown", verdict, counts["findings"])
	}
	if roundTrip > time.Second {
		t.Errorf("an Evaluate round trip took %v after the report: the page is frozen", roundTrip)
	}
	bigPageFigures(t, bctx)
	return counts
}

// bigPageFigures logs the tab's JavaScript heap (the DevTools protocol's Performance.getMetrics)
// as the page left it and after a garbage collection, and checks what the page retains against
// pageHeapBound.
func bigPageFigures(t *testing.T, bctx context.Context) {
	t.Helper()
	heap := func(gc bool) (used, total, nodes float64) {
		t.Helper()
		if err := chromedp.Do(bctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			if gc {
				if _, err := cdp.Call(ctx, tg, heapprofiler.CollectGarbage, cdp.Empty{}); err != nil {
					return err
				}
			}
			if _, err := cdp.Call(ctx, tg, performance.Enable, performance.EnableParams{}); err != nil {
				return err
			}
			r, err := cdp.Call(ctx, tg, performance.GetMetrics, cdp.Empty{})
			for _, m := range r.Metrics {
				switch m.Name {
				case "JSHeapUsedSize":
					used = m.Value
				case "JSHeapTotalSize":
					total = m.Value
				case "Nodes":
					nodes = m.Value
				}
			}
			return err
		})); err != nil {
			t.Fatal(err)
		}
		return used, total, nodes
	}
	used, total, _ := heap(false)
	retained, _, nodes := heap(true)
	t.Logf("JS heap %.1f MiB used of %.1f MiB, %.1f MiB after a garbage collection; %.0f DOM nodes",
		used/(1<<20), total/(1<<20), retained/(1<<20), nodes)
	if retained > pageHeapBound {
		t.Errorf("the page retains %.1f MiB of JS heap, want ≤ %d MiB", retained/(1<<20), pageHeapBound>>20)
	}
}
