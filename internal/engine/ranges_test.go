package engine

import (
	"context"
	"os"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	corpustest "github.com/flinkpreflight/preflight/internal/corpus"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

func testdataLayouts(t *testing.T) map[string]*checkpoint.Layout {
	out := map[string]*checkpoint.Layout{}
	for _, name := range []string{"compact-sink", "kafka-orphan-union", "max-parallelism"} {
		l, err := checkpoint.ReadLayoutBytes(readTestdata(t, name))
		if err != nil {
			t.Fatal(err)
		}
		out[name] = l
	}
	return out
}

// corpusLayouts are the corpus's decodable files; it skips t when the corpus is absent.
func corpusLayouts(t *testing.T) map[string]*checkpoint.Layout {
	files := corpustest.Metadata(t)
	if testing.Short() && len(files) > 60 {
		files = files[:60]
	}
	out := map[string]*checkpoint.Layout{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if l, err := checkpoint.ReadLayoutBytes(b); err == nil {
			out[f] = l
		}
	}
	return out
}

// TestRangesMatchWholeJob: the report of a check simulated one vertex at a time equals the one
// of a check in one range and the one of the whole-job path (taken when the JobManager-memory
// rule is on; a memory no job reaches keeps the rule silent), in both subtask details.
func TestRangesMatchWholeJob(t *testing.T) { rangesMatchWholeJob(t, testdataLayouts(t)) }

// TestRangesMatchWholeJobOnCorpus is TestRangesMatchWholeJob on the corpus (skipped without it).
func TestRangesMatchWholeJobOnCorpus(t *testing.T) { rangesMatchWholeJob(t, corpusLayouts(t)) }

func rangesMatchWholeJob(t *testing.T, layouts map[string]*checkpoint.Layout) {
	defer func(n int) { rangeOperators = n }(rangeOperators)
	e := New()
	ctx := context.Background()
	compared := 0
	for name, l := range layouts {
		twice := map[string]int32{}
		for _, op := range l.Operators {
			if op.Parallelism > 0 {
				twice[op.ID.String()] = int32(min(2*op.Parallelism, 32768))
			}
		}
		for _, plan := range []*pb.RescalePlan{{}, {DefaultParallelism: 1}, {Parallelism: twice}} {
			for _, detail := range []SubtaskDetail{SubtasksAsAsked, SubtasksForChart} {
				opts := &pb.CheckOptions{IncludeSubtasks: true, RpcFrameSizeBytes: 64 << 10}
				check := func(opts *pb.CheckOptions) *pb.RescaleReport {
					rep, err := e.check(ctx, l, name, plan, opts, detail, nil)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					return rep
				}
				rangeOperators = 1 << 30
				one := check(opts)
				rangeOperators = 1
				byVertex := check(opts)
				rangeOperators = 2048
				wholeOpts := proto.Clone(opts).(*pb.CheckOptions)
				wholeOpts.JobmanagerMemoryBytes = 1 << 62
				whole := check(wholeOpts)
				if !proto.Equal(one, byVertex) || !proto.Equal(one, whole) {
					t.Fatalf("%s, plan %v, detail %d: reports differ\none range: %v\nby vertex: %v\nwhole job: %v", name, plan, detail, one, byVertex, whole)
				}
				compared++
			}
		}
	}
	t.Logf("%d reports compared", compared)
}
