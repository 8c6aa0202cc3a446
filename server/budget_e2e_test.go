package server

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

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
