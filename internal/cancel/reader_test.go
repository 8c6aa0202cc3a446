package cancel

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestReader(t *testing.T) {
	live := context.Background()
	ended, cancelEnded := context.WithCancel(context.Background())
	cancelEnded()
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		want    string
		wantErr error
	}{
		{"live context reads everything", live, "abcdef", nil},
		{"ended context reads nothing", ended, "", context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := io.ReadAll(Reader(tc.ctx, strings.NewReader("abcdef")))
			if string(got) != tc.want || !errors.Is(err, tc.wantErr) {
				t.Errorf("ReadAll = %q, %v; want %q, %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestReaderStopsMidway(t *testing.T) {
	ctx, stop := context.WithCancel(context.Background())
	r := Reader(ctx, strings.NewReader("abcdef"))
	buf := make([]byte, 2)
	if n, err := r.Read(buf); n != 2 || err != nil {
		t.Fatalf("first Read = %d, %v", n, err)
	}
	stop()
	if n, err := r.Read(buf); n != 0 || !errors.Is(err, context.Canceled) {
		t.Fatalf("Read after cancel = %d, %v; want 0, context.Canceled", n, err)
	}
}
