package lifecycle

import (
	"fmt"
	"math"
	"sort"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/findings"
	"github.com/flinkpreflight/preflight/internal/units"
)

// DefaultFrameSize is Flink's default RPC frame size (pekko.framesize, 10485760b).
const DefaultFrameSize = 10 << 20

// Change values of operators and states.
const (
	Added     = "added"
	Removed   = "removed"
	Changed   = "changed"
	Unchanged = "unchanged"
)

// CheckpointInfo identifies one side of a diff or one point of a trend.
type CheckpointInfo struct {
	Source       string `json:"source"`
	CheckpointID int64  `json:"checkpoint_id"`
	Version      int    `json:"format_version"`
	Size         int64  `json:"metadata_bytes"`
}

// FormatText names the format version and the Flink releases that write it: "v4 (Flink 1.16-1.20)".
func (c CheckpointInfo) FormatText() string {
	if w := checkpoint.WrittenBy(c.Version); w != "" {
		return fmt.Sprintf("v%d (Flink %s)", c.Version, w)
	}
	return fmt.Sprintf("v%d", c.Version)
}

// StateDiff compares one state of an operator.
type StateDiff struct {
	Name        string `json:"name"`
	Kind        string `json:"kind"` // operator, keyed, coordinator, channel
	Change      string `json:"change"`
	OldMode     string `json:"old_mode,omitempty"`
	NewMode     string `json:"new_mode,omitempty"`
	OldElements int64  `json:"old_elements"`
	NewElements int64  `json:"new_elements"`
	OldBytes    int64  `json:"old_bytes"`
	NewBytes    int64  `json:"new_bytes"`
	OldSubtasks int    `json:"old_subtasks"`
	NewSubtasks int    `json:"new_subtasks"`
}

// OperatorDiff compares one operator.
type OperatorDiff struct {
	ID                string      `json:"id"`
	Name              string      `json:"name,omitempty"`
	UID               string      `json:"uid,omitempty"`
	Change            string      `json:"change"`
	OldParallelism    int         `json:"old_parallelism"`
	NewParallelism    int         `json:"new_parallelism"`
	OldMaxParallelism int         `json:"old_max_parallelism"`
	NewMaxParallelism int         `json:"new_max_parallelism"`
	OldKeyGroups      int         `json:"old_key_groups_covered"`
	NewKeyGroups      int         `json:"new_key_groups_covered"`
	States            []StateDiff `json:"states"`
}

// Finding is a growth signature found by Diff or Trend.
type Finding struct {
	ID       string `json:"id"`
	Severity string `json:"severity"` // INFO, WARNING, ERROR
	Title    string `json:"title"`
	Operator string `json:"operator,omitempty"`
	State    string `json:"state,omitempty"`
	Detail   string `json:"detail"`
}

// The findings' IDs.
const (
	FindingUnionGrowth     = "LC301" // a union state grew by about the parallelism
	FindingVanished        = "LC302" // state carried for an operator the job no longer has
	FindingFrameSize       = "LC303" // _metadata at or on course to the RPC frame size
	FindingOperatorDropped = "LC304" // an operator's state disappeared between the checkpoints
)

// DiffOptions tune the findings.
type DiffOptions struct {
	FrameSize    int64    // 0: DefaultFrameSize
	JobOperators []string // IDs or uids of the job's operators, when known
}

// DiffResult is the comparison of two checkpoints.
type DiffResult struct {
	Old       CheckpointInfo `json:"old"`
	New       CheckpointInfo `json:"new"`
	FrameSize int64          `json:"frame_size"`
	Operators []OperatorDiff `json:"operators"`
	Findings  []Finding      `json:"findings"`
}

// FormatChanged reports whether the two files have different format versions: their size
// difference is then partly the format's, not the state's.
func (d *DiffResult) FormatChanged() bool { return d.Old.Version != d.New.Version }

// Diff compares two Layouts operator by operator and state by state, and looks for growth
// signatures. Operators are matched by OperatorID; the order is NEW's file order, then the
// operators only OLD has.
func Diff(oldL, newL *checkpoint.Layout, oldSrc, newSrc string, opts DiffOptions) *DiffResult {
	frame := opts.FrameSize
	if frame <= 0 {
		frame = DefaultFrameSize
	}
	d := &DiffResult{Old: info(oldL, oldSrc), New: info(newL, newSrc), FrameSize: frame, Operators: []OperatorDiff{}, Findings: []Finding{}}
	oldOps := map[string]operatorSummary{}
	var oldOrder []string
	for i := range oldL.Operators {
		s := summarize(&oldL.Operators[i])
		oldOps[s.ID] = s
		oldOrder = append(oldOrder, s.ID)
	}
	seen := map[string]bool{}
	for i := range newL.Operators {
		n := summarize(&newL.Operators[i])
		seen[n.ID] = true
		o, ok := oldOps[n.ID]
		if !ok {
			d.Operators = append(d.Operators, operatorDiff(nil, &n))
			continue
		}
		d.Operators = append(d.Operators, operatorDiff(&o, &n))
	}
	for _, id := range oldOrder {
		if !seen[id] {
			o := oldOps[id]
			d.Operators = append(d.Operators, operatorDiff(&o, nil))
		}
	}
	d.Findings = diffFindings(d, opts)
	return d
}

