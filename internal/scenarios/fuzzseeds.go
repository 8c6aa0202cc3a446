package scenarios

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// FuzzSeed is one committed seed of a fuzz target, in Go's corpus file format ("go test fuzz
// v1"), so `go test` runs it and `go test -fuzz` starts from it without ../shared.
type FuzzSeed struct {
	// Path is relative to the repository root: <package>/testdata/fuzz/<FuzzTarget>/<name>.
	Path string
	Data []byte
}

// maxFuzzSeedBytes keeps seeds small: the fuzzer mutates the whole input, and a large seed
// slows every run.
const maxFuzzSeedBytes = 64 << 10

// FuzzSeeds returns the seeds of the decoder and simulation fuzz targets: the example
// checkpoints (the Kafka one as the series' first, 16-elements-per-subtask savepoint: the
// committed variant is 1.3 MB) for internal/checkpoint's FuzzRead and FuzzRoundTrip, and for
// internal/rescale's FuzzSimulate with a parallelism that rescales them (8: the README's plan
// for compact-sink).
func FuzzSeeds() ([]FuzzSeed, error) {
	kafka := KafkaOrphanUnionSeries()[0]
	sources := []Scenario{
		{Name: "compact-sink", Build: CompactSink},
		{Name: "max-parallelism", Build: MaxParallelism},
		{Name: "kafka-orphan-union-small", Build: kafka.Build},
	}
	var seeds []FuzzSeed
	for _, s := range sources {
		b, err := Encode(s)
		if err != nil {
			return nil, err
		}
		name := "scenario-" + s.Name
		seeds = append(seeds,
			FuzzSeed{Path: "internal/checkpoint/testdata/fuzz/FuzzRead/" + name, Data: corpusFile(b)},
			FuzzSeed{Path: "internal/checkpoint/testdata/fuzz/FuzzRoundTrip/" + name, Data: corpusFile(b)},
			FuzzSeed{Path: "internal/rescale/testdata/fuzz/FuzzSimulate/" + name, Data: corpusFile(b, uint16(8))},
		)
	}
	for _, s := range seeds {
		if len(s.Data) > maxFuzzSeedBytes {
			return nil, fmt.Errorf("fuzz seed %s: %d bytes, more than %d", s.Path, len(s.Data), maxFuzzSeedBytes)
		}
	}
	return seeds, nil
}

// WriteFuzzSeeds writes FuzzSeeds under root (the repository root), atomically; a file that
// differs is replaced only when overwrite is set.
func WriteFuzzSeeds(root string, overwrite bool) error {
	seeds, err := FuzzSeeds()
	if err != nil {
		return err
	}
	for _, s := range seeds {
		path := filepath.Join(root, filepath.FromSlash(s.Path))
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, s.Data) {
			continue
		}
		if err := WriteFile(path, overwrite, func(w io.Writer) error { _, err := w.Write(s.Data); return err }); err != nil {
			return err
		}
	}
	return nil
}

// corpusFile encodes the values of one fuzz input the way `go test -fuzz` stores them
// (internal/fuzz's marshalCorpusFile): []byte as a quoted string, integers as T(v).
func corpusFile(values ...any) []byte {
	b := []byte("go test fuzz v1\n")
	for _, v := range values {
		switch v := v.(type) {
		case []byte:
			b = fmt.Appendf(b, "[]byte(%q)\n", v)
		case uint16:
			b = fmt.Appendf(b, "uint16(%d)\n", v)
		default:
			panic(fmt.Sprintf("corpusFile: unsupported %T", v))
		}
	}
	return b
}
