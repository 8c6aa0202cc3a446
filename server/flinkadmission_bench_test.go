package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/flinkpreflight/preflight/internal/flinkrest/flinkresttest"
	"github.com/flinkpreflight/preflight/internal/scenarios"
	"github.com/flinkpreflight/preflight/internal/source/s3test"
)

// BenchmarkFlinkAdmissionS3 is issue #27's latency target: a real preflightd with no layout cache
// and no result cache answers AdmissionReviews for a job whose checkpoint is a 10 MB _metadata on
// the S3 test server (the Kafka orphan-union job, discovered through the fake Flink REST), one
// request at a time; it reports p50 and p99 of the whole HTTP round trip. Run with
// -benchtime=50x for the 50 sequential requests.
func BenchmarkFlinkAdmissionS3(b *testing.B) {
	g := s3test.Start(b)
	g.CreateBucket(b, "ckpts")
	var file bytes.Buffer
	if err := scenarios.KafkaOrphanUnion(&file, 10<<20); err != nil {
		b.Fatal(err)
	}
	g.Put(b, "ckpts", "kafka/chk-90211/_metadata", bytes.NewReader(file.Bytes()))
	ops := scenarios.KafkaOrphanUnionMetadata(1).Operators
	var vs []flinkresttest.Vertex
	for _, op := range ops {
		vs = append(vs, flinkresttest.Vertex{ID: op.ID.String(), Operators: []string{op.Name}, Parallelism: int(op.Parallelism), MaxParallelism: int(op.MaxParallelism)})
	}
	fake := flinkresttest.Start(b, flinkresttest.Job{Version: "2.1", Vertices: vs, CheckpointID: 90211, CheckpointPath: "s3://ckpts/kafka/chk-90211"})
	d := startDaemon(b, "--cache-entries=-1", "--no-result-cache", "--allow="+g.BucketURL("ckpts"), "--allow="+fake.URL,
		"--admission-flink-rest="+fake.URL, "--admission-failure-policy=closed")
	obj, err := os.ReadFile(filepath.Join("..", "internal", "admission", "testdata", "deployment-parallelism-4-to-8.json"))
	if err != nil {
		b.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
		"request": map[string]any{"uid": "bench", "operation": "UPDATE", "object": json.RawMessage(obj)}})
	var took []time.Duration
	b.SetBytes(int64(file.Len()))
	for b.Loop() {
		start := time.Now()
		resp, err := http.Post("http://"+d.HTTPAddr+FlinkAdmissionPath, "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		took = append(took, time.Since(start))
		if resp.StatusCode != 200 || !strings.Contains(string(out), "restoring checkpoint 90211") || !strings.Contains(string(out), `"uid":"bench"`) {
			b.Fatalf("%d %s", resp.StatusCode, out)
		}
	}
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	pct := func(p float64) float64 { return float64(took[int(p*float64(len(took)-1))].Microseconds()) / 1000 }
	b.ReportMetric(pct(0.5), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(file.Len())/(1<<20), "metadata-MiB")
}
