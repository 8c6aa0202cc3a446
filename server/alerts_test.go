package server

import (
	"context"
	"path/filepath"
	"regexp"
	"testing"

	"go.yaml.in/yaml/v3"

	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// TestAlertRulesUseExportedMetrics: the example alert rules parse, every rule has an expression,
// a severity and a summary, and every preflight_* series they use is one the server exports.
func TestAlertRulesUseExportedMetrics(t *testing.T) {
	raw := readFile(t, "../deploy/prometheus/alerts.yaml")
	var rules struct {
		Groups []struct {
			Name  string
			Rules []struct {
				Alert, Expr, For string
				Labels           map[string]string
				Annotations      map[string]string
			}
		}
	}
	if err := yaml.Unmarshal(raw, &rules); err != nil {
		t.Fatal(err)
	}
	h := startInProcess(t, Config{})
	meta := readFile(t, filepath.Join(testdataDir(t), "compact-sink", "_metadata"))
	if _, err := h.c.Check(context.Background(), &pb.CheckRescaleRequest{Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Metadata{Metadata: meta}}}); err != nil {
		t.Fatal(err)
	}
	families, err := h.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	exported := map[string]bool{}
	for _, f := range families {
		exported[f.GetName()] = true
		if f.GetType().String() == "HISTOGRAM" {
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				exported[f.GetName()+suffix] = true
			}
		}
	}
	series := regexp.MustCompile(`\bpreflight_[a-z_]+\b`)
	n := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			n++
			if r.Alert == "" || r.Expr == "" || r.Labels["severity"] == "" || r.Annotations["summary"] == "" {
				t.Errorf("rule %q: needs alert, expr, labels.severity and annotations.summary", r.Alert)
			}
			for _, name := range series.FindAllString(r.Expr, -1) {
				if !exported[name] {
					t.Errorf("rule %s uses %s, which preflightd does not export", r.Alert, name)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no rules")
	}
}
