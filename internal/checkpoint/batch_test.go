package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flinkpreflight/preflight/internal/testutil"
)

// batchFiles writes generated files to a temporary folder: small ones (read whole), one above
// maxWholeFile (streamed), and a truncated one. It returns the paths and their bytes.
func batchFiles(t testing.TB) ([]string, [][]byte) {
	t.Helper()
	var exotic bytes.Buffer
	if err := Write(&exotic, exoticMetadata()); err != nil {
		t.Fatal(err)
	}
	big := largeKeyedFile(t, 8, 4) // 2 MiB of key-group offsets
	if len(big) <= maxWholeFile {
		t.Fatalf("streamed case is only %d bytes", len(big))
	}
	contents := [][]byte{exotic.Bytes(), largeKeyedFile(t, 1, 3), big, exotic.Bytes()[:len(exotic.Bytes())/2], largeKeyedFile(t, 2, 7)}
	dir := t.TempDir()
	var paths []string
	for i, b := range contents {
		p := filepath.Join(dir, "chk-"+string(rune('a'+i)), "_metadata")
		testutil.WriteFile(t, p, b)
		paths = append(paths, p)
	}
	return paths, contents
}

// checkSameLayout compares a Decoder's answer for path with readLayoutBytes of its bytes.
func checkSameLayout(t *testing.T, path string, data []byte, got *Layout, gotErr error) {
	t.Helper()
	want, wantErr := readLayoutBytes(data)
	if wantErr != nil {
		var fe, wfe *FormatError
		if !errors.As(gotErr, &fe) || !errors.As(wantErr, &wfe) || *fe != *wfe {
			t.Fatalf("%s: error %v, want %v", path, gotErr, wantErr)
		}
		if !strings.Contains(gotErr.Error(), path) {
			t.Fatalf("error %q does not name the file", gotErr)
		}
		return
	}
	if gotErr != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: Decoder differs from readLayoutBytes (err %v)", path, gotErr)
	}
}

