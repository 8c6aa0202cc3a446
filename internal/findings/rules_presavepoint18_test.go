package findings

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint/checkpointtest"
	corpustest "github.com/flinkpreflight/preflight/internal/corpus"
	"github.com/flinkpreflight/preflight/internal/rescale"
)

func TestPreFlink18SavepointRule(t *testing.T) {
	tests := []struct {
		format int32
		flink  string
		fires  bool
	}{
		{2, "1.17.0", true},
		{2, "1.16.3", false},
		{2, "2.0", true},
		{2, "", false},
		{3, "1.17.0", false},
		{4, "1.20", false},
	}
	for _, tt := range tests {
		l := layoutOf(t, tt.format, tOp{uid: "map", p: 1, states: []tState{splitState("buffer", 1)}})
		fs := checkPreFlink18Savepoint(newContext(l, rescale.Plan{}, &rescale.Result{}, nil, Options{FlinkVersion: tt.flink}, nil))
		fired := len(fs) == 1 && fs[0].Severity == Warning && strings.Contains(fs[0].Message, "FLINK-29807")
		if fired != tt.fires || (!tt.fires && len(fs) != 0) {
			t.Errorf("format %d on %q: %+v, want fired=%v", tt.format, tt.flink, fs, tt.fires)
		}
	}
}

// TestPreFlink18SavepointRuleCorpus: bravo's RocksDB checkpoint, written by Flink 1.6 in format 2.
func TestPreFlink18SavepointRuleCorpus(t *testing.T) {
	l := checkpointtest.CorpusFile(t, filepath.Join(corpustest.Dir(), "king__bravo", "src", "test", "resources", "checkpoints", "_metadata"))
	for _, tt := range []struct {
		flink string
		fires bool
	}{{"1.16.3", false}, {"1.17.2", true}} {
		fs := byRule(check(t, l, rescale.Plan{}, nil, Options{FlinkVersion: tt.flink}), "PF118")
		if (len(fs) == 1) != tt.fires {
			t.Errorf("on %s: %+v, want fired=%v", tt.flink, fs, tt.fires)
		}
	}
}
