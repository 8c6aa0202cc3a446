package findings

import (
	"bytes"
	"errors"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/checkpoint/checkpointtest"
	corpustest "github.com/flinkpreflight/preflight/internal/corpus"
	"github.com/flinkpreflight/preflight/internal/rescale"
)

// TestCorpus checks every real metadata file of the corpus at its stored parallelism, at 1, at
// twice the stored parallelism and at its max parallelism: no panic, every DENY explained by an
// ERROR finding with a message, and the counts logged. It skips when the corpus is absent.
func TestCorpus(t *testing.T) {
	files := corpustest.Metadata(t)
	if testing.Short() && len(files) > 60 {
		files = files[:60]
	}
	cat := DefaultCatalog()
	counts := map[string]int{}
	rules := map[string]int{}
	identified := map[string]int{}
	var denyStored []string
	for _, rel := range files {
		b, err := os.ReadFile(rel)
		if err != nil {
			counts["missing"]++
			continue
		}
		l, err := checkpoint.ReadLayout(bytes.NewReader(b))
		if err != nil {
			counts["undecodable"]++
			continue
		}
		counts["files"]++
		for i := range l.Operators {
			if e := Identify(&l.Operators[i], cat); e != nil {
				identified[e.ID]++
			}
		}
		twice, maxP := map[string]int{}, map[string]int{}
		for _, op := range l.Operators {
			if op.Parallelism > 0 {
				twice[op.ID.String()] = min(2*op.Parallelism, rescale.UpperBoundMaxParallelism)
			}
			if op.MaxParallelism > 0 && op.MaxParallelism <= rescale.UpperBoundMaxParallelism {
				maxP[op.ID.String()] = op.MaxParallelism
			}
		}
		for _, pc := range []struct {
			label string
			plan  rescale.Plan
		}{
			{"stored", rescale.Plan{}},
			{"p=1", rescale.Plan{DefaultParallelism: 1}},
			{"x2", rescale.Plan{Parallelism: twice}},
			{"maxP", rescale.Plan{Parallelism: maxP}},
		} {
			res, err := rescale.Simulate(l, pc.plan)
			if err != nil {
				var pe *rescale.PlanError
				if !errors.As(err, &pe) {
					t.Errorf("%s %s: Simulate: %v", rel, pc.label, err)
				}
				counts["plan-error "+pc.label]++
				continue
			}
			rep := Check(l, pc.plan, res, cat, Options{})
			counts[pc.label+" "+rep.Verdict.String()]++
			for _, f := range rep.Findings {
				rules[f.RuleID+" "+f.Severity.String()]++
				if f.Message == "" || f.Title == "" {
					t.Errorf("%s %s: finding without message: %+v", rel, pc.label, f)
				}
			}
			if rep.Verdict == Deny {
				reason := ""
				for _, f := range rep.Findings {
					if f.Severity >= Error {
						reason = f.RuleID
						break
					}
				}
				if reason == "" {
					t.Errorf("%s %s: DENY without an ERROR finding", rel, pc.label)
				}
				if pc.label == "stored" {
					denyStored = append(denyStored, rel+" ("+reason+")")
				}
			}
		}
	}
	logCounts(t, "outcomes", counts)
	logCounts(t, "findings", rules)
	logCounts(t, "catalog matches (operators)", identified)
	for _, d := range denyStored {
		t.Logf("DENY at stored parallelism: %s", d)
	}
}

func logCounts(t *testing.T, title string, m map[string]int) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString("\n  ")
		b.WriteString(k)
		b.WriteString(": ")
		b.WriteString(strconv.Itoa(m[k]))
	}
	t.Logf("%s:%s", title, b.String())
}

// TestCorpusJobWideParallelismPinned checks, on every real file of the corpus, that a job-wide
// parallelism of 2 raises no PF112 above INFO (Flink leaves operators with max parallelism 1 at 1),
// and that naming such an operator in the plan still gives PF112 ERROR.
func TestCorpusJobWideParallelismPinned(t *testing.T) {
	cat := DefaultCatalog()
	pinnedFiles := 0
	for rel, l := range checkpointtest.Decodable(corpustest.Metadata(t)) {
		jobWide := rescale.Plan{DefaultParallelism: 2}
		if res, err := rescale.Simulate(l, jobWide); err == nil {
			for _, f := range Check(l, jobWide, res, cat, Options{}).Findings {
				if f.RuleID == "PF112" && f.Severity > Info {
					t.Errorf("%s -p 2: %s %s on %s: %s", rel, f.RuleID, f.Severity, f.OperatorID, f.Message)
				}
			}
		}
		for _, op := range l.Operators {
			if op.MaxParallelism != 1 || op.Parallelism != 1 {
				continue
			}
			pinnedFiles++
			named := rescale.Plan{Parallelism: map[string]int{op.ID.String(): 2}}
			res, err := rescale.Simulate(l, named)
			if err != nil {
				t.Errorf("%s --set %s=2: %v", rel, op.ID, err)
				break
			}
			if !hasFinding(Check(l, named, res, cat, Options{}), "PF112", Error, op.ID.String()) {
				t.Errorf("%s --set %s=2: no PF112 ERROR", rel, op.ID)
			}
			break
		}
	}
	if pinnedFiles == 0 {
		t.Fatal("no corpus file has an operator with max parallelism 1: the test checks nothing")
	}
	t.Logf("%d files with a pinned operator", pinnedFiles)
}

func hasFinding(rep Report, rule string, sev Severity, opID string) bool {
	for _, f := range rep.Findings {
		if f.RuleID == rule && f.Severity == sev && f.OperatorID == opID {
			return true
		}
	}
	return false
}
