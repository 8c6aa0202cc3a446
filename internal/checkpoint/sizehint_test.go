package checkpoint

import (
	"bytes"
	"context"
	"os"
	"reflect"
	"testing"
)

// TestReadLayoutSizedSameLayout: the size hint only sizes arrays; any hint, right or wrong, gives
// the Layout of the bytes, and a wrong hint fails a malformed file the same way.
func TestReadLayoutSizedSameLayout(t *testing.T) {
	for _, name := range []string{"compact-sink", "kafka-orphan-union", "max-parallelism"} {
		b, err := os.ReadFile("../../testdata/" + name + "/_metadata")
		if err != nil {
			t.Fatal(err)
		}
		want, err := ReadLayoutSized(context.Background(), bytes.NewReader(b), 0)
		if err != nil {
			t.Fatal(err)
		}
		n := int64(len(b))
		for _, hint := range []int64{-1, 0, 1, n / 2, n, 10 * n, 1 << 40} {
			got, err := ReadLayoutSized(context.Background(), bytes.NewReader(b), hint)
			if err != nil {
				t.Fatalf("%s, hint %d: %v", name, hint, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s, hint %d: another Layout", name, hint)
			}
		}
		_, wantErr := ReadLayoutSized(context.Background(), bytes.NewReader(b[:n/2]), 0)
		for _, hint := range []int64{n / 2, n, 1 << 40} {
			if _, err := ReadLayoutSized(context.Background(), bytes.NewReader(b[:n/2]), hint); err == nil || wantErr == nil || err.Error() != wantErr.Error() {
				t.Errorf("%s truncated, hint %d: %v, want %v", name, hint, err, wantErr)
			}
		}
	}
}
