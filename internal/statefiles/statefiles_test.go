package statefiles

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/scenarios"
	"github.com/flinkpreflight/preflight/internal/source"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

func TestResolve(t *testing.T) {
	for _, c := range []struct{ meta, rel, want string }{
		{"s3://b/sp/savepoint-1/_metadata", "a1b2", "s3://b/sp/savepoint-1/a1b2"},
		{"s3://b/sp/savepoint-1/_metadata", "/a1b2", "s3://b/sp/savepoint-1/a1b2"}, // Path(Path, Path) keeps a leading-slash child relative
		{"s3://b/sp/savepoint-1/_metadata", "sub//x/", "s3://b/sp/savepoint-1/sub/x"},
		{"s3://b/sp/savepoint-1/_metadata", `sub\x`, "s3://b/sp/savepoint-1/sub/x"},
		{"s3://b/sp/savepoint-1/_metadata", "./x", "s3://b/sp/savepoint-1/x"},
		{"s3://b/sp/savepoint-1/_metadata", "../other/x", "s3://b/sp/other/x"}, // URI.resolve removes dot segments
		{"file:///flink/sp-1/_metadata", "x", "file:///flink/sp-1/x"},
		{"file:/flink/sp-1/_metadata", "x", "file:///flink/sp-1/x"},
		{"/flink/sp-1/_metadata", "x", "/flink/sp-1/x"},
		{"testdata/sp/_metadata", "x", "testdata/sp/x"},
		{"_metadata", "x", "x"},
	} {
		if got := Resolve(c.meta, c.rel); got != c.want {
			t.Errorf("Resolve(%q, %q) = %q, want %q", c.meta, c.rel, got, c.want)
		}
	}
}

func TestTargetOfRelative(t *testing.T) {
	for _, c := range []struct{ rel, want string }{
		{"a1b2", "s3://b/sp/a1b2"},
		{"s3://other/x", "s3://other/x"}, // Flink's Path(String) parses the scheme: an absolute child
		{"dir/a:b", "s3://b/sp/dir/a:b"}, // a colon after a slash is part of the path
	} {
		got, _ := Target(checkpoint.FileRef{Kind: checkpoint.StreamRelativeFile, Path: c.rel}, "s3://b/sp/_metadata")
		if got != c.want {
			t.Errorf("Target(%q) = %q, want %q", c.rel, got, c.want)
		}
	}
}

func TestAbsolute(t *testing.T) {
	for _, c := range []struct{ in, want, why string }{
		{"file:/flink/chk-1/abc", "file:///flink/chk-1/abc", ""},
		{"file:///flink/chk-1/abc", "file:///flink/chk-1/abc", ""},
		{"/flink/chk-1/abc", "file:///flink/chk-1/abc", ""},
		{"s3://bucket/job/shared/abc", "s3://bucket/job/shared/abc", ""},
		{"s3a://bucket/job/shared/abc", "s3://bucket/job/shared/abc", ""},
		{"s3p://bucket/job/shared/abc", "s3://bucket/job/shared/abc", ""},
		{"gs://bucket/job/abc", "gs://bucket/job/abc", ""},
		{"abfss://ckpt@acct.dfs.core.windows.net/job/abc", "azblob://ckpt/job/abc", ""},
		{"wasbs://ckpt@acct.blob.core.windows.net/job/abc", "azblob://ckpt/job/abc", ""},
		{"hdfs://namenode:8020/flink/abc", "", "no driver for hdfs://"},
		{"relative/abc", "", "neither a URI nor an absolute path"},
	} {
		got, why := Absolute(c.in)
		if got != c.want || (c.why == "") != (why == "") || !strings.Contains(why, c.why) {
			t.Errorf("Absolute(%q) = %q, %q; want %q, %q", c.in, got, why, c.want, c.why)
		}
	}
}

