package findings

import (
	"strings"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/rescale"
)

func TestFlinkMajorUpgradeRule(t *testing.T) {
	plain := func(format int32) *checkpoint.Layout {
		return layoutOf(t, format, tOp{uid: "map", p: 2, states: []tState{splitState("buffer", 1, 1)}})
	}
	producer := layoutOf(t, 4, tOp{uid: "kafka-out", p: 2, states: []tState{splitState("state", 1, 1),
		unionState("next-transactional-id-hint-v2", 1, 0)}})
	consumer := layoutOf(t, 3, tOp{uid: "kafka-in", p: 1, states: []tState{unionState("topic-partition-offset-states", 4)}})
	tests := []struct {
		name   string
		layout *checkpoint.Layout
		flink  string
		want   Severity
		text   string
	}{
		{"format 4 on 2.0.0", plain(4), "2.0.0", Warning, "not guaranteed"},
		{"format 4 on 1.20.1", plain(4), "1.20.1", SeverityUnspecified, ""},
		{"format 3 on 2.1", plain(3), "2.1", Warning, "format-3"},
		{"format 5 (Flink 2.0) on 2.1", plain(5), "2.1.0", SeverityUnspecified, ""},
		{"format 4, version unknown", plain(4), "", SeverityUnspecified, ""},
		{"FlinkKafkaProducer on 2.0", producer, "2.0", Error, "FlinkKafkaProducer state `next-transactional-id-hint-v2`"},
		{"FlinkKafkaProducer on 1.20", producer, "1.20", SeverityUnspecified, ""},
		{"FlinkKafkaConsumer on 2.2", consumer, "2.2", Error, "FlinkKafkaConsumer state `topic-partition-offset-states`"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newContext(tt.layout, rescale.Plan{}, &rescale.Result{}, nil, Options{FlinkVersion: tt.flink}, nil)
			fs := checkFlinkMajorUpgrade(c)
			if tt.want == SeverityUnspecified {
				if len(fs) != 0 {
					t.Fatalf("want silence, got %+v", fs)
				}
				return
			}
			if len(fs) != 1 || fs[0].Severity != tt.want || !strings.Contains(fs[0].Message, tt.text) || !strings.Contains(fs[0].Message, "FLINK-37660") {
				t.Fatalf("got %+v, want one %v finding mentioning %q and FLINK-37660", fs, tt.want, tt.text)
			}
		})
	}
}

// TestFlinkMajorUpgradeRuleCounts: the message names the first three legacy operators and counts
// the rest.
func TestFlinkMajorUpgradeRuleCounts(t *testing.T) {
	var ops []tOp
	for _, uid := range []string{"a", "b", "c", "d", "e"} {
		ops = append(ops, tOp{uid: uid, p: 1, states: []tState{unionState("topic-partition-offset-states", 1)}})
	}
	c := newContext(layoutOf(t, 4, ops...), rescale.Plan{}, &rescale.Result{}, nil, Options{FlinkVersion: "2.0"}, nil)
	fs := checkFlinkMajorUpgrade(c)
	if len(fs) != 1 || !strings.Contains(fs[0].Message, "and 2 more operators") || strings.Count(fs[0].Message, "FlinkKafkaConsumer state") != 3 {
		t.Fatalf("got %+v", fs)
	}
}
