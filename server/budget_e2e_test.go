package server

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/flinkpreflight/preflight/internal/checkpoint/checkpointtest"
	"github.com/flinkpreflight/preflight/internal/flinkrest/flinkresttest"
	"github.com/flinkpreflight/preflight/internal/memmodel"
	"github.com/flinkpreflight/preflight/internal/scenarios"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// TestE2EMemoryBudgetConcurrent (PREFLIGHT_BIG=1; issue #29) uploads the 100k-operator file
// four times at once to a real preflightd with --memory-budget 512MiB: each upload is answered
// with a report or RESOURCE_EXHAUSTED naming the budget, at least one with a report, and the
// daemon's peak RSS stays within the budget plus 96 MiB (its own baseline and the collector's
// lag). The figures go to bench/README.md.
func TestE2EMemoryBudgetConcurrent(t *testing.T) {
	if os.Getenv("PREFLIGHT_BIG") != "1" {
		t.Skip("set PREFLIGHT_BIG=1 to upload the 100k-operator file four times at once (about a minute)")
	}
	const budget = 512 << 20
	path := filepath.Join(t.TempDir(), "_metadata")
	size := writeSynthetic(t, path, scenarios.SyntheticOperators(100_000))

	d := startDaemon(t, "--memory-budget=512MiB", "--cache-entries=-1", "--queue-wait=2m")
	c := d.client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, 4)
	start := time.Now()
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = c.CheckFile(ctx, path, &pb.RescalePlan{DefaultParallelism: 2}, nil, nil)
		})
	}
	wg.Wait()
	ok := 0
	for i, err := range errs {
		switch {
		case err == nil:
			ok++
		case status.Code(err) == codes.ResourceExhausted && strings.Contains(err.Error(), "512.0 MiB"):
			t.Logf("upload %d: %v", i, err)
		default:
			t.Errorf("upload %d: %v, want a report or RESOURCE_EXHAUSTED naming the 512 MiB budget", i, err)
		}
	}
	peak := procStatus(t, d, "VmHWM") << 10
	t.Logf("4 uploads of %.1f MiB: %d answered with a report in %v; daemon peak RSS %d MiB (budget 512 MiB + 96 MiB = 608 MiB)",
		float64(size)/(1<<20), ok, time.Since(start).Round(time.Millisecond), peak>>20)
	if ok == 0 {
		t.Error("no upload was answered with a report")
	}
	if peak > budget+96<<20 {
		t.Errorf("daemon peak RSS %d MiB, over the budget + 96 MiB", peak>>20)
	}
}

// TestE2EUnionSubtasksDaemonRSS (PREFLIGHT_BIG=1; issue #29): a union operator at parallelism
// 4096 checked at 8192 with every subtask's detail, through a real preflightd at its default
// memory settings, by URI (CheckRescaleStream, what the CLI uses), upload
// (CheckRescaleUploadStream), as a running job's latest checkpoint (a fake Flink REST API) and
// HTTP (/v1/check:stream), a new daemon each: no piece or line
// over 4 MiB, and the daemon's peak RSS within the memory model's bound for the file, 64 MiB + 4
// × its size. The figures go to bench/README.md.
func TestE2EUnionSubtasksDaemonRSS(t *testing.T) {
	if os.Getenv("PREFLIGHT_BIG") != "1" {
		t.Skip("set PREFLIGHT_BIG=1 to check union 4096 → 8192 with every subtask row through four real daemons (about 20 s)")
	}
	if raceEnabled {
		t.Skip("the race detector's shadow memory is not the daemon's")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "_metadata")
	size := writeSynthetic(t, path, scenarios.SyntheticUnion(4096))
	plan, opts := &pb.RescalePlan{DefaultParallelism: 8192}, &pb.CheckOptions{IncludeSubtasks: true}
	bound := memmodel.ProcessBytes(size)
	// A running job whose latest checkpoint is the file, its operator the job's one vertex.
	op := checkpointtest.File(t, path).Operators[0]
	fake := flinkresttest.Start(t, flinkresttest.Job{Version: "2.1", CheckpointPath: "file:" + dir,
		Vertices: []flinkresttest.Vertex{{ID: op.ID.String(), Operators: []string{op.Name}, Parallelism: op.Parallelism, MaxParallelism: op.MaxParallelism}}})
	for _, way := range []struct {
		name  string
		check func(t *testing.T, d *daemon) (pieces, largest int)
	}{
		{"uri", func(t *testing.T, d *daemon) (int, int) {
			var n, largest int
			err := d.client(t).CheckInPieces(context.Background(), &pb.CheckRescaleRequest{
				Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: path}}, Plan: plan, Options: opts},
				func(p *pb.ReportPiece) error { n, largest = n+1, max(largest, proto.Size(p)); return nil })
			if err != nil {
				t.Fatal(err)
			}
			return n, largest
		}},
		{"upload", func(t *testing.T, d *daemon) (int, int) {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var n, largest int
			err = d.client(t).UploadInPieces(context.Background(), f, &pb.UploadHeader{Plan: plan, Options: opts, SizeBytes: size},
				func(p *pb.ReportPiece) error { n, largest = n+1, max(largest, proto.Size(p)); return nil })
			if err != nil {
				t.Fatal(err)
			}
			return n, largest
		}},
		{"job", func(t *testing.T, d *daemon) (int, int) {
			var n, largest int
			err := d.client(t).CheckInPieces(context.Background(), &pb.CheckRescaleRequest{
				Job: &pb.FlinkJob{RestUrl: fake.URL, JobId: flinkresttest.DefaultJobID}, Plan: plan, Options: opts},
				func(p *pb.ReportPiece) error { n, largest = n+1, max(largest, proto.Size(p)); return nil })
			if err != nil {
				t.Fatal(err)
			}
			return n, largest
		}},
		{"http", func(t *testing.T, d *daemon) (int, int) {
			return streamLines(t, "http://"+d.HTTPAddr+"/v1/check:stream", &pb.CheckRescaleRequest{
				Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: path}}, Plan: plan, Options: opts})
		}},
	} {
		t.Run(way.name, func(t *testing.T) {
			d := startDaemon(t, "--allow="+dir, "--allow="+fake.URL)
			pieces, largest := way.check(t, d)
			peak := procStatus(t, d, "VmHWM") << 10
			t.Logf("%s: %d pieces, the largest %d bytes; daemon peak RSS %.1f MiB (bound 64 MiB + 4 × %.2f MiB = %.1f MiB)",
				way.name, pieces, largest, float64(peak)/(1<<20), float64(size)/(1<<20), float64(bound)/(1<<20))
			if largest > 4<<20 {
				t.Errorf("a piece of %d bytes, over 4 MiB", largest)
			}
			if peak > bound {
				t.Errorf("daemon peak RSS %.1f MiB, over the bound %.1f MiB", float64(peak)/(1<<20), float64(bound)/(1<<20))
			}
		})
	}
}

// streamLines posts req to an answer-in-pieces URL and reads its lines to the end, each at most
// 4 MiB, the last one the report: it returns their number and the longest.
func streamLines(t *testing.T, url string, req *pb.CheckRescaleRequest) (lines, longest int) {
	t.Helper()
	body, err := protojson.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var last []byte
	for sc.Scan() {
		lines, longest, last = lines+1, max(longest, len(sc.Bytes())), append(last[:0], sc.Bytes()...)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("after %d lines: %v", lines, err)
	}
	if !bytes.Contains(last, []byte(`"report"`)) {
		t.Fatalf("the last of %d lines is not the report: %.200s", lines, last)
	}
	return lines, longest
}
