package server

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/flinkpreflight/preflight/internal/scenarios"
)

// chromium finds Debian's chromium (or $PREFLIGHT_CHROMIUM). Without one the test skips on a
// developer machine and fails in CI, which must install it (make tools does).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{os.Getenv("PREFLIGHT_CHROMIUM"), "chromium", "chromium-browser"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	const msg = "no chromium: the web page test needs a headless browser (apt-get install -y chromium, which make tools runs)"
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// artifactDir is where the test leaves its screenshot: $PREFLIGHT_ARTIFACTS, or a folder in the
// system's temporary directory (never the repository).
func artifactDir(t *testing.T) string {
	dir := os.Getenv("PREFLIGHT_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "preflight-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestWebPageServed(t *testing.T) {
	h := startInProcess(t, Config{})
	base := serveHarnessHTTP(t, h)
	for _, tt := range []struct{ path, wantType, wantBody string }{
		{"/", "text/html", `<script src="/web/app.js"`},
		{"/web/app.js", "javascript", "/v1/check:upload"},
		{"/web/app.css", "text/css", "--after"},
	} {
		resp, err := http.Get(base + tt.path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Type"), tt.wantType) || !strings.Contains(string(b), tt.wantBody) {
			t.Errorf("GET %s: %d %s, want %s containing %q", tt.path, resp.StatusCode, resp.Header.Get("Content-Type"), tt.wantType, tt.wantBody)
		}
		if !strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'self'") {
			t.Errorf("GET %s: no same-origin Content-Security-Policy", tt.path)
		}
	}
	for _, p := range []string{"/nope", "/web/nope.js"} {
		resp, err := http.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, resp.StatusCode)
		}
	}
}

// TestWebPageInChromium drives the page in a real headless Chromium: upload the compact-sink
// checkpoint, set compact-operator to 8 from the keyboard, and see DENY, FLINK-31689 and a chart
// with 8 new subtasks; the page loads nothing from anywhere but preflightd.
func TestWebPageInChromium(t *testing.T) {
	exe := chromium(t)
	meta, err := filepath.Abs(filepath.Join(testdataDir(t), "compact-sink", "_metadata"))
	if err != nil {
		t.Fatal(err)
	}
	h := startInProcess(t, Config{})
	base := serveHarnessHTTP(t, h)

	bctx, foreign := browse(t, exe, base)

	input := chromedp.CSS(`#vertices input[data-key="compact-operator"]`)
	chart := `section[data-operator="compact-operator"] svg[data-state="expired-files"][data-measure="elements"]`
	var (
		result, location      string
		afterBars, beforeBars int
		screenshot            []byte
	)
	err = chromedp.Do(bctx,
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS(`#file`)),
		chromedp.SetUploadFiles(chromedp.CSS(`#file`), []string{meta}),
		chromedp.WaitVisible(input),
		chromedp.WaitVisible(chromedp.CSS(`#verdict`)), // the first check, at the stored parallelism
		chromedp.SetValue(input, ""),
		chromedp.SendKeys(input, "8"+kb.Enter), // the keyboard submits the plan
		chromedp.WaitVisible(chromedp.CSS(`#verdict.DENY`)),
		chromedp.WaitVisible(chromedp.CSS(chart)),
	)
	if err == nil {
		result, err = chromedp.Run(bctx, chromedp.Text(chromedp.CSS(`#result`)))
	}
	if err == nil {
		afterBars, err = chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelectorAll('`+chart+` rect.after').length`))
	}
	if err == nil {
		beforeBars, err = chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelectorAll('`+chart+` rect.before').length`))
	}
	if err == nil {
		location, err = chromedp.Run(bctx, chromedp.Location())
	}
	if shot, serr := chromedp.Run(bctx, chromedp.FullScreenshot(100)); serr == nil {
		screenshot = shot
	}
	if len(screenshot) > 0 {
		p := filepath.Join(artifactDir(t), "web-compact-sink-8.png")
		if werr := os.WriteFile(p, screenshot, 0o644); werr == nil {
			t.Logf("screenshot: %s", p)
		}
	}
	if err != nil {
		t.Fatalf("driving the page: %v", err)
	}
	for _, want := range []string{"DENY", "FLINK-31689", "PF101", "Fix:", "Nearest safe parallelism",
		"#6 compact-operator (0d9ffb4f): parallelism 4 → 8"} { // operators named as the CLI names them
		if !strings.Contains(result, want) {
			t.Errorf("the result lacks %q:\n%.2000s", want, result)
		}
	}
	if afterBars != 8 || beforeBars != 4 {
		t.Errorf("expired-files chart: %d after bars and %d before bars, want 8 and 4", afterBars, beforeBars)
	}
	u, err := url.Parse(location)
	if err != nil || !slices.Contains(u.Query()["set"], "compact-operator=8") || u.Query().Get("file") != "_metadata" {
		t.Errorf("page URL %q does not hold the plan (set=compact-operator=8, file=_metadata)", location)
	}
	if f := foreign(); len(f) > 0 {
		t.Errorf("the page requested other origins: %q", f)
	}
}

