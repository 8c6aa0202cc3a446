package rescale

import (
	"bytes"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

// FuzzSimulate decodes arbitrary bytes as _metadata and simulates the result at an arbitrary
// parallelism: Simulate must not panic on anything the decoder accepts. The example checkpoints
// of internal/scenarios are its committed seeds (testdata/fuzz/FuzzSimulate, written by
// genexamples).
func FuzzSimulate(f *testing.F) {
	f.Add([]byte{0x49, 0x60, 0x67, 0x2d, 0, 0, 0, 3}, uint16(1))
	f.Fuzz(func(t *testing.T, data []byte, p uint16) {
		l, err := checkpoint.ReadLayout(bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, plan := range []Plan{{}, {DefaultParallelism: int(p%512) + 1}, {DefaultParallelism: 1, Restore: RestoreLatestCheckpoint}} {
			r, err := Simulate(l, plan)
			if err != nil {
				continue
			}
			for _, v := range r.Vertices {
				for _, a := range v.Operators {
					a.Subtask(0)
					a.Subtask(a.NewParallelism - 1)
				}
			}
		}
	})
}
