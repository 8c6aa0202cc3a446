package bytesize

import (
	"flag"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr string
	}{
		{"1048576", 1 << 20, ""},
		{"512MiB", 512 << 20, ""},
		{"512 MiB", 512 << 20, ""},
		{"10mb", 10 << 20, ""},
		{"20kb", 20 << 10, ""},
		{"20K", 20 << 10, ""},
		{"1g", 1 << 30, ""},
		{"2TiB", 2 << 40, ""},
		{"7b", 7, ""},
		{"7 bytes", 7, ""},
		{"0", 0, ""},
		{"", 0, "invalid size"},
		{"MiB", 0, "invalid size"},
		{"-1", 0, "invalid size"},
		{"1.5MiB", 0, "invalid size"},
		{"12 parsecs", 0, "invalid size"},
		{"9999999999TiB", 0, "too large"},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Parse(%q) = %d, %v; want error containing %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Parse(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestFormatRoundTrip(t *testing.T) {
	for _, n := range []int64{0, 1, 1000, 1 << 10, 1536 << 10, 512 << 20, 8 << 30, 3 << 40, 1<<20 + 1} {
		s := Format(n)
		back, err := Parse(s)
		if err != nil || back != n {
			t.Errorf("Parse(Format(%d)=%q) = %d, %v", n, s, back, err)
		}
	}
	if got := Format(512 << 20); got != "512MiB" {
		t.Errorf("Format(512<<20) = %q, want 512MiB", got)
	}
}

func TestValueAsFlag(t *testing.T) {
	var n int64 = 8 << 20
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Var(Value{&n}, "max", "a size")
	if err := fs.Parse([]string{"--max", "64KiB"}); err != nil || n != 64<<10 {
		t.Fatalf("n = %d, err %v", n, err)
	}
	if err := fs.Parse([]string{"--max", "lots"}); err == nil {
		t.Fatal("want an error for an invalid size")
	}
}