func info(l *checkpoint.Layout, src string) CheckpointInfo {
	return CheckpointInfo{Source: src, CheckpointID: l.CheckpointID, Version: l.Version, Size: l.Size}
}

func operatorDiff(o, n *operatorSummary) OperatorDiff {
	var d OperatorDiff
	switch {
	case o == nil:
		d = OperatorDiff{ID: n.ID, Name: n.Name, UID: n.UID, Change: Added}
	case n == nil:
		d = OperatorDiff{ID: o.ID, Name: o.Name, UID: o.UID, Change: Removed}
	default:
		d = OperatorDiff{ID: n.ID, Name: firstNonEmpty(n.Name, o.Name), UID: firstNonEmpty(n.UID, o.UID), Change: Unchanged}
	}
	var oldStates, newStates []stateSummary
	if o != nil {
		d.OldParallelism, d.OldMaxParallelism, d.OldKeyGroups = o.Parallelism, o.MaxParallelism, o.KeyGroups
		oldStates = o.States
	}
	if n != nil {
		d.NewParallelism, d.NewMaxParallelism, d.NewKeyGroups = n.Parallelism, n.MaxParallelism, n.KeyGroups
		newStates = n.States
	}
	d.States = []StateDiff{}
	idx := map[string]int{}
	for _, s := range newStates {
		idx[s.Kind+"\x00"+s.Name] = len(d.States)
		d.States = append(d.States, StateDiff{Name: s.Name, Kind: s.Kind, Change: Added, NewMode: s.Mode, NewElements: s.Elements, NewBytes: s.Bytes, NewSubtasks: s.Subtasks})
	}
	for _, s := range oldStates {
		i, ok := idx[s.Kind+"\x00"+s.Name]
		if !ok {
			d.States = append(d.States, StateDiff{Name: s.Name, Kind: s.Kind, Change: Removed, OldMode: s.Mode, OldElements: s.Elements, OldBytes: s.Bytes, OldSubtasks: s.Subtasks})
			continue
		}
		st := &d.States[i]
		st.OldMode, st.OldElements, st.OldBytes, st.OldSubtasks = s.Mode, s.Elements, s.Bytes, s.Subtasks
		st.Change = Unchanged
		if st.OldMode != st.NewMode || st.OldElements != st.NewElements || st.OldBytes != st.NewBytes || st.OldSubtasks != st.NewSubtasks {
			st.Change = Changed
		}
	}
	if d.Change == Unchanged {
		if d.OldParallelism != d.NewParallelism || d.OldMaxParallelism != d.NewMaxParallelism || d.OldKeyGroups != d.NewKeyGroups {
			d.Change = Changed
		}
		for _, s := range d.States {
			if s.Change != Unchanged {
				d.Change = Changed
			}
		}
	}
	return d
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Label names an operator for people: name, uid and ID as far as known.
func (d *OperatorDiff) Label() string {
	switch {
	case d.Name != "" && d.UID != "":
		return fmt.Sprintf("%s (uid %s)", d.Name, d.UID)
	case d.Name != "":
		return d.Name
	case d.UID != "":
		return "uid " + d.UID
	}
	return d.ID
}

func diffFindings(d *DiffResult, opts DiffOptions) []Finding {
	out := []Finding{}
	job := map[string]bool{}
	for _, k := range opts.JobOperators {
		job[k] = true
		job[checkpoint.OperatorIDFromUID(k).String()] = true
	}
	for i := range d.Operators {
		op := &d.Operators[i]
		if op.Change == Removed {
			if hasState(op.States) {
				out = append(out, Finding{ID: FindingOperatorDropped, Severity: "INFO", Title: "operator state no longer in the checkpoint",
					Operator: op.Label(), Detail: fmt.Sprintf("%s had state in the old checkpoint and is absent from the new one: the job dropped it (restored with --allowNonRestoredState, or the uid changed).", op.Label())})
			}
			continue
		}
		if len(job) > 0 && !job[op.ID] && !(op.UID != "" && job[op.UID]) && hasNewState(op.States) {
			out = append(out, Finding{ID: FindingVanished, Severity: "WARNING", Title: "state carried for an operator the job no longer has",
				Operator: op.Label(), Detail: fmt.Sprintf("%s is not an operator of the job, yet the new checkpoint carries %s of its state; a restore needs --allowNonRestoredState and keeps paying for it. Remove it with `%s`.", op.Label(), units.Bytes(newBytes(op.States)), findings.PruneCommand(d.New.Source, op.ID, ""))})
		}
		for _, s := range op.States {
			if s.Kind != KindOperator || s.NewMode != "UNION" || s.OldElements <= 0 || s.NewElements <= s.OldElements {
				continue
			}
			r := float64(s.NewElements) / float64(s.OldElements)
			p := op.OldParallelism
			if near(r, float64(op.NewParallelism)) && !near(r, float64(p)) {
				p = op.NewParallelism
			}
			if r < 1.5 {
				continue
			}
			f := Finding{ID: FindingUnionGrowth, Severity: "INFO", Title: "union state grew", Operator: op.Label(), State: s.Name,
				Detail: fmt.Sprintf("UNION state %q grew ×%.2f (%d → %d elements, %s → %s).", s.Name, r, s.OldElements, s.NewElements, units.Bytes(s.OldBytes), units.Bytes(s.NewBytes))}
			if p > 1 && near(r, float64(p)) {
				f.Severity, f.Title = "WARNING", "union state grows by the parallelism per restore"
				f.Detail = fmt.Sprintf("UNION state %q grew ×%.2f ≈ the parallelism %d (%d → %d elements, %s → %s): on restore every subtask receives all entries and writes them all back, so each restore multiplies it by the parallelism. This is the signature of an orphaned union state, e.g. FlinkKafkaConsumer's topic-partition-offset-states kept after a migration to KafkaSource; at this rate %s. Remove it with `%s`.",
					s.Name, r, p, s.OldElements, s.NewElements, units.Bytes(s.OldBytes), units.Bytes(s.NewBytes), forecastText(d.New.Size, r, d.FrameSize, "restore"), findings.PruneCommand(d.New.Source, op.ID, s.Name))
			}
			out = append(out, f)
		}
	}
	oldSize := d.Old.Size
	if d.FormatChanged() {
		oldSize = 0 // a new format's size is no growth to forecast from
	}
	if f, ok := frameFinding(oldSize, d.New.Size, d.FrameSize, "checkpoint"); ok {
		out = append(out, f)
	}
	sort.SliceStable(out, func(i, j int) bool { return severityRank(out[i].Severity) > severityRank(out[j].Severity) })
	return out
}

// frameFinding reports a _metadata at or heading for the frame size, given two consecutive sizes.
func frameFinding(oldSize, newSize, frame int64, step string) (Finding, bool) {
	f := Finding{ID: FindingFrameSize, Title: "_metadata at or on course to exceed the RPC frame size"}
	if newSize >= frame {
		f.Severity = "ERROR"
		f.Detail = fmt.Sprintf("_metadata is %s, at least the RPC frame size %s: task deployment descriptors carrying its state offsets can exceed the frame and the restore hangs (raise pekko.framesize or remove the state).", units.Bytes(newSize), units.Bytes(frame))
		return f, true
	}
	if oldSize <= 0 || newSize <= oldSize {
		return f, false
	}
	r := float64(newSize) / float64(oldSize)
	if r < 1.05 {
		return f, false
	}
	k := stepsToExceed(newSize, r, frame)
	f.Severity = "INFO"
	if k <= 10 {
		f.Severity = "WARNING"
	}
	f.Detail = fmt.Sprintf("_metadata grew ×%.2f (%s → %s); at this rate %s.", r, units.Bytes(oldSize), units.Bytes(newSize), forecastText(newSize, r, frame, step))
	return f, true
}

// stepsToExceed is how many more steps of growth factor r take size past frame.
func stepsToExceed(size int64, r float64, frame int64) int {
	if size >= frame {
		return 0
	}
	if r <= 1 {
		return math.MaxInt32
	}
	return int(math.Ceil(math.Log(float64(frame)/float64(size)) / math.Log(r)))
}

func forecastText(size int64, r float64, frame int64, step string) string {
	k := stepsToExceed(size, r, frame)
	if k == math.MaxInt32 {
		return "it does not grow"
	}
	if k <= 0 {
		return fmt.Sprintf("the frame size of %s is already exceeded", units.Bytes(frame))
	}
	s := "s"
	if k == 1 {
		s = ""
	}
	return fmt.Sprintf("the frame size of %s is exceeded after about %d more %s%s", units.Bytes(frame), k, step, s)
}

// near reports whether r is within 25% of p.
func near(r, p float64) bool { return p > 0 && math.Abs(r-p) <= 0.25*p }

func hasState(ss []StateDiff) bool {
	for _, s := range ss {
		if s.OldBytes > 0 || s.OldElements > 0 || s.NewBytes > 0 || s.NewElements > 0 {
			return true
		}
	}
	return false
}

func hasNewState(ss []StateDiff) bool {
	for _, s := range ss {
		if s.NewBytes > 0 || s.NewElements > 0 {
			return true
		}
	}
	return false
}

func newBytes(ss []StateDiff) int64 {
	var n int64
	for _, s := range ss {
		n += s.NewBytes
	}
	return n
}

func severityRank(s string) int {
	switch s {
	case "ERROR":
		return 3
	case "WARNING":
		return 2
	}
	return 1
}
