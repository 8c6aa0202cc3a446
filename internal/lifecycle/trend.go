package lifecycle

import (
	"fmt"
	"math"
	"sort"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/findings"
	"github.com/flinkpreflight/preflight/internal/units"
)

// StateSize is one state's size at one checkpoint.
type StateSize struct {
	Operator string `json:"operator"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
	Mode     string `json:"mode,omitempty"`
	Elements int64  `json:"elements"`
	Bytes    int64  `json:"bytes"`
}

// TrendPoint is one checkpoint of a series.
type TrendPoint struct {
	CheckpointInfo
	TopStates []StateSize `json:"top_states"` // largest first, by bytes then elements
}

// TrendResult is a series of checkpoints of one job, oldest first, with its growth and forecast.
type TrendResult struct {
	Points    []TrendPoint `json:"points"`
	FrameSize int64        `json:"frame_size"`
	// GrowthFactor is the geometric mean of the _metadata size ratio between consecutive
	// points of the newest format; GrowthBytes the mean size change per point. Both 0 with
	// fewer than two such points.
	GrowthFactor float64 `json:"growth_factor"`
	GrowthBytes  float64 `json:"growth_bytes_per_checkpoint"`
	// FormatChangedAt is the first checkpoint of the newest format when an older point has
	// another format version (0 otherwise): growth is measured from there on.
	FormatChangedAt int64 `json:"format_changed_at,omitempty"`
	// StepsToFrame is how many more checkpoints at GrowthFactor take _metadata past the frame
	// size (compounding, the union-state pattern); StepsToFrameLinear the same at GrowthBytes.
	// -1 when it does not grow; 0 when already past.
	StepsToFrame       int       `json:"steps_to_frame"`
	StepsToFrameLinear int       `json:"steps_to_frame_linear"`
	Forecast           string    `json:"forecast"`
	Findings           []Finding `json:"findings"`
}

// TrendBuilder accumulates a series one Layout at a time and keeps only per-point summaries,
// so memory is bounded by the number of points and states, not by the files.
type TrendBuilder struct {
	frame int64
	top   int
	pts   []TrendPoint
	// unions holds, per point, the UNION states' element counts and operator parallelism, for
	// the ×P signature between consecutive points.
	unions []map[string]unionAt
}

type unionAt struct {
	op, id      string
	elements    int64
	parallelism int
}

// NewTrend starts a series; frame 0 means DefaultFrameSize, top the states kept per point.
func NewTrend(frame int64, top int) *TrendBuilder {
	if frame <= 0 {
		frame = DefaultFrameSize
	}
	if top <= 0 {
		top = 3
	}
	return &TrendBuilder{frame: frame, top: top}
}

// Add records one checkpoint; the Layout is not retained.
func (t *TrendBuilder) Add(l *checkpoint.Layout, src string) {
	p := TrendPoint{CheckpointInfo: info(l, src)}
	unions := map[string]unionAt{}
	var all []StateSize
	for i := range l.Operators {
		s := summarize(&l.Operators[i])
		label := (&OperatorDiff{ID: s.ID, Name: s.Name, UID: s.UID}).Label()
		for _, st := range s.States {
			all = append(all, StateSize{Operator: label, Name: st.Name, Kind: st.Kind, Mode: st.Mode, Elements: st.Elements, Bytes: st.Bytes})
			if st.Kind == KindOperator && st.Mode == "UNION" {
				unions[s.ID+"\x00"+st.Name] = unionAt{op: label, id: s.ID, elements: st.Elements, parallelism: s.Parallelism}
			}
		}
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].Bytes != all[j].Bytes {
			return all[i].Bytes > all[j].Bytes
		}
		return all[i].Elements > all[j].Elements
	})
	if len(all) > t.top {
		all = all[:t.top]
	}
	p.TopStates = all
	t.pts = append(t.pts, p)
	t.unions = append(t.unions, unions)
}

// Result orders the points by checkpoint ID and computes growth, forecast and findings.
func (t *TrendBuilder) Result() *TrendResult {
	idx := make([]int, len(t.pts))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return t.pts[idx[a]].CheckpointID < t.pts[idx[b]].CheckpointID })
	r := &TrendResult{FrameSize: t.frame, Points: make([]TrendPoint, 0, len(idx)), Findings: []Finding{}, StepsToFrame: -1, StepsToFrameLinear: -1}
	unions := make([]map[string]unionAt, 0, len(idx))
	for _, i := range idx {
		r.Points = append(r.Points, t.pts[i])
		unions = append(unions, t.unions[i])
	}
	n := len(r.Points)
	if n == 0 {
		r.Forecast = "no checkpoints"
		return r
	}
	last := r.Points[n-1].Size
	if last >= t.frame {
		r.StepsToFrame, r.StepsToFrameLinear = 0, 0
	}
	// Growth is measured over the last points of the newest format only: a format change moves
	// the size without any state growing.
	from := n - 1
	for from > 0 && r.Points[from-1].Version == r.Points[n-1].Version {
		from--
	}
	if from > 0 {
		r.FormatChangedAt = r.Points[from].CheckpointID
	}
	if steps := n - 1 - from; steps >= 1 {
		first := r.Points[from].Size
		if first > 0 && last > 0 {
			r.GrowthFactor = math.Pow(float64(last)/float64(first), 1/float64(steps))
		}
		r.GrowthBytes = float64(last-first) / float64(steps)
		if last < t.frame {
			if r.GrowthFactor > 1 {
				r.StepsToFrame = stepsToExceed(last, r.GrowthFactor, t.frame)
			}
			if r.GrowthBytes > 0 {
				r.StepsToFrameLinear = int(math.Ceil(float64(t.frame-last) / r.GrowthBytes))
			}
		}
	}
	r.Forecast = trendForecast(r)
	if f, ok := trendFrameFinding(r); ok {
		r.Findings = append(r.Findings, f)
	}
	// The ×P signature between the last two points that carry the union state.
	if n >= 2 {
		prev, cur := unions[n-2], unions[n-1]
		keys := make([]string, 0, len(cur))
		for k := range cur {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			c, p := cur[k], prev[k]
			if p.elements <= 0 || c.elements <= p.elements {
				continue
			}
			ratio := float64(c.elements) / float64(p.elements)
			if p.parallelism > 1 && near(ratio, float64(p.parallelism)) {
				_, name, _ := cutNul(k)
				r.Findings = append(r.Findings, Finding{ID: FindingUnionGrowth, Severity: "WARNING", Title: "union state grows by the parallelism per restore",
					Operator: c.op, State: name, Detail: fmt.Sprintf("UNION state %q grew ×%.2f ≈ the parallelism %d between the last two checkpoints (%d → %d elements): every restore hands each subtask all entries and each writes them back. Remove it with `%s`.", name, ratio, p.parallelism, p.elements, c.elements, findings.PruneCommand(r.Points[n-1].Source, c.id, name))})
			}
		}
	}
	sort.SliceStable(r.Findings, func(i, j int) bool {
		return severityRank(r.Findings[i].Severity) > severityRank(r.Findings[j].Severity)
	})
	return r
}

func cutNul(k string) (string, string, bool) {
	for i := 0; i < len(k); i++ {
		if k[i] == 0 {
			return k[:i], k[i+1:], true
		}
	}
	return k, "", false
}

func trendForecast(r *TrendResult) string {
	n := len(r.Points)
	frame := units.Bytes(r.FrameSize)
	switch {
	case r.StepsToFrame == 0:
		return fmt.Sprintf("_metadata (%s) already exceeds the frame size of %s", units.Bytes(r.Points[n-1].Size), frame)
	case n < 2:
		return "one checkpoint: no growth rate yet"
	case r.FormatChangedAt != 0 && r.Points[n-2].CheckpointID < r.FormatChangedAt:
		return fmt.Sprintf("the format changed at checkpoint %d (%s → %s): no growth rate until two checkpoints share the new format",
			r.FormatChangedAt, r.Points[n-2].FormatText(), r.Points[n-1].FormatText())
	case r.StepsToFrame < 0 && r.StepsToFrameLinear < 0:
		return fmt.Sprintf("_metadata does not grow (×%.2f per checkpoint); the frame size of %s is not in reach", r.GrowthFactor, frame)
	}
	return fmt.Sprintf("at this rate (×%.2f, +%s per checkpoint) the frame size of %s is exceeded after about %d more checkpoints (about %d if growth were linear)",
		r.GrowthFactor, units.Bytes(int64(r.GrowthBytes)), frame, r.StepsToFrame, r.StepsToFrameLinear)
}

func trendFrameFinding(r *TrendResult) (Finding, bool) {
	f := Finding{ID: FindingFrameSize, Title: "_metadata at or on course to exceed the RPC frame size", Detail: r.Forecast + "."}
	switch {
	case r.StepsToFrame == 0:
		f.Severity = "ERROR"
	case r.StepsToFrame > 0 && r.StepsToFrame <= 10:
		f.Severity = "WARNING"
	case r.StepsToFrame > 0 && r.GrowthFactor >= 1.05:
		f.Severity = "INFO"
	default:
		return f, false
	}
	return f, true
}
