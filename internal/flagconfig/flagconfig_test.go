package flagconfig

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flinkpreflight/preflight/internal/bytesize"
)

type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }
func (l *list) Repeatable()        {}

type settings struct {
	addr    string
	size    int64
	timeout time.Duration
	allow   list
	verbose bool
}

func newFlags(s *settings) *flag.FlagSet {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(&strings.Builder{})
	fs.StringVar(&s.addr, "grpc-addr", "127.0.0.1:8443", "")
	s.size = 8 << 20
	fs.Var(bytesize.Value{P: &s.size}, "max-upload-bytes", "")
	fs.DurationVar(&s.timeout, "request-timeout", 2*time.Minute, "")
	fs.Var(&s.allow, "allow", "")
	fs.BoolVar(&s.verbose, "verbose", false, "")
	fs.String("config", "", "")
	return fs
}

func TestPrecedence(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "preflightd.yaml")
	os.WriteFile(file, []byte(`# a comment
grpc-addr: "0.0.0.0:9443"   # trailing comment
max-upload-bytes: 1GiB
request-timeout: 30s
allow:
  - s3://bucket/prefix/?region=eu-west-1#not-a-comment
  - /data/checkpoints
verbose: true
`), 0o644)
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want settings
	}{
		{"defaults", nil, nil, settings{addr: "127.0.0.1:8443", size: 8 << 20, timeout: 2 * time.Minute}},
		{"file", []string{"--config", file}, nil, settings{addr: "0.0.0.0:9443", size: 1 << 30, timeout: 30 * time.Second,
			allow: list{"s3://bucket/prefix/?region=eu-west-1#not-a-comment", "/data/checkpoints"}, verbose: true}},
		{"config from env", nil, map[string]string{"PREFLIGHT_CONFIG": file}, settings{addr: "0.0.0.0:9443", size: 1 << 30, timeout: 30 * time.Second,
			allow: list{"s3://bucket/prefix/?region=eu-west-1#not-a-comment", "/data/checkpoints"}, verbose: true}},
		{"env over file", []string{"--config", file}, map[string]string{"PREFLIGHT_MAX_UPLOAD_BYTES": "64MiB", "PREFLIGHT_ALLOW": "/a /b"},
			settings{addr: "0.0.0.0:9443", size: 64 << 20, timeout: 30 * time.Second, allow: list{"/a", "/b"}, verbose: true}},
		{"flag over env and file", []string{"--config", file, "--max-upload-bytes", "2MiB", "--allow", "/c"}, map[string]string{"PREFLIGHT_MAX_UPLOAD_BYTES": "64MiB"},
			settings{addr: "0.0.0.0:9443", size: 2 << 20, timeout: 30 * time.Second, allow: list{"/c"}, verbose: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s settings
			fs := newFlags(&s)
			_, err := Parse(fs, tt.args, "PREFLIGHT", "config", func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok })
			if err != nil {
				t.Fatal(err)
			}
			if s.addr != tt.want.addr || s.size != tt.want.size || s.timeout != tt.want.timeout || s.verbose != tt.want.verbose ||
				strings.Join(s.allow, "|") != strings.Join(tt.want.allow, "|") {
				t.Fatalf("got %+v\nwant %+v", s, tt.want)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		wantErr string
	}{
		{"missing file", []string{"--config", filepath.Join(dir, "nope.yaml")}, nil, "nope.yaml: no such file"},
		{"unknown key", []string{"--config", write("a.yaml", "grpc-adr: x\n")}, nil, `a.yaml:1: unknown setting "grpc-adr"`},
		{"bad size in file", []string{"--config", write("b.yaml", "\nmax-upload-bytes: lots\n")}, nil, "b.yaml:2: max-upload-bytes: invalid size"},
		{"list for a single flag", []string{"--config", write("c.yaml", "grpc-addr:\n  - a\n  - b\n")}, nil, "takes one value"},
		{"duplicate", []string{"--config", write("d.yaml", "verbose: true\nverbose: false\n")}, nil, "already set on line 1"},
		{"no value", []string{"--config", write("e.yaml", "verbose:\n")}, nil, "has no value"},
		{"stray indentation", []string{"--config", write("f.yaml", "  verbose: true\n")}, nil, "unexpected indentation"},
		{"bad env", nil, map[string]string{"PREFLIGHT_REQUEST_TIMEOUT": "soon"}, "PREFLIGHT_REQUEST_TIMEOUT=\"soon\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s settings
			_, err := Parse(newFlags(&s), tt.args, "PREFLIGHT", "config", func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok })
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestEnvName(t *testing.T) {
	if got := EnvName("PREFLIGHT", "max-upload-bytes"); got != "PREFLIGHT_MAX_UPLOAD_BYTES" {
		t.Fatal(got)
	}
}