// withHandles is a format-3 file with one operator whose subtask i holds handles[i] as its
// managed operator state stream.
func withHandles(t *testing.T, handles ...checkpoint.StreamStateHandle) []byte {
	t.Helper()
	op := checkpoint.OperatorState{ID: checkpoint.OperatorIDFromUID("files"), Parallelism: int32(len(handles)), MaxParallelism: 128}
	for i, h := range handles {
		op.Subtasks = append(op.Subtasks, checkpoint.SubtaskEntry{Index: int32(i), State: &checkpoint.SubtaskState{
			ManagedOperatorState: checkpoint.OperatorStateSlot{Present: 1, Handle: &checkpoint.OperatorStateHandle{
				Tag: checkpoint.TagPartitionableOperatorStateHandle, Delegate: h,
				States: []checkpoint.StateEntry{{Name: "s", Mode: checkpoint.SplitDistribute, Offsets: []int64{0}}}}},
		}})
	}
	var b bytes.Buffer
	if err := checkpoint.Write(&b, &checkpoint.Metadata{Version: 3, CheckpointID: 7, Operators: []checkpoint.OperatorState{op}}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func writeFile(t *testing.T, p string, size int) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestVerifyLocal verifies every kind of handle against a local folder, one outcome per file.
func TestVerifyLocal(t *testing.T) {
	root := t.TempDir()
	job := filepath.Join(root, "job")
	sp := filepath.Join(job, "chk-7")
	outside := filepath.Join(root, "elsewhere")
	writeFile(t, filepath.Join(sp, "ok"), 100)
	writeFile(t, filepath.Join(sp, "short"), 50)
	writeFile(t, filepath.Join(job, "shared", "sst-1"), 4096)
	writeFile(t, filepath.Join(job, "taskowned", "merged"), 300)
	writeFile(t, filepath.Join(outside, "x"), 10)
	meta := withHandles(t,
		&checkpoint.RelativeFileStateHandle{RelativePath: "ok", StateSize: 100},
		&checkpoint.RelativeFileStateHandle{RelativePath: "short", StateSize: 60},
		&checkpoint.RelativeFileStateHandle{RelativePath: "gone", StateSize: 60},
		&checkpoint.FileStateHandle{Path: "file:" + filepath.Join(job, "shared", "sst-1"), StateSize: 4096},
		&checkpoint.SegmentFileStateHandle{PhysicalPath: "file:" + filepath.Join(job, "taskowned", "merged"), StartPos: 0, StateSize: 200, LogicalFileID: "a"},
		&checkpoint.SegmentFileStateHandle{PhysicalPath: "file:" + filepath.Join(job, "taskowned", "merged"), StartPos: 200, StateSize: 100, LogicalFileID: "b"},
		&checkpoint.FileStateHandle{Path: "file:" + filepath.Join(outside, "x"), StateSize: 10},
		&checkpoint.FileStateHandle{Path: "hdfs://nn/flink/x", StateSize: 10},
		&checkpoint.ByteStreamStateHandle{Name: "inline", Data: []byte{1, 2, 3}},
	)
	writeFile(t, filepath.Join(sp, "_metadata"), 0)
	if err := os.WriteFile(filepath.Join(sp, "_metadata"), meta, 0o644); err != nil {
		t.Fatal(err)
	}
	res := checkFiles(t, localOpener(t, job), sp)
	want := map[string]pb.FileProblemKind{
		"file://" + filepath.Join(sp, "ok"):                   pb.FileProblemKind_FILE_PROBLEM_KIND_UNSPECIFIED,
		"file://" + filepath.Join(sp, "short"):                pb.FileProblemKind_FILE_PROBLEM_KIND_WRONG_SIZE,
		"file://" + filepath.Join(sp, "gone"):                 pb.FileProblemKind_FILE_PROBLEM_KIND_MISSING,
		"file://" + filepath.Join(job, "shared", "sst-1"):     pb.FileProblemKind_FILE_PROBLEM_KIND_UNSPECIFIED,
		"file://" + filepath.Join(job, "taskowned", "merged"): pb.FileProblemKind_FILE_PROBLEM_KIND_UNSPECIFIED,
		"file://" + filepath.Join(outside, "x"):               pb.FileProblemKind_FILE_PROBLEM_KIND_CANNOT_VERIFY,
		"":                                                    pb.FileProblemKind_FILE_PROBLEM_KIND_CANNOT_VERIFY, // hdfs://
	}
	if len(res.Files) != len(want) {
		t.Fatalf("%d files listed, want %d: %+v", len(res.Files), len(want), res.Files)
	}
	for i, f := range res.Files {
		k, ok := want[f.URI]
		if !ok || res.Outcomes[i].Kind != k || !res.Outcomes[i].Checked {
			t.Errorf("%s (%s): outcome %+v, want %v", f.URI, f.Recorded, res.Outcomes[i], k)
		}
	}
	sum := res.Summary()
	if sum.GetSummary() != "2 of 7 files missing or wrong (3 verified, 2 cannot be verified)" {
		t.Errorf("summary %q", sum.GetSummary())
	}
	rep := &pb.RescaleReport{Verdict: pb.Verdict_VERDICT_ALLOW}
	res.Apply(rep, pb.Severity_SEVERITY_UNSPECIFIED)
	if rep.GetVerdict() != pb.Verdict_VERDICT_DENY {
		t.Errorf("verdict %v, want DENY", rep.GetVerdict())
	}
	var ids []string
	for _, f := range rep.GetFindings() {
		ids = append(ids, f.GetRuleId()+" "+f.GetSeverity().String())
	}
	if strings.Join(ids, ",") != "PF210 SEVERITY_ERROR,PF210 SEVERITY_ERROR,PF211 SEVERITY_WARNING,PF211 SEVERITY_WARNING" {
		t.Errorf("findings %v", ids)
	}
	for _, f := range rep.GetFindings() {
		t.Log(f.GetMessage())
	}
}

// TestFindingsAggregate: one finding per kind, the first five files named, the rest counted.
func TestFindingsAggregate(t *testing.T) {
	for _, c := range []struct {
		name           string
		missing, total int
		wantMsg        string
		wantSummary    string
	}{
		{"one", 1, 10, "1 of 10 state files the checkpoint references is missing: `f00`.", "1 of 10 files missing or wrong (9 verified)"},
		{"six names all", 6, 10, "`f00`, `f01`, `f02`, `f03`, `f04` and `f05`.", "6 of 10 files missing or wrong (4 verified)"},
		{"many", 3000, 10000, "`f00`, `f01`, `f02`, `f03`, `f04` and 2,995 more.", "3,000 of 10,000 files missing or wrong (7,000 verified)"},
		{"none", 0, 10000, "", "10,000 files verified"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &Result{Files: make([]File, c.total), Outcomes: make([]Outcome, c.total)}
			for i := range r.Files {
				r.Files[i] = File{URI: "f" + pad(i), Size: 1, MinSize: 1}
				r.Outcomes[i] = Outcome{Checked: true, Actual: 1}
				if i < c.missing {
					r.Outcomes[i].Kind = pb.FileProblemKind_FILE_PROBLEM_KIND_MISSING
				}
			}
			fs := r.Findings()
			if (c.missing > 0) != (len(fs) == 1) || (len(fs) == 1 && !strings.Contains(fs[0].GetMessage(), c.wantMsg)) {
				t.Errorf("findings %v, want one containing %q", fs, c.wantMsg)
			}
			if s := r.Summary().GetSummary(); s != c.wantSummary {
				t.Errorf("summary %q, want %q", s, c.wantSummary)
			}
		})
	}
}

func pad(i int) string {
	s := "0" + itoa(i)
	return s[len(s)-max(2, len(itoa(i))):]
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// TestBudget: with the budget spent, Verify returns at once and counts what it did not verify.
func TestBudget(t *testing.T) {
	files := make([]File, 100)
	for i := range files {
		files[i] = File{URI: "s3://b/" + itoa(i), Size: -1}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := Verify(ctx, blockingStatter{}, files, 4)
	sum := res.Summary()
	if sum.GetNotVerified() != 100 || !strings.Contains(sum.GetSummary(), "100 not verified") {
		t.Errorf("summary %+v", sum)
	}
	fs := res.Findings()
	if len(fs) != 1 || fs[0].GetRuleId() != UnverifiedRuleID || fs[0].GetSeverity() != pb.Severity_SEVERITY_WARNING {
		t.Errorf("findings %v", fs)
	}
	// A budget that runs out while stats hang: they end with the context.
	ctx, cancel = context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	res = Verify(ctx, blockingStatter{}, files, 4)
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("Verify took %v past its budget", el)
	}
	if n := res.Summary().GetNotVerified(); n != 100 {
		t.Errorf("%d not verified, want 100", n)
	}
}

type blockingStatter struct{}

func (blockingStatter) StatFile(ctx context.Context, uri string) (source.ObjectAttrs, error) {
	<-ctx.Done()
	return source.ObjectAttrs{}, ctx.Err()
}

func (blockingStatter) Identity(context.Context, string) string { return "" }

// TestSyntheticFolder: the scenarios' savepoint folder verifies clean, then names what was
// deleted and truncated.
func TestSyntheticFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "savepoint-1")
	names, err := scenarios.WriteSyntheticFolder(dir, scenarios.SyntheticOperators(50))
	if err != nil {
		t.Fatal(err)
	}
	o := localOpener(t, filepath.Dir(dir))
	res := checkFiles(t, o, dir)
	if s := res.Summary().GetSummary(); s != "50 files verified" || len(res.Findings()) != 0 {
		t.Fatalf("intact folder: %q, %v", s, res.Findings())
	}
	os.Remove(filepath.Join(dir, names[3]))
	if err := os.Truncate(filepath.Join(dir, names[7]), 1); err != nil {
		t.Fatal(err)
	}
	res = checkFiles(t, o, dir)
	sum := res.Summary()
	if sum.GetSummary() != "2 of 50 files missing or wrong (48 verified)" || sum.GetMissing() != 1 || sum.GetWrongSize() != 1 {
		t.Fatalf("summary %+v", sum)
	}
	for _, p := range sum.GetProblems() {
		if !strings.HasSuffix(p.GetUri(), names[3]) && !strings.HasSuffix(p.GetUri(), names[7]) {
			t.Errorf("problem with an intact file: %+v", p)
		}
	}
}

