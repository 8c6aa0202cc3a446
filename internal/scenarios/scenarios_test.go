package scenarios

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

// The committed files must be what the generator produces today:
// go run ./internal/scenarios/cmd/genexamples -force regenerates them.
func TestCommittedFilesUpToDate(t *testing.T) {
	for _, s := range All() {
		t.Run(s.Name, func(t *testing.T) {
			want, err := Encode(s)
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join("..", "..", "testdata", s.Name, "_metadata"))
			if err != nil {
				t.Fatalf("%v (run go run ./internal/scenarios/cmd/genexamples -force)", err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("testdata/%s/_metadata is stale (%d bytes, generator gives %d): run go run ./internal/scenarios/cmd/genexamples -force", s.Name, len(got), len(want))
			}
		})
	}
}

func TestScenariosDecode(t *testing.T) {
	for _, s := range All() {
		t.Run(s.Name, func(t *testing.T) {
			b, err := Encode(s)
			if err != nil {
				t.Fatal(err)
			}
			m, err := checkpoint.ReadBytes(b)
			if err != nil {
				t.Fatal(err)
			}
			var again bytes.Buffer
			if err := checkpoint.Write(&again, m); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again.Bytes(), b) {
				t.Fatal("Read/Write round trip differs")
			}
			l, err := checkpoint.ReadLayout(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if l.Version >= 4 && (l.Properties == nil || !l.Properties.Savepoint) {
				t.Errorf("trailer: %+v %s", l.Properties, l.PropertiesError)
			}
			for _, op := range l.Operators {
				if op.UID != "" && op.ID != checkpoint.OperatorIDFromUID(op.UID) {
					t.Errorf("operator %s: ID is not the uid's hash", op.UID)
				}
				for _, st := range op.Subtasks {
					h := st.ManagedOperatorState
					if h == nil {
						continue
					}
					if h.Stream.Inline() != (h.Stream.Size <= InlineThreshold) {
						t.Errorf("operator %s subtask %d: %d-byte stream stored %s", op.UID, st.Index, h.Stream.Size, h.Stream.Kind)
					}
				}
			}
		})
	}
}

func TestKafkaOrphanUnionStreamsWhatWriteWrites(t *testing.T) {
	for _, target := range []int64{8 << 10, 300 << 10, 1 << 20} {
		var streamed bytes.Buffer
		if err := KafkaOrphanUnion(&streamed, target); err != nil {
			t.Fatal(err)
		}
		var direct bytes.Buffer
		if err := checkpoint.Write(&direct, KafkaOrphanUnionMetadata(KafkaPerSubtaskFor(target))); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(streamed.Bytes(), direct.Bytes()) {
			t.Fatalf("target %d: streamed %d bytes differ from Write's %d", target, streamed.Len(), direct.Len())
		}
		if d := int64(streamed.Len()) - target; target > 64<<10 && (d > 64 || d < -64) {
			t.Errorf("target %d: got %d bytes", target, streamed.Len())
		}
	}
}

func TestUUIDDeterministic(t *testing.T) {
	// A fixed value, not uuid("a") against itself: regenerated testdata must keep its IDs, so the
	// derivation from the seed may not change.
	if got, want := uuid("a"), "ca978112-ca1b-4dca-bac2-31b39a23dc4d"; got != want {
		t.Fatalf("uuid(a) = %s, want %s", got, want)
	}
	if uuid("a") == uuid("b") {
		t.Fatal("uuid(a) == uuid(b)")
	}
	if u := uuid("x"); len(u) != 36 || u[14] != '4' {
		t.Fatalf("not a v4 UUID: %s", u)
	}
}

// The fixture of apache/flink-connector-kafka lists Map (7d24…) before the source (cb16…):
// HashMap order of the operator IDs.
func TestFileOrderMatchesFlink(t *testing.T) {
	a, _ := checkpoint.ParseOperatorID("cb16aa5adb311e8ac72482def19accbe")
	b, _ := checkpoint.ParseOperatorID("7d246211b2be972287522fe7978b38c1")
	got := fileOrder(checkpoint.OperatorState{ID: a}, checkpoint.OperatorState{ID: b})
	if got[0].ID != b {
		t.Fatalf("order %s, %s", got[0].ID, got[1].ID)
	}
}

func TestWriteAllNeverOverwritesSilently(t *testing.T) {
	dir := t.TempDir()
	if err := WriteAll(dir, false); err != nil {
		t.Fatal(err)
	}
	// Unchanged files are fine without the flag.
	if err := WriteAll(dir, false); err != nil {
		t.Fatalf("rewriting identical files: %v", err)
	}
	name := All()[0].Name
	path := filepath.Join(dir, name, "_metadata")
	if err := os.WriteFile(path, []byte("a user's own file"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteAll(dir, false); !errors.Is(err, ErrExists) {
		t.Fatalf("WriteAll over a changed file without overwrite: %v, want ErrExists", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "a user's own file" {
		t.Fatal("the user's file was changed")
	}
	if err := WriteAll(dir, true); err != nil {
		t.Fatal(err)
	}
	want, _ := Encode(All()[0])
	if b, _ := os.ReadFile(path); !bytes.Equal(b, want) {
		t.Fatal("overwrite did not replace the file")
	}
	entries, _ := os.ReadDir(filepath.Join(dir, name))
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

func TestWriteFileFailureKeepsOldFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "_metadata")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := WriteFile(path, true, func(w io.Writer) error {
		w.Write([]byte("half"))
		return errors.New("generator failed")
	})
	if err == nil {
		t.Fatal("want the generator's error")
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("file is %q after a failed write, want the old content", b)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

// The committed fuzz seeds must be what the generator produces today (same command as above).
func TestCommittedFuzzSeedsUpToDate(t *testing.T) {
	seeds, err := FuzzSeeds()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range seeds {
		got, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(s.Path)))
		if err != nil {
			t.Errorf("%v (run go run ./internal/scenarios/cmd/genexamples -force)", err)
			continue
		}
		if !bytes.Equal(got, s.Data) {
			t.Errorf("%s is stale: run go run ./internal/scenarios/cmd/genexamples -force", s.Path)
		}
	}
}
