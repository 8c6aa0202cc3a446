package server

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flinkpreflight/preflight/internal/findings"
	"github.com/flinkpreflight/preflight/internal/restorecode"
	"github.com/flinkpreflight/preflight/internal/source/s3test"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// customOperator is testdata/custom-operator: its checkpoint (PendingCommitOperator at
// parallelism 4, one element of SPLIT_DISTRIBUTE pending-commit per subtask) and its job jar.
type customOperator struct {
	dir, metadata, jar string
}

func customOperatorFiles(t *testing.T) customOperator {
	t.Helper()
	dir := filepath.Join(testdataDir(t), "custom-operator")
	c := customOperator{dir: dir, metadata: filepath.Join(dir, "_metadata"), jar: filepath.Join(dir, "job.jar")}
	if _, err := os.Stat(c.jar); err != nil {
		t.Skipf("custom-operator example missing: %v", err)
	}
	return c
}

// writeAnalyzedCatalog writes what `preflight analyze JAR --catalog-out FILE` writes.
func writeAnalyzedCatalog(t *testing.T, jar, out string) {
	t.Helper()
	rep, err := restorecode.Analyze(context.Background(), []restorecode.Input{{Path: jar}}, restorecode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.MarshalIndent(rep.Catalog(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func fileURIOf(p string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(p)}).String()
}

// TestJobJarChecks checks testdata/custom-operator at parallelism 8 with the job code given
// every way the API takes it, by URI, upload and HTTP: the three must agree.
func TestJobJarChecks(t *testing.T) {
	co := customOperatorFiles(t)
	scratch := t.TempDir()
	catalog := filepath.Join(scratch, "job-catalog.json")
	writeAnalyzedCatalog(t, co.jar, catalog)
	outside := t.TempDir()
	outsideJar := filepath.Join(outside, "job.jar")
	if err := os.WriteFile(outsideJar, readFile(t, co.jar), 0o644); err != nil {
		t.Fatal(err)
	}
	web := httptest.NewServer(http.FileServer(http.Dir(co.dir)))
	defer web.Close()
	// A server that names no version (no ETag, no Last-Modified): the jar's bytes identify it.
	jarBytes := readFile(t, co.jar)
	bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/java-archive")
		w.Write(jarBytes)
	}))
	defer bare.Close()
	h := startInProcess(t, Config{Allow: []string{co.dir, scratch, web.URL + "/", bare.URL + "/"}, EnableHTTPSources: true})
	ctx := context.Background()
	const pf101 = "PendingCommitOperator.initializeState, line 37"
	tests := []struct {
		name     string
		opts     *pb.CheckOptions
		verdict  pb.Verdict
		rule     string // a finding with this rule ID and
		text     string // this text in its message
		code     codes.Code
		errorHas string
	}{
		{"job jar", &pb.CheckOptions{JobJarUris: []string{fileURIOf(co.jar)}}, pb.Verdict_VERDICT_DENY, "PF101", pf101, codes.OK, ""},
		{"job jar as a path", &pb.CheckOptions{JobJarUris: []string{co.jar}}, pb.Verdict_VERDICT_DENY, "PF101", pf101, codes.OK, ""},
		{"job jar over http", &pb.CheckOptions{JobJarUris: []string{web.URL + "/job.jar"}}, pb.Verdict_VERDICT_DENY, "PF101", pf101, codes.OK, ""},
		{"job jar over http without a version", &pb.CheckOptions{JobJarUris: []string{bare.URL + "/job.jar"}}, pb.Verdict_VERDICT_DENY, "PF101", pf101, codes.OK, ""},
		{"analyzed catalog", &pb.CheckOptions{CatalogUris: []string{fileURIOf(catalog)}}, pb.Verdict_VERDICT_DENY, "PF101", pf101, codes.OK, ""},
		{"without job code", nil, pb.Verdict_VERDICT_ALLOW, "PF170", "--job-jar", codes.OK, ""},
		{"jar outside the allowlist", &pb.CheckOptions{JobJarUris: []string{fileURIOf(outsideJar)}}, 0, "", "", codes.PermissionDenied, "options.job_jar_uris[0]: "},
		{"catalog outside the allowlist", &pb.CheckOptions{CatalogUris: []string{fileURIOf(filepath.Join(outside, "c.json"))}}, 0, "", "", codes.PermissionDenied, "options.catalog_uris[0]: "},
		{"missing jar", &pb.CheckOptions{JobJarUris: []string{fileURIOf(filepath.Join(co.dir, "nope.jar"))}}, 0, "", "", codes.NotFound, "options.job_jar_uris[0]: "},
		{"not a jar", &pb.CheckOptions{JobJarUris: []string{fileURIOf(co.metadata)}}, 0, "", "", codes.InvalidArgument, "options.job_jar_uris: "},
		{"too many jars", &pb.CheckOptions{JobJarUris: make([]string, maxJobJars+1)}, 0, "", "", codes.InvalidArgument, "options.job_jar_uris: 17 jars, at most 16"},
		{"not a catalog", &pb.CheckOptions{CatalogUris: []string{fileURIOf(co.metadata)}}, 0, "", "", codes.InvalidArgument, "options.catalog_uris[0]: "},
	}
	plan := &pb.RescalePlan{VertexParallelism: map[string]int32{"pending-commit-writer": 8}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := scenario{name: tt.name, path: co.metadata, plan: plan, opts: tt.opts}
			byURI := newOutcome(h.c.Check(ctx, &pb.CheckRescaleRequest{
				Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: co.metadata}}, Plan: plan, Options: tt.opts}))
			upload := newOutcome(h.c.CheckFile(ctx, co.metadata, plan, tt.opts, nil))
			viaHTTP := newOutcome(httpCheck(t, h.s.HTTPHandler(), sc))
			for name, o := range map[string]outcome{"upload": upload, "http": viaHTTP} {
				if !o.equal(byURI) {
					t.Errorf("%s differs from uri:\n%s\nvs\n%s", name, o, byURI)
				}
			}
			t.Logf("%s %s", byURI.brief(), byURI.msg)
			if tt.code != codes.OK {
				if byURI.code != tt.code.String() || !strings.Contains(byURI.msg, tt.errorHas) {
					t.Fatalf("got %s, want %s with %q", byURI, tt.code, tt.errorHas)
				}
				return
			}
			if byURI.report.GetVerdict() != tt.verdict || !hasFinding(byURI.report, tt.rule, tt.text) {
				t.Fatalf("got %s, want %s with %s saying %q", byURI, tt.verdict, tt.rule, tt.text)
			}
		})
	}
}

