package lifecycle

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

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
