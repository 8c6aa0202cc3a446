package lifecycle

import (
	"bytes"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/checkpoint/checkpointtest"
	"github.com/flinkpreflight/preflight/internal/scenarios"
)

// BenchmarkPruneVerify: decode, prune the orphaned union state, encode and verify a 16 MiB
// _metadata of the Kafka orphan-union scenario (the work of `preflight prune` minus file I/O).
func BenchmarkPruneVerify(b *testing.B) {
	var src bytes.Buffer
	if err := scenarios.KafkaOrphanUnion(&src, 16<<20); err != nil {
		b.Fatal(err)
	}
	in := src.Bytes()
	sel := Selector{Operator: "kafka-source", State: "topic-partition-offset-states"}
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m, err := checkpoint.ReadBytes(in)
		if err != nil {
			b.Fatal(err)
		}
		pruned, plan, err := Prune(m, sel, PruneOptions{})
		if err != nil {
			b.Fatal(err)
		}
		out, err := Encode(pruned)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Verify(m, plan, out); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(in))*float64(b.N)/b.Elapsed().Seconds()/(1<<20), "MB/s")
}

// BenchmarkDiff: the comparison itself on two decoded layouts of the series' largest points.
func BenchmarkDiff(b *testing.B) {
	series := scenarios.KafkaOrphanUnionSeries()
	layout := func(m *checkpoint.Metadata) *checkpoint.Layout { return checkpointtest.Layout(b, m) }
	oldL, newL := layout(series[3].Build()), layout(series[4].Build())
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Diff(oldL, newL, "a", "b", DiffOptions{})
	}
}
