package engine

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/flinkpreflight/preflight/internal/scenarios"
)

// cancelAtLastByte hands out the file and cancels the context as it hands out the last byte, so
// that the deadline falls after the last read: in the decode's conversion of the buffered rest
// (state summaries, the operator records), which no read checks.
type cancelAtLastByte struct {
	b      []byte
	cancel context.CancelFunc
	at     time.Time
}

func (c *cancelAtLastByte) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.b)
	c.b = c.b[n:]
	if len(c.b) == 0 && c.at.IsZero() {
		c.at = time.Now()
		c.cancel()
	}
	return n, nil
}

// TestReadLayoutStopsAfterLastRead: a context that ends once the whole file has been read stops
// ReadLayout within a second, not after the conversion of half a million state names (which
// took seconds before the decoder checked its context between reads: bench/README.md,
// "Operator-heavy files, CLI and daemon"); InspectLayout honours its context too.
func TestReadLayoutStopsAfterLastRead(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a 500k-name file")
	}
	var b bytes.Buffer
	gen := time.Now()
	if err := scenarios.WriteManyStateNames(&b, 500_000); err != nil {
		t.Fatal(err)
	}
	t.Logf("500k names (%d bytes) written in %v", b.Len(), time.Since(gen))
	start := time.Now()
	e := New()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := &cancelAtLastByte{b: b.Bytes(), cancel: cancel}
	_, err := e.ReadLayout(ctx, Input{Reader: r})
	late := time.Since(r.at)
	t.Logf("read for %v", r.at.Sub(start))
	t.Logf("500k names: ReadLayout returned %v after the cancel at the last byte", late)
	if r.at.IsZero() {
		t.Fatal("the reader never handed out the last byte")
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if late > time.Second {
		t.Errorf("ReadLayout returned %v after the context ended, want ≤ 1 s", late)
	}

	// InspectLayout over an already decoded layout stops as well.
	layout, err := e.ReadLayout(context.Background(), Input{Reader: bytes.NewReader(readTestdata(t, "compact-sink"))})
	if err != nil {
		t.Fatal(err)
	}
	done, stop := context.WithCancel(context.Background())
	stop()
	if _, err := e.InspectLayout(done, layout, "x"); !errors.Is(err, context.Canceled) {
		t.Errorf("InspectLayout with an ended context: err = %v, want context.Canceled", err)
	}
	if _, err := e.InspectLayout(context.Background(), layout, "x"); err != nil {
		t.Errorf("InspectLayout: %v", err)
	}
}
