package scenarios

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

// The committed series must be what the generator produces, and must grow ×parallelism.
func TestSeriesCommittedAndGrowing(t *testing.T) {
	var prevUnion int64
	for _, p := range KafkaOrphanUnionSeries() {
		var want bytes.Buffer
		if err := checkpoint.Write(&want, p.Build()); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join("..", "..", "testdata", SeriesDir, p.Folder, "_metadata"))
		if err != nil || !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("testdata/%s/%s/_metadata is missing or stale (%v): run go run ./internal/scenarios/cmd/genexamples -force", SeriesDir, p.Folder, err)
		}
		l, err := checkpoint.ReadLayout(bytes.NewReader(got))
		if err != nil {
			t.Fatal(err)
		}
		if l.CheckpointID != p.CheckpointID {
			t.Errorf("%s: checkpoint %d, want %d", p.Folder, l.CheckpointID, p.CheckpointID)
		}
		var union int64
		for _, st := range l.Operators[0].Subtasks {
			for _, e := range st.ManagedOperatorState.States {
				if e.Name == "topic-partition-offset-states" {
					union += e.Elements
				}
			}
		}
		if prevUnion > 0 && union != prevUnion*kafkaParallelism {
			t.Errorf("%s: union %d elements, want %d×%d", p.Folder, union, prevUnion, kafkaParallelism)
		}
		prevUnion = union
	}
}