func hasFinding(r *pb.RescaleReport, rule, text string) bool {
	for _, f := range r.GetFindings() {
		if f.GetRuleId() == rule && strings.Contains(f.GetMessage()+" "+f.GetRemediation(), text) {
			return true
		}
	}
	return false
}

// TestJobJarMemo: a check with a job jar is never answered from the memo of the same check
// without it, nor with another version of the jar; concurrent checks of one jar analyze it once.
func TestJobJarMemo(t *testing.T) {
	co := customOperatorFiles(t)
	jars := t.TempDir()
	jar := filepath.Join(jars, "job.jar")
	if err := os.WriteFile(jar, readFile(t, co.jar), 0o644); err != nil {
		t.Fatal(err)
	}
	h := startInProcess(t, Config{Allow: []string{co.dir, jars}})
	ctx := context.Background()
	plan := &pb.RescalePlan{VertexParallelism: map[string]int32{"pending-commit-writer": 8}}
	check := func(opts *pb.CheckOptions) pb.Verdict {
		t.Helper()
		rep, err := h.c.Check(ctx, &pb.CheckRescaleRequest{
			Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: co.metadata}}, Plan: plan, Options: opts})
		if err != nil {
			t.Fatal(err)
		}
		return rep.GetVerdict()
	}
	withJar := &pb.CheckOptions{JobJarUris: []string{fileURIOf(jar)}}
	if v := check(nil); v != pb.Verdict_VERDICT_ALLOW {
		t.Fatalf("without the jar: %s, want ALLOW", v)
	}
	var wg sync.WaitGroup
	verdicts := make([]pb.Verdict, 8)
	for i := range verdicts {
		wg.Go(func() { verdicts[i] = check(withJar) })
	}
	wg.Wait()
	for i, v := range verdicts {
		if v != pb.Verdict_VERDICT_DENY {
			t.Fatalf("check %d with the jar: %s, want DENY (answered from the memo of the check without it?)", i, v)
		}
	}
	if n := h.s.code.runs.Load(); n != 1 {
		t.Fatalf("%d analyses of one jar version, want 1", n)
	}
	if v := check(nil); v != pb.Verdict_VERDICT_ALLOW {
		t.Fatalf("without the jar again: %s, want ALLOW", v)
	}
	// A new version of the jar without the operator: the memo of the old version must not answer.
	var empty bytes.Buffer
	zw := zip.NewWriter(&empty)
	if _, err := zw.Create("META-INF/MANIFEST.MF"); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	if err := os.WriteFile(jar, empty.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	os.Chtimes(jar, later, later)
	if v := check(withJar); v != pb.Verdict_VERDICT_ALLOW {
		t.Fatalf("with the new jar version: %s, want ALLOW", v)
	}
	if n := h.s.code.runs.Load(); n != 2 {
		t.Fatalf("%d analyses after the jar changed, want 2", n)
	}
}

