package findings

import (
	"strings"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/rescale"
)

func TestFormatVersionRule(t *testing.T) {
	tests := []struct {
		format       int
		flinkVersion string
		want         Severity // SeverityUnspecified: silent
		wantText     string
	}{
		{6, "2.1.0", SeverityUnspecified, ""},
		{6, "2.2", SeverityUnspecified, ""},
		{6, "1.20.1", Error, "Unrecognized checkpoint version number: 6"},
		{6, "2.0.2", Error, "Flink 2.1 and later"},
		{5, "2.0", SeverityUnspecified, ""},
		{5, "1.19", Error, "Unrecognized checkpoint version number: 5"},
		{4, "1.16.0", SeverityUnspecified, ""},
		{4, "1.15.4", Error, "Unrecognized checkpoint version number: 4"},
		{3, "1.11", SeverityUnspecified, ""},
		{2, "2.2", SeverityUnspecified, ""},
		{1, "1.10.3", SeverityUnspecified, ""},
		{1, "1.11.0", Error, "no longer supported"},
		{1, "", Warning, "Flink 1.2 up to (not including) 1.11"},
		{6, "", SeverityUnspecified, ""},
		{7, "", Warning, "no released Flink version"},
		{7, "2.2", Error, "Unrecognized checkpoint version number: 7"},
	}
	for _, tt := range tests {
		layout := &checkpoint.Layout{Version: tt.format}
		c := newContext(layout, rescale.Plan{}, &rescale.Result{}, nil, Options{FlinkVersion: tt.flinkVersion}, nil)
		fs := checkFormatVersion(c)
		switch {
		case tt.want == SeverityUnspecified && len(fs) != 0:
			t.Errorf("format %d on %q: want silence, got %+v", tt.format, tt.flinkVersion, fs)
		case tt.want != SeverityUnspecified && (len(fs) != 1 || fs[0].Severity != tt.want || !strings.Contains(fs[0].Message, tt.wantText) || fs[0].VertexID != ""):
			t.Errorf("format %d on %q: got %+v, want one %v finding mentioning %q", tt.format, tt.flinkVersion, fs, tt.want, tt.wantText)
		}
	}
}

func TestFormatVersionRuleFileMerging(t *testing.T) {
	merged := &checkpoint.Layout{Version: 4, Operators: []checkpoint.OperatorLayout{{Parallelism: 1, MaxParallelism: 1,
		Subtasks: []checkpoint.SubtaskLayout{{ManagedOperatorState: &checkpoint.OperatorStateHandleLayout{FileMerging: true,
			Stream: checkpoint.StreamRef{Kind: checkpoint.StreamSegment, Size: 10}}}}}}}
	for _, tt := range []struct {
		version string
		fires   bool
	}{{"1.19.2", true}, {"1.16", true}, {"1.20.0", false}, {"2.1", false}, {"", false}} {
		c := newContext(merged, rescale.Plan{}, &rescale.Result{}, nil, Options{FlinkVersion: tt.version}, nil)
		fs := checkFormatVersion(c)
		if fired := len(fs) == 1 && fs[0].Severity == Error && strings.Contains(fs[0].Message, "code: 15"); fired != tt.fires {
			t.Errorf("file merging on %q: %+v, want fired=%v", tt.version, fs, tt.fires)
		}
	}
	plain := &checkpoint.Layout{Version: 4}
	if fs := checkFormatVersion(newContext(plain, rescale.Plan{}, &rescale.Result{}, nil, Options{FlinkVersion: "1.19"}, nil)); len(fs) != 0 {
		t.Errorf("no file merging: %+v", fs)
	}
}