// browse starts a headless Chromium for the test and returns its tab's context and what the
// page requested from origins other than base.
func browse(t *testing.T, exe, base string) (context.Context, func() []string) {
	t.Helper()
	return browseFor(t, exe, base, 3*time.Minute) // a loaded CI machine
}

// browseFor is browse with the time the whole session may take.
func browseFor(t *testing.T, exe, base string, limit time.Duration) (context.Context, func() []string) {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		// Without these, Chromium phones home at start and, on a closed network, stalls or fails.
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 1700),
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	t.Cleanup(cancel)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)

	if err := chromedp.Do(bctx); err != nil { // starts the browser and its tab
		t.Fatalf("starting %s: %v", exe, err)
	}
	var mu sync.Mutex
	var foreign []string
	if err := chromedp.Listen(bctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok && !strings.HasPrefix(e.Request.URL, base) && !strings.HasPrefix(e.Request.URL, "data:") {
			mu.Lock()
			foreign = append(foreign, e.Request.URL)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}

	return bctx, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(foreign)
	}
}

// TestWebPageFromLink opens the page from links, as a user pasting one would: a key that names
// no operator keeps the plan form and flags the key (removing it checks again); a short ID in
// the link shows its parallelism in the vertex's field; keyed state is charted per subtask.
func TestWebPageFromLink(t *testing.T) {
	exe := chromium(t)
	td := testdataDir(t)
	base := serveHarnessHTTP(t, startInProcess(t, Config{Allow: []string{td}}))
	bctx, foreign := browse(t, exe, base)
	open := func(dir string, set ...string) string {
		q := url.Values{"uri": {filepath.Join(td, dir)}, "set": set}
		return base + "/?" + q.Encode()
	}
	text := func(sel string) string {
		v, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("reading %s: %v", sel, err)
		}
		return v
	}
	count := func(sel string) int {
		n, err := chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelectorAll('`+sel+`').length`))
		if err != nil {
			t.Fatalf("counting %s: %v", sel, err)
		}
		return n
	}
	t.Run("bad key", func(t *testing.T) {
		if err := chromedp.Do(bctx,
			chromedp.Navigate(open("compact-sink", "nosuch=3")),
			chromedp.WaitVisible(chromedp.CSS(`#plan-problems`)),
			chromedp.WaitVisible(chromedp.CSS(`#vertices input[data-key="compact-operator"]`)),
		); err != nil {
			t.Fatalf("driving the page: %v", err)
		}
		if problems, errText := text(`#plan-problems`), text(`#error`); !strings.Contains(problems, "set=nosuch=3") || !strings.Contains(errText, "nosuch") {
			t.Errorf("flagged %q, error %q; want the key named in both", problems, errText)
		}
		if err := chromedp.Do(bctx,
			chromedp.Click(chromedp.CSS(`#plan-problems button[data-key="nosuch"]`)),
			chromedp.WaitVisible(chromedp.CSS(`#verdict`)),
		); err != nil {
			t.Fatalf("removing the key: %v", err)
		}
	})
	t.Run("short ID", func(t *testing.T) {
		if err := chromedp.Do(bctx,
			chromedp.Navigate(open("compact-sink", "0d9ffb4f=8")),
			chromedp.WaitVisible(chromedp.CSS(`#verdict.DENY`)),
		); err != nil {
			t.Fatalf("driving the page: %v", err)
		}
		v, err := chromedp.Run(bctx, chromedp.Value(chromedp.CSS(`#vertices input[data-key="0d9ffb4f"]`)))
		if err != nil || v != "8" {
			t.Fatalf("the field of the vertex the link sets to 8 shows %q (%v)", v, err)
		}
	})
	t.Run("keyed chart", func(t *testing.T) {
		chart := `svg[data-measure="keyed-bytes"]`
		if err := chromedp.Do(bctx,
			chromedp.Navigate(open("max-parallelism", "click-window=8")),
			chromedp.WaitVisible(chromedp.CSS(chart)),
		); err != nil {
			t.Fatalf("driving the page: %v", err)
		}
		if after, before := count(chart+" rect.after"), count(chart+" rect.before"); after != 8 || before != 4 {
			t.Errorf("keyed chart: %d after and %d before bars, want 8 and 4", after, before)
		}
	})
	if f := foreign(); len(f) > 0 {
		t.Errorf("the page requested other origins: %q", f)
	}
}