// localOpener opens the local files under allow; it is closed when the test ends.
func localOpener(t *testing.T, allow string) *source.Opener {
	t.Helper()
	o, err := source.New(source.Config{Allow: []string{allow}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	return o
}

// checkFiles verifies the state files of the snapshot at uri within a minute.
func checkFiles(t *testing.T, o *source.Opener, uri string) *Result {
	t.Helper()
	res, err := Check(context.Background(), o, uri, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// fakeStatter answers every stat with err (or size when err is nil).
type fakeStatter struct {
	err  error
	size int64
}

func (f fakeStatter) StatFile(context.Context, string) (source.ObjectAttrs, error) {
	return source.ObjectAttrs{Size: f.size}, f.err
}

func (fakeStatter) Identity(context.Context, string) string {
	return "AWS access key AKIAEXAMPLE (from EnvConfigCredentials)"
}

// TestCheckOutcomes: each error kind of package source becomes its outcome.
func TestCheckOutcomes(t *testing.T) {
	for _, c := range []struct {
		name   string
		st     fakeStatter
		file   File
		want   pb.FileProblemKind
		detail string
	}{
		{"found", fakeStatter{size: 10}, File{URI: "s3://b/k", Size: 10, MinSize: 10}, pb.FileProblemKind_FILE_PROBLEM_KIND_UNSPECIFIED, ""},
		{"segment end inside", fakeStatter{size: 10}, File{URI: "s3://b/k", Size: -1, MinSize: 8}, pb.FileProblemKind_FILE_PROBLEM_KIND_UNSPECIFIED, ""},
		{"segment end past", fakeStatter{size: 10}, File{URI: "s3://b/k", Size: -1, MinSize: 12}, pb.FileProblemKind_FILE_PROBLEM_KIND_WRONG_SIZE, ""},
		{"longer than recorded", fakeStatter{size: 11}, File{URI: "s3://b/k", Size: 10, MinSize: 10}, pb.FileProblemKind_FILE_PROBLEM_KIND_WRONG_SIZE, ""},
		{"missing", fakeStatter{err: source.ErrNotFound}, File{URI: "s3://b/k", Size: 10}, pb.FileProblemKind_FILE_PROBLEM_KIND_MISSING, "no such file"},
		{"refused", fakeStatter{err: &source.Error{Kind: source.PermissionDenied, Msg: "refused by the object store"}}, File{URI: "s3://b/k"},
			pb.FileProblemKind_FILE_PROBLEM_KIND_PERMISSION_DENIED, "refused by the object store for AWS access key AKIAEXAMPLE"},
		{"outside", fakeStatter{err: &source.Error{Kind: source.PermissionDenied, Msg: "outside the allowlist"}}, File{URI: "s3://b/k"},
			pb.FileProblemKind_FILE_PROBLEM_KIND_CANNOT_VERIFY, "outside the allowlist"},
		{"no driver", fakeStatter{err: &source.Error{Kind: source.Invalid, Msg: "unsupported scheme"}}, File{URI: "x://b/k"},
			pb.FileProblemKind_FILE_PROBLEM_KIND_CANNOT_VERIFY, "unsupported scheme"},
		{"store down", fakeStatter{err: &source.Error{Kind: source.Unavailable, Msg: "object store b unreachable"}}, File{URI: "s3://b/k"},
			pb.FileProblemKind_FILE_PROBLEM_KIND_UNAVAILABLE, "unreachable"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := check(context.Background(), c.st, &c.file)
			if o.Kind != c.want || !o.Checked || !strings.Contains(o.Detail, c.detail) {
				t.Errorf("outcome %+v, want %v with %q", o, c.want, c.detail)
			}
		})
	}
}

// TestListBound: past the bound, references are counted, not held, and reported.
func TestListBound(t *testing.T) {
	var handles []checkpoint.StreamStateHandle
	for i := range 10 {
		handles = append(handles, &checkpoint.RelativeFileStateHandle{RelativePath: "f" + itoa(i), StateSize: 1})
	}
	meta := withHandles(t, handles...)
	files, skipped, err := list(context.Background(), bytes.NewReader(meta), 0, "/sp/_metadata", 4)
	if err != nil || len(files) != 4 || skipped != 6 {
		t.Fatalf("list: %d files, %d skipped, %v; want 4 and 6", len(files), skipped, err)
	}
	r := &Result{Files: files, Outcomes: make([]Outcome, 4), Skipped: skipped}
	for i := range r.Outcomes {
		r.Outcomes[i] = Outcome{Checked: true, Actual: 1}
	}
	if s := r.Summary().GetSummary(); s != "4 of 10 files verified (6 not verified)" {
		t.Errorf("summary %q", s)
	}
	if fs := r.Findings(); len(fs) != 1 || fs[0].GetRuleId() != UnverifiedRuleID || !strings.Contains(fs[0].GetMessage(), "6 references") {
		t.Errorf("findings %v", fs)
	}
}
