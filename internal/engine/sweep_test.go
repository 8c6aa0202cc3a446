package engine

import (
	"bytes"
	"context"
	"errors"
	"math/rand"
	"os"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	corpustest "github.com/flinkpreflight/preflight/internal/corpus"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// TestCorruptionSweep corrupts real Flink files (truncations, bit flips, overwritten ints) and
// runs the whole pipeline on each: every outcome is a report, a *checkpoint.FormatError with an
// offset, or a plan error; never a panic. CI checks a sample; PREFLIGHT_SWEEP=full checks every
// file of the corpus with more mutations.
func TestCorruptionSweep(t *testing.T) {
	files := corpustest.Metadata(t)
	mutations, stride := 12, 9
	if os.Getenv("PREFLIGHT_SWEEP") == "full" {
		mutations, stride = 60, 1
	}
	if testing.Short() {
		stride *= 4
	}
	rng := rand.New(rand.NewSource(7))
	eng := New()
	var runs, reports, formatErrs, planErrs int
	for i := 0; i < len(files); i += stride {
		orig, err := os.ReadFile(files[i])
		if err != nil {
			t.Fatal(err)
		}
		if len(orig) < 16 {
			continue
		}
		for m := 0; m < mutations; m++ {
			b := mutate(rng, orig)
			for _, p := range []int32{0, 1, 3} {
				runs++
				rep, err := eng.Check(context.Background(), Request{Input: Input{Reader: bytes.NewReader(b), Source: files[i]},
					Plan: &pb.RescalePlan{DefaultParallelism: p}})
				var fe *checkpoint.FormatError
				var pe *PlanError
				switch {
				case err == nil && rep.GetVerdict() != pb.Verdict_VERDICT_UNSPECIFIED:
					reports++
				case errors.As(err, &fe):
					if fe.Offset < 0 || fe.Offset > int64(len(b)) {
						t.Fatalf("%s mutation %d: offset %d outside the file of %d bytes: %v", files[i], m, fe.Offset, len(b), err)
					}
					formatErrs++
				case errors.As(err, &pe):
					planErrs++
				default:
					t.Fatalf("%s mutation %d: unexpected outcome %v (%T), report %v", files[i], m, err, err, rep)
				}
			}
		}
	}
	t.Logf("%d runs on corrupted corpus files: %d reports, %d format errors, %d plan errors", runs, reports, formatErrs, planErrs)
}

// mutate returns a corrupted copy: a truncation, 1-3 bit flips, or an int32 overwritten with a
// boundary value (counts and lengths are where decoders go wrong).
func mutate(rng *rand.Rand, orig []byte) []byte {
	b := bytes.Clone(orig)
	switch rng.Intn(3) {
	case 0:
		return b[:rng.Intn(len(b))]
	case 1:
		for k := 0; k < 1+rng.Intn(3); k++ {
			p := rng.Intn(len(b))
			b[p] ^= 1 << rng.Intn(8)
		}
	default:
		p := 8 + rng.Intn(len(b)-8)
		vals := [][4]byte{{0x7f, 0xff, 0xff, 0xff}, {0x80, 0, 0, 0}, {0xff, 0xff, 0xff, 0xff}, {0, 0, 0, 0}, {0, 1, 0, 0}}
		v := vals[rng.Intn(len(vals))]
		copy(b[p:], v[:])
	}
	return b
}