// TestJobJarDecide: Decide with the job jar vetoes the proposal with PF101; without it, the
// custom operator is unknown and the proposal is approved.
func TestJobJarDecide(t *testing.T) {
	co := customOperatorFiles(t)
	h := startInProcess(t, Config{Allow: []string{co.dir}})
	tests := []struct {
		name   string
		opts   *pb.CheckOptions
		action pb.DecisionAction
	}{
		{"with the job jar", &pb.CheckOptions{JobJarUris: []string{fileURIOf(co.jar)}}, pb.DecisionAction_DECISION_ACTION_VETO},
		{"without", nil, pb.DecisionAction_DECISION_ACTION_APPROVE},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := h.c.Decide(context.Background(), &pb.DecideRequest{
				Checkpoint:          &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: co.dir}},
				ProposedParallelism: map[string]int32{"pending-commit-writer": 8},
				Options:             tt.opts,
			})
			if err != nil {
				t.Fatal(err)
			}
			if resp.GetAction() != tt.action {
				t.Fatalf("action %s, want %s: %v", resp.GetAction(), tt.action, resp)
			}
			if tt.action == pb.DecisionAction_DECISION_ACTION_VETO && !strings.Contains(resp.GetVertices()[0].GetReason(), "PF101") {
				t.Fatalf("veto without PF101: %v", resp)
			}
		})
	}
	// A jar outside the allowlist is the caller's to fix: the failure policy answers, naming it.
	resp, err := h.c.Decide(context.Background(), &pb.DecideRequest{
		Checkpoint:          &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: co.dir}},
		ProposedParallelism: map[string]int32{"pending-commit-writer": 8},
		Options:             &pb.CheckOptions{JobJarUris: []string{"/etc/passwd"}},
	})
	if err == nil && !strings.Contains(resp.GetFailure(), "job_jar_uris") {
		t.Fatalf("decide with a jar outside the allowlist: %v", resp)
	} else if err != nil && status.Code(err) != codes.InvalidArgument {
		t.Fatalf("decide with a jar outside the allowlist: %v", err)
	}
}

// TestJobJarDisagreement: where the analysis labels a state otherwise than a catalog entry for
// the same class, the analysis is used and every check's log says so.
func TestJobJarDisagreement(t *testing.T) {
	co := customOperatorFiles(t)
	scratch := t.TempDir()
	rep, err := restorecode.Analyze(context.Background(), []restorecode.Input{{Path: co.jar}}, restorecode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	hand := rep.Catalog()
	if len(hand.Entries) == 0 || len(hand.Entries[0].States) == 0 {
		t.Fatalf("the analysis found no state: %+v", rep)
	}
	hand.Entries[0].ID = "hand-written-pending-commit"
	hand.Entries[0].States[0].Assumption = findings.MergeAll
	b, err := json.Marshal(hand)
	if err != nil {
		t.Fatal(err)
	}
	catalog := filepath.Join(scratch, "hand.json")
	if err := os.WriteFile(catalog, b, 0o644); err != nil {
		t.Fatal(err)
	}
	h := startInProcess(t, Config{Allow: []string{co.dir, scratch}})
	for range 2 { // the second check's engine comes from the cache: it logs too
		report, err := h.c.Check(context.Background(), &pb.CheckRescaleRequest{
			Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: co.metadata}},
			Plan:       &pb.RescalePlan{VertexParallelism: map[string]int32{"pending-commit-writer": 8}},
			Options:    &pb.CheckOptions{CatalogUris: []string{fileURIOf(catalog)}, JobJarUris: []string{fileURIOf(co.jar)}, FlinkVersion: "1.19.1"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if report.GetVerdict() != pb.Verdict_VERDICT_DENY {
			t.Fatalf("verdict %s, want DENY: the analysis takes precedence over the catalog file", report.GetVerdict())
		}
	}
	logs := h.logs.String()
	if n := strings.Count(logs, `"catalog_disagreement":"`); n != 2 || !strings.Contains(logs, `the catalog entry \"hand-written-pending-commit\" says MERGE-ALL`) {
		t.Fatalf("%d disagreement log fields, want 2 naming the entry:\n%s", n, logs)
	}
}

// TestJobJarMemoryBudget: an analysis that can never fit the memory budget is refused, naming
// the estimate and the budget.
func TestJobJarMemoryBudget(t *testing.T) {
	co := customOperatorFiles(t)
	h := startInProcess(t, Config{Allow: []string{co.dir}, MemoryBudget: 16 << 20})
	_, err := h.c.Check(context.Background(), &pb.CheckRescaleRequest{
		Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: co.metadata}},
		Options:    &pb.CheckOptions{JobJarUris: []string{fileURIOf(co.jar)}},
	})
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "analyzing the job jars needs an estimated") {
		t.Fatalf("got %v, want RESOURCE_EXHAUSTED naming the analysis's estimate", err)
	}
}

