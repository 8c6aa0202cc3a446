package engine

import (
	"testing"

	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"

	"github.com/flinkpreflight/preflight/internal/rescale"
)

// TestHandleMapsByFlinkVersion: clusters before 1.18 read handle name maps with new HashMap<>(n).
func TestHandleMapsByFlinkVersion(t *testing.T) {
	for v, want := range map[string]rescale.HandleMapSizing{
		"": rescale.HandleMapExpectedSize, "1.17.2": rescale.HandleMapCapacityN, "1.12": rescale.HandleMapCapacityN,
		"1.18.0": rescale.HandleMapExpectedSize, "1.20.1": rescale.HandleMapExpectedSize, "2.0": rescale.HandleMapExpectedSize,
		"abc": rescale.HandleMapExpectedSize,
	} {
		if got := toRescalePlan(&pb.RescalePlan{}, &pb.CheckOptions{FlinkVersion: v}).HandleMaps; got != want {
			t.Errorf("flink version %q: %d, want %d", v, got, want)
		}
	}
}