// TestWebPageJobJarInChromium: the page passes the job jars typed into its field to the check
// (upload: the jobJarUri parameter): the custom operator at 8 is then DENY with PF101 naming the
// class, method and line of the unguarded read, and the page URL keeps the jar.
func TestWebPageJobJarInChromium(t *testing.T) {
	exe := chromium(t)
	dir := filepath.Join(testdataDir(t), "custom-operator")
	jar := (&url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Join(dir, "job.jar"))}).String()
	h := startInProcess(t, Config{Allow: []string{dir}})
	base := serveHarnessHTTP(t, h)
	bctx, foreignRequests := browse(t, exe, base)
	input := chromedp.CSS(`#vertices input[data-key="pending-commit-writer"]`)
	err := chromedp.Do(bctx,
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS(`#file`)),
		chromedp.SetUploadFiles(chromedp.CSS(`#file`), []string{filepath.Join(dir, "_metadata")}),
		chromedp.WaitVisible(input),
		chromedp.WaitVisible(chromedp.CSS(`#verdict`)), // the first check, at the stored parallelism
		chromedp.SendKeys(chromedp.CSS(`#jobJars`), jar),
		chromedp.SetValue(input, ""),
		chromedp.SendKeys(input, "8"+kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`#verdict.DENY`)),
	)
	var result, location string
	if err == nil {
		result, err = chromedp.Run(bctx, chromedp.Text(chromedp.CSS(`#result`)))
	}
	if err == nil {
		location, err = chromedp.Run(bctx, chromedp.Location())
	}
	if err != nil {
		t.Fatalf("driving the page: %v", err)
	}
	for _, want := range []string{"DENY", "PF101", "PendingCommitOperator.initializeState, line 37", "restore code read from job.jar"} {
		if !strings.Contains(result, want) {
			t.Errorf("the result lacks %q:\n%.2000s", want, result)
		}
	}
	if u, err := url.Parse(location); err != nil || u.Query().Get("jobJar") != jar {
		t.Errorf("page URL %q does not hold the job jar %s", location, jar)
	}
	if foreign := foreignRequests(); len(foreign) > 0 {
		t.Errorf("the page requested other origins: %q", foreign)
	}
}

// TestWebPageBoundedInChromium: on 250 operators of 32 subtasks, four set to 64 in the link, the
// page lists 200 operators and plan fields (and says how many more), asks for the chart rows only
// (16 subtasks a chart, said in the heading), and charts a picked operator's 64 subtasks from the
// streamed answer.
func TestWebPageBoundedInChromium(t *testing.T) {
	exe := chromium(t)
	dir := t.TempDir()
	writeSynthetic(t, filepath.Join(dir, "_metadata"), scenarios.Synthetic{Operators: 250, Parallelism: 32, Split: 1, Union: 1})
	base := serveHarnessHTTP(t, startInProcess(t, Config{Allow: []string{dir}}))
	bctx, foreign := browse(t, exe, base)
	q := url.Values{"uri": {dir}, "set": {"op-1=64", "op-2=64", "op-3=64", "op-249=64"}}
	picked := `#picked-chart section[data-operator="op-249"] svg`
	err := chromedp.Do(bctx,
		chromedp.Navigate(base+"/?"+q.Encode()),
		chromedp.WaitVisible(chromedp.CSS(`#result:not([aria-busy]) #verdict`)),
		chromedp.WaitVisible(chromedp.CSS(`#chart-pick`)),
	)
	var counts map[string]int
	var text string
	if err == nil {
		counts, err = chromedp.Run(bctx, chromedp.Evaluate[map[string]int](`({
			operatorRows: document.querySelectorAll('#operators tbody tr').length,
			vertexInputs: document.querySelectorAll('#vertices input').length,
			charted: document.querySelectorAll('#charts section').length,
			barsMax: Math.max(0, ...[...document.querySelectorAll('#charts svg')].map((s) => s.querySelectorAll('rect.after').length))})`))
	}
	if err == nil {
		text, err = chromedp.Run(bctx, chromedp.Text(chromedp.CSS(`main`)))
	}
	if err == nil {
		err = chromedp.Do(bctx,
			chromedp.SetValue(chromedp.CSS(`#chart-pick`), pickValue(t, bctx, "op-249")),
			chromedp.Evaluate[chromedp.Void](`document.querySelector('#chart-pick').dispatchEvent(new Event('change'))`),
			chromedp.WaitVisible(chromedp.CSS(picked)))
	}
	if err != nil {
		t.Fatalf("driving the page: %v", err)
	}
	want := map[string]int{"operatorRows": 200, "vertexInputs": 201, "charted": 1, "barsMax": 16}
	for k, v := range want {
		if counts[k] != v {
			t.Errorf("%s = %d, want %d (%v)", k, counts[k], v, counts)
		}
	}
	for _, s := range []string{"… and 50 more operators", "at their stored parallelism", "(16 of 64 subtask indexes shown)", "A chart shows at most 16 subtasks"} {
		if !strings.Contains(text, s) {
			t.Errorf("the page lacks %q", s)
		}
	}
	bars, err := chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelector('`+picked+`').querySelectorAll('rect.after').length`))
	if err != nil || bars != MaxChartSubtasks {
		t.Errorf("op-249's picked chart has %d after bars (%v), want %d", bars, err, MaxChartSubtasks)
	}
	if f := foreign(); len(f) > 0 {
		t.Errorf("the page requested other origins: %q", f)
	}
}