// TestE2ES3JobJar: the daemon reads the job jar and a catalog from S3, under the allowlist, as
// it reads checkpoints there.
func TestE2ES3JobJar(t *testing.T) {
	co := customOperatorFiles(t)
	g := s3test.Start(t) // exports the AWS credentials the daemon inherits
	g.CreateBucket(t, "builds")
	g.Put(t, "builds", "jobs/custom/chk-1/_metadata", bytes.NewReader(readFile(t, co.metadata)))
	g.Put(t, "builds", "jobs/job.jar", bytes.NewReader(readFile(t, co.jar)))
	catalog := filepath.Join(t.TempDir(), "job-catalog.json")
	writeAnalyzedCatalog(t, co.jar, catalog)
	g.Put(t, "builds", "jobs/job-catalog.json", bytes.NewReader(readFile(t, catalog)))
	d := startDaemon(t, "--allow="+strings.Replace(g.BucketURL("builds"), "?", "/jobs?", 1))
	c := d.client(t)
	for _, opts := range []*pb.CheckOptions{
		{JobJarUris: []string{"s3://builds/jobs/job.jar"}},
		{CatalogUris: []string{"s3://builds/jobs/job-catalog.json"}},
	} {
		rep, err := c.Check(context.Background(), &pb.CheckRescaleRequest{
			Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: "s3://builds/jobs/custom/chk-1"}},
			Plan:       &pb.RescalePlan{VertexParallelism: map[string]int32{"pending-commit-writer": 8}},
			Options:    opts,
		})
		if err != nil {
			t.Fatalf("%v: %v", opts, err)
		}
		if rep.GetVerdict() != pb.Verdict_VERDICT_DENY || !hasFinding(rep, "PF101", "PendingCommitOperator.initializeState, line 37") {
			t.Fatalf("%v: %s, want DENY with PF101 naming the line", opts, newOutcome(rep, nil).brief())
		}
	}
	_, err := c.Check(context.Background(), &pb.CheckRescaleRequest{
		Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: "s3://builds/jobs/custom/chk-1"}},
		Options:    &pb.CheckOptions{JobJarUris: []string{"s3://builds/other/job.jar"}},
	})
	if status.Code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), "options.job_jar_uris[0]") {
		t.Fatalf("a jar outside the allowed prefix: %v, want PERMISSION_DENIED naming the field", err)
	}
}

func TestBoundedLRU(t *testing.T) {
	tests := []struct {
		name     string
		max      int
		maxBytes int64
		puts     []int64 // bytes of keys "0", "1", ... put in order ("0" is read after each put)
		want     string  // keys kept, most recent first
	}{
		{"entries", 2, 100, []int64{1, 1, 1}, "0 2"},
		{"bytes", 10, 100, []int64{40, 40, 40}, "0 2"},
		{"too large to keep", 10, 100, []int64{10, 101}, "0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newBoundedLRU[int](tt.max, tt.maxBytes)
			for i, b := range tt.puts {
				c.put(strconv.Itoa(i), i, b)
				c.get("0")
			}
			var keys []string
			for e := c.l.order.Front(); e != nil; e = e.Next() {
				keys = append(keys, e.Value.(*lruEntry[int]).key)
			}
			if got := strings.Join(keys, " "); got != tt.want || len(c.l.byKey) != len(keys) {
				t.Fatalf("kept %q (index %d), want %q", got, len(c.l.byKey), tt.want)
			}
		})
	}
}
