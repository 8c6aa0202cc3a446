package lifecycle

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/report"
	"github.com/flinkpreflight/preflight/internal/scenarios"
)

func TestTrendSeries(t *testing.T) {
	series := scenarios.KafkaOrphanUnionSeries()
	tb := NewTrend(0, 2)
	// Added out of order: the result orders by checkpoint ID.
	for i := len(series) - 1; i >= 0; i-- {
		tb.Add(layoutOf(t, series[i].Build()), series[i].Folder)
	}
	r := tb.Result()
	if len(r.Points) != len(series) {
		t.Fatalf("%d points", len(r.Points))
	}
	for i, p := range r.Points {
		if p.CheckpointID != series[i].CheckpointID || len(p.TopStates) != 2 {
			t.Fatalf("point %d: %+v", i, p)
		}
	}
	if last := r.Points[len(r.Points)-1]; last.TopStates[0].Name != "topic-partition-offset-states" {
		t.Errorf("largest state of the last point: %+v", last.TopStates[0])
	}
	if r.GrowthFactor < 1.5 || r.StepsToFrame <= 0 || r.StepsToFrame > 20 || r.StepsToFrameLinear <= r.StepsToFrame {
		t.Errorf("growth ×%.2f, steps %d (linear %d)", r.GrowthFactor, r.StepsToFrame, r.StepsToFrameLinear)
	}
	if got := findingIDs(r.Findings); got != "WARNING LC303,WARNING LC301" {
		t.Errorf("findings %q", got)
	}
	for _, f := range []report.Format{report.Text, report.Markdown, report.JSON} {
		var b bytes.Buffer
		if err := WriteTrend(&b, f, r); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "exceeded after about") {
			t.Errorf("%s lacks the forecast:\n%s", f, b.String())
		}
		if f == report.JSON {
			var back TrendResult
			if err := json.Unmarshal(b.Bytes(), &back); err != nil || back.StepsToFrame != r.StepsToFrame {
				t.Errorf("json round trip: %v", err)
			}
		}
	}
}

func TestTrendEdges(t *testing.T) {
	one := scenarios.KafkaOrphanUnionSeries()[0]
	tests := []struct {
		name     string
		frame    int64
		n        int
		forecast string
		findings string
	}{
		{"empty", 0, 0, "no checkpoints", ""},
		{"one", 0, 1, "no growth rate yet", ""},
		{"flat", 0, 3, "does not grow", ""},
		{"already past", 1 << 10, 2, "already exceeds", "ERROR LC303"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := NewTrend(tt.frame, 0)
			for i := 0; i < tt.n; i++ {
				tb.Add(layoutOf(t, one.Build()), "x")
			}
			r := tb.Result()
			if !strings.Contains(r.Forecast, tt.forecast) || findingIDs(r.Findings) != tt.findings {
				t.Errorf("forecast %q findings %q", r.Forecast, findingIDs(r.Findings))
			}
		})
	}
}

// TestTrendFormatChange: a format change between two points is not growth: no forecast until two
// points share the new format, and then growth is measured in the new format only.
func TestTrendFormatChange(t *testing.T) {
	base := layoutOf(t, scenarios.KafkaOrphanUnionSeries()[0].Build())
	point := func(id int64, version int, size int64) *checkpoint.Layout {
		l := withFormat(base, version, size)
		l.CheckpointID = id
		return l
	}
	for _, tc := range []struct {
		name     string
		points   []*checkpoint.Layout
		forecast string
		findings string
		at       int64
	}{
		{"v4 then v6", []*checkpoint.Layout{point(1, 4, 3100), point(2, 6, 3400)}, "format changed at checkpoint 2", "", 2},
		{"v4, v6, v6 flat", []*checkpoint.Layout{point(1, 4, 1000), point(2, 6, 3400), point(3, 6, 3400)}, "does not grow", "", 2},
		{"v4, v6, v6 growing", []*checkpoint.Layout{point(1, 4, 1000), point(2, 6, 3400), point(3, 6, 6800)}, "×2.00", "INFO LC303", 2},
		{"one format", []*checkpoint.Layout{point(1, 6, 3400), point(2, 6, 3400)}, "does not grow", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb := NewTrend(0, 0)
			for _, l := range tc.points {
				tb.Add(l, "x")
			}
			r := tb.Result()
			if !strings.Contains(r.Forecast, tc.forecast) || findingIDs(r.Findings) != tc.findings || r.FormatChangedAt != tc.at {
				t.Errorf("forecast %q, findings %q, format changed at %d", r.Forecast, findingIDs(r.Findings), r.FormatChangedAt)
			}
		})
	}
}
