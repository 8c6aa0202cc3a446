package buildinfo

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestFrom(t *testing.T) {
	stamped := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/flinkpreflight/preflight", Version: "v0.3.0"},
		Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
			{Key: "vcs.modified", Value: "true"},
			{Key: "vcs.time", Value: "2026-12-01T22:00:00Z"},
		},
	}
	tests := []struct {
		name             string
		bi               *debug.BuildInfo
		version, rev     string
		want             string
		wantTime         string
		wantModifiedFlag bool
	}{
		{name: "no build info", bi: nil, want: "(devel) (revision unknown, go"},
		{name: "stamped by go build", bi: stamped, want: "v0.3.0 (revision 0123456789ab-dirty, go1.26.8)", wantTime: "2026-12-01T22:00:00Z", wantModifiedFlag: true},
		{name: "release overrides", bi: stamped, version: "v1.0.0", rev: "fedcba9876543210", want: "v1.0.0 (revision fedcba987654, go1.26.8)", wantTime: "2026-12-01T22:00:00Z"},
		{name: "empty main version", bi: &debug.BuildInfo{GoVersion: "go1.26.8"}, want: "(devel) (revision unknown, go1.26.8)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := from(tt.bi, tt.version, tt.rev)
			if !strings.HasPrefix(got.String(), tt.want) {
				t.Errorf("String() = %q, want prefix %q", got.String(), tt.want)
			}
			if got.Time != tt.wantTime || got.Modified != tt.wantModifiedFlag {
				t.Errorf("Time, Modified = %q, %v; want %q, %v", got.Time, got.Modified, tt.wantTime, tt.wantModifiedFlag)
			}
		})
	}
}

func TestGetInTestBinary(t *testing.T) {
	got := Get()
	if got.GoVersion == "" || got.Version == "" || got.Revision == "" {
		t.Fatalf("Get() = %+v: every field must be set", got)
	}
	if l := got.Line("preflight"); !strings.HasPrefix(l, "preflight ") {
		t.Fatalf("Line = %q", l)
	}
}