func TestDecoderReusesBuffersAcrossFiles(t *testing.T) {
	paths, contents := batchFiles(t)
	x := NewDecoder()
	// Twice round, so every file follows a larger, a smaller and a failed one.
	for range 2 {
		for i, p := range paths {
			l, err := x.ReadLayoutFile(context.Background(), p)
			checkSameLayout(t, p, contents[i], l, err)
		}
	}
	// The remembered properties trailer hands out a fresh value each time.
	l1, err := x.ReadLayoutFile(context.Background(), paths[1])
	if err != nil || l1.Properties == nil {
		t.Fatalf("no properties: %v", err)
	}
	name := l1.Properties.Name
	l1.Properties.Name = "changed by the caller"
	if l2, err := x.ReadLayoutFile(context.Background(), paths[1]); err != nil || l2.Properties.Name != name {
		t.Fatalf("second decode sees the caller's change: %v", err)
	}

	missing := filepath.Join(t.TempDir(), "nope", "_metadata")
	if _, err := x.ReadLayoutFile(context.Background(), missing); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Fatalf("missing file: %v", err)
	}
	if _, err := x.ReadLayoutFile(context.Background(), t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("folder: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := x.ReadLayoutFile(ctx, paths[0]); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

func TestReadLayoutFiles(t *testing.T) {
	paths, contents := batchFiles(t)
	for _, workers := range []int{0, 1, 3, 16} {
		var seen []int
		err := ReadLayoutFiles(context.Background(), paths, workers, func(i int, l *Layout, err error) error {
			seen = append(seen, i)
			checkSameLayout(t, paths[i], contents[i], l, err)
			return nil
		})
		if err != nil || !reflect.DeepEqual(seen, []int{0, 1, 2, 3, 4}) {
			t.Fatalf("workers %d: visited %v, err %v", workers, seen, err)
		}
	}

	stop := errors.New("stop")
	calls := 0
	err := ReadLayoutFiles(context.Background(), paths, 2, func(i int, l *Layout, err error) error {
		calls++
		return stop
	})
	if !errors.Is(err, stop) || calls != 1 {
		t.Fatalf("fn error: %v after %d calls", err, calls)
	}

	ctx, cancel := context.WithCancel(context.Background())
	calls = 0
	err = ReadLayoutFiles(ctx, paths, 2, func(i int, l *Layout, err error) error {
		calls++
		cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) || calls != 1 {
		t.Fatalf("cancelled: %v after %d calls", err, calls)
	}

	// More files than workers, so that result slots are reused; stopped part way
	// by fn and by ctx, and run to the end, with each worker count.
	var many []string
	for range 9 {
		many = append(many, paths...)
	}
	for _, workers := range []int{1, 2, 3, 7} {
		for _, stopAt := range []int{-1, 0, 7, 30} { // even: fn fails; odd: ctx is cancelled
			calls = 0
			ctx, cancel := context.WithCancel(context.Background())
			err := ReadLayoutFiles(ctx, many, workers, func(i int, l *Layout, err error) error {
				if i != calls {
					t.Fatalf("workers %d: file %d came as call %d", workers, i, calls)
				}
				checkSameLayout(t, many[i], contents[i%len(paths)], l, err)
				calls++
				switch {
				case i == stopAt && stopAt%2 == 0:
					return stop
				case i == stopAt:
					cancel()
				}
				return nil
			})
			cancel()
			switch {
			case stopAt < 0 && (err != nil || calls != len(many)):
				t.Fatalf("workers %d: %v after %d of %d calls", workers, err, calls, len(many))
			case stopAt >= 0 && stopAt%2 == 0 && (!errors.Is(err, stop) || calls != stopAt+1):
				t.Fatalf("workers %d, stop at %d: %v after %d calls", workers, stopAt, err, calls)
			case stopAt%2 == 1 && (!errors.Is(err, context.Canceled) || calls != stopAt+1):
				t.Fatalf("workers %d, cancel at %d: %v after %d calls", workers, stopAt, err, calls)
			}
		}
	}

	if err := ReadLayoutFiles(context.Background(), nil, 0, func(int, *Layout, error) error { t.Fatal("called"); return nil }); err != nil {
		t.Fatal(err)
	}
}

// TestDecoderCorpus decodes the shared corpus with one Decoder and compares with readLayoutBytes.
func TestDecoderCorpus(t *testing.T) {
	files := metadataCorpus(t)
	if testing.Short() && len(files) > 100 {
		files = files[:100]
	}
	x := NewDecoder()
	for _, f := range files {
		data, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		l, err := x.ReadLayoutFile(context.Background(), f.path)
		checkSameLayout(t, f.path, data, l, err)
	}
}

// TestDecoderLayoutsIndependent: Layouts a Decoder returned earlier are not changed by the files
// it decodes after them (its handle records and buffers are reused; a Layout must hold none of
// them). Every corpus file is decoded with one Decoder, all Layouts kept, then each compared
// with a fresh decode.
func TestDecoderLayoutsIndependent(t *testing.T) {
	files := metadataCorpus(t)
	x := NewDecoder()
	kept := make([]*Layout, len(files))
	for i, f := range files {
		kept[i], _ = x.ReadLayoutFile(context.Background(), f.path)
	}
	compared := 0
	for i, f := range files {
		data, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		want, err := readLayoutBytes(data)
		if err != nil {
			continue
		}
		if !reflect.DeepEqual(kept[i], want) {
			t.Fatalf("%s: the Layout changed after the Decoder went on to other files", f.path)
		}
		compared++
	}
	t.Logf("%d Layouts compared", compared)
}

// TestPropertiesMemo checks that the memo answers exactly what decodePropertiesLen answers, for
// trailers that repeat, interleave, fail, and outnumber its entries, and that it keeps its own
// copy of each trailer.
func TestPropertiesMemo(t *testing.T) {
	good := mustHex(templateA)
	distinct := [][]byte{good, good[:len(good)/2], []byte("not java"), append(bytes.Clone(good), 0x70), nil}
	for i := range memoTrailers + 2 {
		distinct = append(distinct, append(bytes.Clone(good[:len(good)-3]), byte(i))) // truncated differently
	}
	tests := []struct {
		name string
		seq  []int // indexes into distinct
	}{
		{"repeat", []int{0, 0, 0}},
		{"interleave", []int{0, 1, 2, 0, 1, 2, 3, 0}},
		{"more than the entries", []int{5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 0, 5, 14, 0, 6}},
		{"empty and good", []int{4, 0, 4, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var pm propertiesMemo
			for _, i := range tt.seq {
				in := bytes.Clone(distinct[i])
				p, n, err := pm.decodeLen(in)
				wp, wn, werr := decodePropertiesLen(distinct[i])
				if n != wn || !reflect.DeepEqual(p, wp) || (err == nil) != (werr == nil) || (err != nil && err.Error() != werr.Error()) {
					t.Fatalf("trailer %d: memo (%v, %d, %v), want (%v, %d, %v)", i, p, n, err, wp, wn, werr)
				}
				for k := range in {
					in[k] ^= 0xff // the caller reuses its buffer; the memo must not see it
				}
			}
		})
	}
}

// endingCtx is a context that ends after its first allowed Err calls have answered nil: the
// read starts (the up-front check passes) and the context has ended by the time the decode
// watches it, so the decode itself must notice, deterministically.
type endingCtx struct {
	context.Context
	allowed int32
	calls   atomic.Int32
	done    chan struct{}
}

func newEndingCtx(allowed int32) *endingCtx {
	c := &endingCtx{Context: context.Background(), allowed: allowed, done: make(chan struct{})}
	close(c.done)
	return c
}

func (c *endingCtx) Done() <-chan struct{} { return c.done }

func (c *endingCtx) Err() error {
	if c.calls.Add(1) <= c.allowed {
		return nil
	}
	return context.Canceled
}

// A context that ends while a file is being decoded stops the Decoder with the context's error,
// for a file read whole (where no read checks the context) and a streamed one, alone and in a
// batch of one worker.
func TestDecoderStopsWhenContextEnds(t *testing.T) {
	paths, _ := batchFiles(t)
	whole, streamed := paths[1], paths[2]
	for _, tc := range []struct {
		name string
		read func(ctx context.Context) (*Layout, error)
	}{
		{"ReadLayoutFile/whole", func(ctx context.Context) (*Layout, error) { return NewDecoder().ReadLayoutFile(ctx, whole) }},
		{"ReadLayoutFile/streamed", func(ctx context.Context) (*Layout, error) { return NewDecoder().ReadLayoutFile(ctx, streamed) }},
		{"ReadLayoutFiles/1 worker", func(ctx context.Context) (*Layout, error) {
			var got *Layout
			err := ReadLayoutFiles(ctx, []string{whole, streamed}, 1, func(_ int, l *Layout, err error) error {
				got = l
				return err
			})
			return got, err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if l, err := tc.read(context.Background()); err != nil || l == nil {
				t.Fatalf("live context: %v", err)
			}
			l, err := tc.read(newEndingCtx(1))
			if !errors.Is(err, context.Canceled) || l != nil {
				t.Errorf("context ended during the decode: layout %v, error %v; want context.Canceled", l != nil, err)
			}
		})
	}
	// The Decoder is usable after a stopped read.
	x := NewDecoder()
	if _, err := x.ReadLayoutFile(newEndingCtx(1), whole); !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	l, err := x.ReadLayoutFile(context.Background(), whole)
	data, _ := os.ReadFile(whole)
	checkSameLayout(t, whole, data, l, err)
}

// TestReadLayoutFilesCorpus: the Layouts ReadLayoutFiles gives fn equal fresh decodes of the
// same files, in the corpus order and reversed (so that each worker's Decoder goes from large
// files to small ones and back), and each Layout fn keeps stays as it was after the later
// files and the end of the call: it is the caller's.
func TestReadLayoutFilesCorpus(t *testing.T) {
	files := metadataCorpus(t)
	if testing.Short() && len(files) > 200 {
		files = files[:200]
	}
	var paths []string
	contents := map[string][]byte{}
	for _, f := range files {
		data, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, f.path)
		contents[f.path] = data
	}
	reversed := slices.Clone(paths)
	slices.Reverse(reversed)
	for _, order := range [][]string{paths, reversed} {
		for _, workers := range []int{1, 2, 3} {
			kept := make([]*Layout, len(order))
			err := ReadLayoutFiles(context.Background(), order, workers, func(i int, l *Layout, err error) error {
				checkSameLayout(t, order[i], contents[order[i]], l, err)
				kept[i] = l
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for i, p := range order {
				if want, err := readLayoutBytes(contents[p]); err == nil && !reflect.DeepEqual(kept[i], want) {
					t.Fatalf("workers %d: %s: the Layout kept from fn changed", workers, p)
				}
			}
		}
	}
}

// TestDecoderErrorsNameTheField: a Decoder decodes bytes without the field path and decodes a
// failing file again with it, so its errors must equal readLayoutBytes' (offset, field path,
// value and message) for every cut and a sample of bit flips of small corpus files.
func TestDecoderErrorsNameTheField(t *testing.T) {
	files := smallCorpus(t, 12)
	rng := rand.New(rand.NewSource(7))
	x := NewDecoder()
	var compared, withField int
	check := func(b []byte) {
		t.Helper()
		want, wantErr := readLayoutBytes(b)
		got, err := x.readLayout(b, nil, nil)
		if !reflect.DeepEqual(err, wantErr) || (wantErr == nil && !reflect.DeepEqual(got, want)) {
			t.Fatalf("%d bytes: Decoder %v, readLayoutBytes %v", len(b), err, wantErr)
		}
		if fe := (*FormatError)(nil); errors.As(wantErr, &fe) {
			compared++
			if fe.Field != "" {
				withField++
			}
		}
	}
	for _, b := range files {
		step := max(len(b)/300, 1)
		for i := 0; i < len(b); i += step {
			check(b[:i])
		}
		for range 100 {
			flipped := bytes.Clone(b)
			flipped[rng.Intn(len(b))] ^= byte(1 << rng.Intn(8))
			check(flipped)
		}
	}
	if withField == 0 {
		t.Fatal("no error named a field")
	}
	t.Logf("%d errors compared, %d naming a field", compared, withField)
}

// TestReadLayoutFilesConcurrentCalls: calls running at once take their own Decoders from the
// pool; each still sees exactly its own files' Layouts.
func TestReadLayoutFilesConcurrentCalls(t *testing.T) {
	paths, contents := batchFiles(t)
	var many []string
	for range 6 {
		many = append(many, paths...)
	}
	errs := make(chan error, 4)
	for c := range 4 {
		go func() {
			errs <- ReadLayoutFiles(context.Background(), many, 1+c%3, func(i int, l *Layout, err error) error {
				want, wantErr := readLayoutBytes(contents[i%len(paths)])
				if (err == nil) != (wantErr == nil) || err == nil && !reflect.DeepEqual(l, want) {
					return errors.New(many[i] + ": differs from readLayoutBytes")
				}
				return nil
			})
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// TestReadLayoutFilesBounded: with a slow fn, the workers run ahead of it by at most workers
// files, so at most workers + 1 Layouts exist at once.
func TestReadLayoutFilesBounded(t *testing.T) {
	paths, _ := batchFiles(t)
	var names []string
	for range 20 {
		names = append(names, paths...)
	}
	for _, workers := range []int{1, 2, 4} {
		var given, worst atomic.Int64
		testHookDecoding = func(i int) {
			for {
				w := worst.Load()
				if d := int64(i) - given.Load(); d <= w || worst.CompareAndSwap(w, d) {
					return
				}
			}
		}
		err := ReadLayoutFiles(context.Background(), names, workers, func(i int, l *Layout, err error) error {
			time.Sleep(100 * time.Microsecond) // a slow reader: the workers run ahead
			given.Add(1)
			return nil
		})
		testHookDecoding = nil
		if err != nil {
			t.Fatal(err)
		}
		// File i is started once file i - workers has been handed to fn, which may not have
		// returned yet (given counts returns): i - given ≤ workers.
		if d := worst.Load(); d > int64(workers) {
			t.Errorf("workers %d: a file was started %d files ahead of fn", workers, d)
		}
	}
}
