package engine

import (
	"bytes"
	"context"
	"io"
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/flinkpreflight/preflight/internal/report"
	"github.com/flinkpreflight/preflight/internal/scenarios"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// BenchmarkManyStates runs what `preflight check FILE -p P [-o json]` runs in-process on one
// operator, one subtask and N SPLIT_DISTRIBUTE list states of two elements each (issue 29):
// -p 4 leaves two new subtasks without an element of every state (PF170 for each), -p 2 at
// 300k names exceeds the RPC frame size, so the nearest-safe search runs. It reports the
// file size, the peak heap during the check and the report's line count.
//
//	go test ./internal/engine -run '^$' -bench ManyStates -benchtime 1x
func BenchmarkManyStates(b *testing.B) {
	cases := []struct {
		names int
		p     int32
		json  bool
	}{
		{30_000, 4, false},
		{30_000, 4, true},
		{30_000, 2, false},
		{300_000, 4, false},
		{300_000, 4, true},
		{300_000, 2, false},
	}
	for _, c := range cases {
		name := "names-" + strconv.Itoa(c.names/1000) + "k/p" + strconv.Itoa(int(c.p))
		if c.json {
			name += "/json"
		}
		b.Run(name, func(b *testing.B) {
			path := scaleFile(b, "names-"+strconv.Itoa(c.names), scenarios.Synthetic{Operators: 1, Parallelism: 1, Split: c.names, Elements: 2})
			st, err := os.Stat(path)
			if err != nil {
				b.Fatal(err)
			}
			eng := New()
			plan := &pb.RescalePlan{DefaultParallelism: c.p}
			var peak uint64
			var lines int
			b.ResetTimer()
			for range b.N {
				runtime.GC()
				stop := peakHeap()
				var out countingWriter
				if err := checkFile(eng, path, plan, c.json, &out); err != nil {
					b.Fatal(err)
				}
				peak = max(peak, stop())
				lines = out.lines
			}
			b.StopTimer()
			mib := func(v float64) float64 { return v / (1 << 20) }
			b.ReportMetric(mib(float64(st.Size())), "file-MiB")
			b.ReportMetric(mib(float64(peak)), "peak-heap-MiB")
			b.ReportMetric(64+4*mib(float64(st.Size())), "bound-MiB")
			b.ReportMetric(float64(lines), "report-lines")
		})
	}
}

// checkFile is the CLI's in-process check: the streaming text report, or the whole report as JSON.
func checkFile(eng *Engine, path string, plan *pb.RescalePlan, asJSON bool, w io.Writer) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	in := Input{Reader: f, Source: path}
	if asJSON {
		rep, err := eng.Check(context.Background(), in, plan, &pb.CheckOptions{})
		if err != nil {
			return err
		}
		return report.WriteJSON(w, rep)
	}
	var table report.OperatorTable
	rep, err := eng.CheckStream(context.Background(), in, plan, &pb.CheckOptions{}, table.Add)
	if err != nil {
		return err
	}
	return report.WriteTextTable(w, rep, &table)
}

// countingWriter counts the lines written to it and drops the bytes.
type countingWriter struct{ lines int }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.lines += bytes.Count(p, []byte{'\n'})
	return len(p), nil
}
