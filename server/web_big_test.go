package server

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/performance"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// pageHeapBound bounds the tab's JavaScript heap after the 168 MB file's check. The page must not
// hold the file (it streams from disk) nor a report with every subtask: what is left is the page's
// own code, a bounded report and a bounded DOM, a few MiB. 64 MiB is far below the file's size
// and leaves room for a browser's own growth; a page that read the file into memory could not meet it.
const pageHeapBound = 64 << 20

// TestWebPageBigFileInChromium (PREFLIGHT_BIG=1) uploads the 168 MB Kafka orphan-union file
// through the page's file input, sets the source to 8 from the keyboard, and reads the verdict,
// the findings, the tab's JavaScript heap and how fast the page answers afterwards.
func TestWebPageBigFileInChromium(t *testing.T) {
	if os.Getenv("PREFLIGHT_BIG") != "1" {
		t.Skip("set PREFLIGHT_BIG=1 to upload the 168 MB file through the page (takes a minute or two)")
	}
	exe := chromium(t)
	path, size := bigKafkaFile(t)
	base := serveHarnessHTTP(t, startInProcess(t, Config{MaxUploadBytes: 2 * size}))
	bctx, foreign := browseFor(t, exe, base, 10*time.Minute)

	input := chromedp.CSS(`#vertices input[data-key="kafka-source"]`)
	start := time.Now()
	if err := chromedp.Do(bctx,
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS(`#file`)),
		chromedp.SetUploadFiles(chromedp.CSS(`#file`), []string{path}),
		chromedp.WaitVisible(chromedp.CSS(`#verdict`)), // the first check, at the stored parallelism
	); err != nil {
		t.Fatalf("uploading the file: %v", err)
	}
	first := time.Since(start)
	start = time.Now()
	if err := chromedp.Do(bctx,
		chromedp.WaitVisible(input),
		chromedp.SetValue(input, ""),
		chromedp.SendKeys(input, "8"+kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`#verdict.DENY, #verdict.ALLOW_WITH_WARNINGS`)),
		chromedp.WaitVisible(chromedp.CSS(`#result .finding`)),
	); err != nil {
		t.Fatalf("checking at 8: %v", err)
	}
	second := time.Since(start)

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
	v, err := chromedp.Run(bctx, chromedp.Value(input))
	if err != nil || v != "12" {
		t.Errorf("the plan field holds %q after typing 12 (%v)", v, err)
	}

	heap, err := chromedp.Run(bctx, chromedp.Evaluate[float64](`performance.memory.usedJSHeapSize`))
	if err != nil {
		t.Fatal(err)
	}
	var metrics map[string]float64
	if err := chromedp.Do(bctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		if _, err := cdp.Call(ctx, tg, performance.Enable, performance.EnableParams{}); err != nil {
			return err
		}
		r, err := cdp.Call(ctx, tg, performance.GetMetrics, cdp.Empty{})
		metrics = map[string]float64{}
		for _, m := range r.Metrics {
			metrics[m.Name] = m.Value
		}
		return err
	})); err != nil {
		t.Fatal(err)
	}
	counts, err := chromedp.Run(bctx, chromedp.Evaluate[map[string]int](`({
		findings: document.querySelectorAll('#result .finding').length,
		charts: document.querySelectorAll('#result svg').length,
		nodes: document.getElementsByTagName('*').length})`))
	if err != nil {
		t.Fatal(err)
	}
	result, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS(`#result`)))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%.1f MiB file: first verdict in %v, verdict at 8 in %v; JS heap %.1f MiB used (CDP JSHeapUsedSize %.1f MiB, total %.1f MiB); %.0f DOM nodes, %d findings, %d charts; Evaluate round trip %v, typing 2 keys %v",
		float64(size)/(1<<20), first.Round(time.Millisecond), second.Round(time.Millisecond), heap/(1<<20),
		metrics["JSHeapUsedSize"]/(1<<20), metrics["JSHeapTotalSize"]/(1<<20), metrics["Nodes"], counts["findings"], counts["charts"],
		roundTrip.Round(time.Millisecond), typed.Round(time.Millisecond))
	if !strings.Contains(result, "Findings (") || counts["findings"] == 0 {
		t.Errorf("no findings shown:\n%.2000s", result)
	}
	if roundTrip > time.Second {
		t.Errorf("an Evaluate round trip took %v after the report: the page is frozen", roundTrip)
	}
	if heap > pageHeapBound || metrics["JSHeapUsedSize"] > pageHeapBound {
		t.Errorf("the tab's JS heap is %.1f MiB (CDP %.1f MiB), want ≤ %d MiB", heap/(1<<20), metrics["JSHeapUsedSize"]/(1<<20), pageHeapBound>>20)
	}
	if f := foreign(); len(f) > 0 {
		t.Errorf("the page requested other origins: %q", f)
	}
}
