package scenarios

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

// SeriesDir is the testdata folder of the Kafka orphan-union series: the savepoints one job took
// before each redeploy while its orphaned union state grew.
const SeriesDir = "kafka-orphan-union-series"

// SeriesPoint is one savepoint of the series.
type SeriesPoint struct {
	Folder       string // savepoint-<job>-<id> under SeriesDir
	CheckpointID int64
	PerSubtask   int64 // union elements each subtask writes
}

// KafkaOrphanUnionSeries is the growth of the Kafka orphan-union job over restores. The legacy
// FlinkKafkaConsumer wrote its 64 partitions' offsets into the UNION state
// topic-partition-offset-states, 16 per subtask at parallelism 4. After the migration to
// KafkaSource under the same uid nothing owns that state, so every restore hands each of the 4
// subtasks all entries (Flink's union redistribution) and each writes them all back: the
// state, and with it _metadata, grows ×4 per restore. One savepoint is taken before each
// redeploy; checkpoint IDs keep counting across restores, as they do when a job restores.
func KafkaOrphanUnionSeries() []SeriesPoint {
	const restores = 5
	var out []SeriesPoint
	per := int64(kafkaPartitions / kafkaParallelism)
	id := int64(1180)
	for i := 0; i < restores; i++ {
		out = append(out, SeriesPoint{Folder: fmt.Sprintf("savepoint-%s-%s", hexOf("kafka/job", 6), hexOf(fmt.Sprintf("kafka/series/%d", id), 12)), CheckpointID: id, PerSubtask: per})
		per *= kafkaParallelism
		id += 263 + int64(i)*41 // checkpoints between redeploys
	}
	return out
}

// Build returns the point's savepoint.
func (p SeriesPoint) Build() *checkpoint.Metadata {
	m := KafkaOrphanUnionMetadata(p.PerSubtask)
	m.CheckpointID = p.CheckpointID
	return m
}

// WriteSeries writes every point of the series to dir/SeriesDir/<folder>/_metadata, with the
// same rules as WriteAll.
func WriteSeries(dir string, overwrite bool) error {
	for _, p := range KafkaOrphanUnionSeries() {
		var b bytes.Buffer
		if err := checkpoint.Write(&b, p.Build()); err != nil {
			return fmt.Errorf("series %s: %w", p.Folder, err)
		}
		path := filepath.Join(dir, SeriesDir, p.Folder, "_metadata")
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, b.Bytes()) {
			continue
		}
		if err := WriteFile(path, overwrite, func(w io.Writer) error { _, err := w.Write(b.Bytes()); return err }); err != nil {
			return err
		}
	}
	return nil
}
