package findings

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/checkpoint/checkpointtest"
	corpustest "github.com/flinkpreflight/preflight/internal/corpus"
	"github.com/flinkpreflight/preflight/internal/rescale"
)

// checkBySession checks plan range by range, size vertices a range.
func checkBySession(l *checkpoint.Layout, plan rescale.Plan, cat *Catalog, opts Options, size int) (Report, error) {
	ctx := context.Background()
	s, err := NewSession(ctx, l, plan, cat, opts)
	if err != nil {
		return Report{}, err
	}
	n := s.Resimulator().NumVertices()
	for from := 0; from < n && s.NeedsPayloadPass(); from += size {
		if err := s.PayloadPass(ctx, from, min(from+size, n)); err != nil {
			return Report{}, err
		}
	}
	var fs []Finding
	for from := 0; from < n; from += size {
		_, rfs, err := s.Vertices(ctx, from, min(from+size, n))
		if err != nil {
			return Report{}, err
		}
		fs = append(fs, rfs...)
	}
	rep, err := s.Finish(ctx)
	rep.Findings = append(fs, rep.Findings...)
	sortFindings(rep.Findings)
	return rep, err
}

// sameAsCheck fails t unless every range size gives CheckContext's report on the whole Result.
func sameAsCheck(t *testing.T, label string, l *checkpoint.Layout, plan rescale.Plan, opts Options) bool {
	t.Helper()
	whole := plan
	if opts.AllowNonRestoredState {
		whole.AllowNonRestoredState = true
	}
	res, err := rescale.Simulate(l, whole)
	if err != nil {
		var pe *rescale.PlanError
		if !errors.As(err, &pe) {
			t.Errorf("%s: Simulate: %v", label, err)
		}
		return false
	}
	want, err := CheckContext(context.Background(), l, plan, res, nil, opts)
	if err != nil {
		t.Fatalf("%s: %v", label, err)
	}
	for _, size := range []int{1, 3, 1 << 30} {
		got, err := checkBySession(l, plan, nil, opts, size)
		if err != nil {
			t.Fatalf("%s, ranges of %d: %v", label, size, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s, ranges of %d:\nby range\n%s\nwhole\n%s", label, size, dump(got), dump(want))
		}
	}
	return true
}

// TestSessionMatchesCheck: on random jobs, plans and options, a check range by range gives the
// whole check's findings, verdict and nearest safe parallelisms, for every range size.
func TestSessionMatchesCheck(t *testing.T) {
	rng := rand.New(rand.NewPCG(propSeed, 23))
	names := []namedState{
		{"expired-files", checkpoint.SplitDistribute}, {"SourceReaderState", checkpoint.SplitDistribute},
		{"topic-partition-offset-states", checkpoint.Union}, {"my-list", checkpoint.SplitDistribute},
		{"next-transactional-id-hint-v2", checkpoint.Union}, {"u", checkpoint.Union},
	}
	iterations := 3 * propIterations
	if testing.Short() {
		iterations = 60
	}
	compared, denied, withSafe, chained, jobManager := 0, 0, 0, 0, 0
	for it := 0; it < iterations; it++ {
		ops := randomOps{maxOps: 6, maxP: 6, maxPs: []int{1, 8, 128}, coordOneIn: 2, stateOneIn: 4, maxElements: 3, maxSize: 64}.draw(rng, names)
		l := layoutOf(t, []int32{3, 5}[rng.IntN(2)], ops...)
		plan := rescale.Plan{Parallelism: map[string]int{}, MaxParallelism: map[string]rescale.MaxParallelism{}}
		for _, op := range ops {
			switch rng.IntN(3) {
			case 0:
				plan.Parallelism[op.uid] = 1 + rng.IntN(12)
			case 1:
				if rng.IntN(4) == 0 {
					plan.MaxParallelism[op.uid] = rescale.MaxParallelism{Value: []int{8, 16, 128}[rng.IntN(3)], Configured: true}
				}
			}
		}
		if len(ops) > 2 && rng.IntN(3) == 0 {
			plan.NewJobOperators = []string{ops[0].uid, ops[1].uid}
			for k := range plan.Parallelism {
				if k != ops[0].uid && k != ops[1].uid {
					delete(plan.Parallelism, k)
				}
			}
			clear(plan.MaxParallelism)
		}
		if len(ops) > 3 && rng.IntN(3) == 0 && plan.NewJobOperators == nil {
			// A chain: the two operators share a vertex (and its parallelism).
			plan.Vertices = []rescale.VertexSpec{{Operators: []string{ops[2].uid, ops[3].uid}}}
			delete(plan.Parallelism, ops[3].uid)
			delete(plan.MaxParallelism, ops[3].uid)
		}
		if rng.IntN(4) == 0 {
			plan.Restore = rescale.RestoreLatestCheckpoint
		}
		opts := Options{
			RPCFrameSize:          []int64{0, 1 << 10, 4 << 10}[rng.IntN(3)],
			FailLevel:             []Severity{Error, Warning}[rng.IntN(2)],
			FlinkVersion:          []string{"", "1.17.2", "1.18.0", "1.20.1", "9.1"}[rng.IntN(5)],
			AllowNonRestoredState: rng.IntN(3) == 0,
			JobManagerMemory:      []int64{0, 0, 256, 2 << 10, 16 << 10}[rng.IntN(5)],
		}
		label := fmt.Sprintf("it %d", it)
		if !sameAsCheck(t, label, l, plan, opts) {
			continue
		}
		compared++
		if len(plan.Vertices) > 0 {
			chained++
		}
		rep, _ := checkBySession(l, plan, nil, opts, 1)
		if rep.Verdict == Deny {
			denied++
		}
		if len(rep.Safe) > 0 {
			withSafe++
		}
		if slices.ContainsFunc(rep.Findings, func(f Finding) bool { return f.RuleID == "PF121" }) {
			jobManager++
		}
	}
	t.Logf("%d checks compared, %d denied, %d with a safe-parallelism search, %d with a chain, %d with a JobManager-memory finding", compared, denied, withSafe, chained, jobManager)
	if compared < iterations/2 || denied < compared/10 || withSafe < compared/10 || chained < compared/20 || jobManager < compared/20 {
		t.Errorf("too few cases: %d compared, %d denied, %d with safe entries", compared, denied, withSafe)
	}
}

// TestSessionMatchesCheckOnCorpus: the same on every real file of the corpus, at its stored
// parallelism, at 1 and at twice the stored parallelism. It skips when the corpus is absent.
func TestSessionMatchesCheckOnCorpus(t *testing.T) {
	files := corpustest.Metadata(t)
	if testing.Short() && len(files) > 60 {
		files = files[:60]
	}
	compared := 0
	for rel, l := range checkpointtest.Decodable(files) {
		twice := map[string]int{}
		for _, op := range l.Operators {
			if op.Parallelism > 0 {
				twice[op.ID.String()] = min(2*op.Parallelism, rescale.UpperBoundMaxParallelism)
			}
		}
		for _, plan := range []rescale.Plan{{}, {DefaultParallelism: 1}, {Parallelism: twice}} {
			for _, jm := range []int64{0, 64 << 10} {
				if sameAsCheck(t, rel, l, plan, Options{RPCFrameSize: 64 << 10, FlinkVersion: "1.18.0", JobManagerMemory: jm}) {
					compared++
				}
			}
		}
	}
	t.Logf("%d corpus checks compared", compared)
}

// TestJobWideRulesMarked: a rule that reports something on a Result without vertices, failures
// or non-restored operators judges the checkpoint or the options as a whole, and must be
// jobWide; otherwise a Session would report it once per range.
func TestJobWideRulesMarked(t *testing.T) {
	layouts := []*checkpoint.Layout{testdataLayout(t, "compact-sink"), testdataLayout(t, "kafka-orphan-union"), {Version: 1}, {Version: 4}}
	for _, l := range layouts {
		for _, opts := range []Options{{}, {FlinkVersion: "1.9.0"}, {FlinkVersion: "99.0"}, {FlinkVersion: "1.18.0", JobManagerMemory: 1}} {
			c := newContext(l, rescale.Plan{}, &rescale.Result{}, nil, opts, nil)
			for _, r := range Rules() {
				if r.jobWide {
					continue
				}
				if fs := r.Check(c); len(fs) > 0 {
					t.Errorf("%s reports %d findings without vertices (format %d, %+v): mark it jobWide", r.Meta().ID, len(fs), l.Version, opts)
				}
			}
		}
	}
	// The check can fail: the format rule reports a format-1 file without vertices.
	if fs := checkFormatVersion(newContext(&checkpoint.Layout{Version: 1}, rescale.Plan{}, &rescale.Result{}, nil, Options{}, nil)); len(fs) == 0 {
		t.Error("the format rule reports nothing for a format-1 file")
	}
}

// TestJobWideRulesNameNoVertex: a jobWide rule judges the checkpoint or the options as a whole,
// so none of its findings names a vertex or an operator, even with every vertex simulated; the
// tests of single vertices (vertexDenials: the safe-parallelism search, VertexProbe) skip these
// rules for that reason. Each of them fires on some input here, so the test can fail.
func TestJobWideRulesNameNoVertex(t *testing.T) {
	layouts := []*checkpoint.Layout{testdataLayout(t, "compact-sink"), testdataLayout(t, "kafka-orphan-union"), changelogLayout(t, 14),
		{Version: 1}, {Version: 2}, {Version: 4}}
	fired := map[string]bool{}
	for _, l := range layouts {
		res, err := rescale.Simulate(l, rescale.Plan{DefaultParallelism: 2})
		if err != nil {
			t.Fatal(err)
		}
		for _, opts := range []Options{{}, {FlinkVersion: "1.7.0"}, {FlinkVersion: "99.0"}, {FlinkVersion: "1.20.1", RestoreMode: RestoreNoClaim},
			{FlinkVersion: "2.0.0"}} {
			c := newContext(l, rescale.Plan{DefaultParallelism: 2}, res, nil, opts, nil)
			for _, r := range Rules() {
				if !r.jobWide {
					continue
				}
				for _, f := range r.Check(c) {
					fired[r.Meta().ID] = true
					if f.VertexID != "" || f.OperatorID != "" {
						t.Errorf("%s names vertex %q, operator %q (format %d, %+v)", r.Meta().ID, f.VertexID, f.OperatorID, l.Version, opts)
					}
				}
			}
		}
	}
	for _, r := range Rules() {
		if r.jobWide && !fired[r.Meta().ID] {
			t.Errorf("%s never fired: give it an input that makes it", r.Meta().ID)
		}
	}
}

// TestPayloadPass: with the JobManager-memory rule on (and not disabled), a Session needs its
// payload pass over every vertex, in order, before it checks a range or finishes.
func TestPayloadPass(t *testing.T) {
	ctx := context.Background()
	l := testdataLayout(t, "kafka-orphan-union")
	for _, tc := range []struct {
		opts Options
		want bool
	}{
		{Options{}, false},
		{Options{JobManagerMemory: 1 << 30}, true},
		{Options{JobManagerMemory: 1 << 30, Disabled: []string{" pf121 "}}, false},
	} {
		s, err := NewSession(ctx, l, rescale.Plan{}, nil, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.NeedsPayloadPass(); got != tc.want {
			t.Errorf("NeedsPayloadPass(%+v) = %v", tc.opts, got)
		}
		n := s.Resimulator().NumVertices()
		if !tc.want {
			if err := s.PayloadPass(ctx, 0, n); err == nil {
				t.Errorf("%+v: PayloadPass without the rule: no error", tc.opts)
			}
			continue
		}
		if _, _, err := s.Vertices(ctx, 0, n); err == nil {
			t.Errorf("%+v: Vertices before the payload pass: no error", tc.opts)
		}
		if _, err := s.Finish(ctx); err == nil {
			t.Errorf("%+v: Finish before the payload pass: no error", tc.opts)
		}
		if err := s.PayloadPass(ctx, 1, n); err == nil && n > 1 {
			t.Errorf("%+v: PayloadPass not from vertex 0: no error", tc.opts)
		}
		if err := s.PayloadPass(ctx, 0, n); err != nil || s.NeedsPayloadPass() {
			t.Fatalf("%+v: PayloadPass(0, %d) = %v, still needed %v", tc.opts, n, err, s.NeedsPayloadPass())
		}
		if _, _, err := s.Vertices(ctx, 0, n); err != nil {
			t.Errorf("%+v: Vertices after the payload pass: %v", tc.opts, err)
		}
	}
}
