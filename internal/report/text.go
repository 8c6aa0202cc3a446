package report

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/flinkpreflight/preflight/internal/units"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// maxChartRows bounds the per-subtask chart of one operator; larger operators are summarised.
const maxChartRows = 16

// MaxCharts bounds the operators charted: the first ones in report order that findings name (a
// rescale of a hundred thousand operators may name every one; their charts would be most of
// the output and none of the insight).
const MaxCharts = 8

// WriteText renders a check report for a terminal: verdict, operators, findings with their fixes,
// the nearest safe parallelism, and a per-subtask chart of state before and after. The chart
// draws the operators' subtasks the report carries (all with include_subtasks, or the rows
// engine.SubtasksForChart picked). Output is streamed through a buffer, not built whole: a
// report of a million operators is written in constant extra memory.
func WriteText(w io.Writer, r *pb.RescaleReport) error {
	return writeText(w, r, nil, DefaultLimits)
}

// WriteTextTable is WriteText for a report that keeps only some operators (engine.Request.Each):
// the operators table comes from t, which holds every operator's row; r.Operators serves the
// charts and the labels of what findings name.
func WriteTextTable(w io.Writer, r *pb.RescaleReport, t *OperatorTable) error {
	return writeText(w, r, t, DefaultLimits)
}

// WriteTextLimited is WriteTextTable (t nil: WriteText) showing what lim allows.
func WriteTextLimited(w io.Writer, r *pb.RescaleReport, t *OperatorTable, lim Limits) error {
	return writeText(w, r, t, lim)
}

func writeText(w io.Writer, r *pb.RescaleReport, t *OperatorTable, lim Limits) error {
	if t == nil {
		t = &OperatorTable{ops: r.GetOperators()}
	}
	b := bufio.NewWriterSize(w, 64<<10)
	c := r.GetCheckpoint()
	fmt.Fprintf(b, "Flink Preflight: %s\n", c.GetSource())
	if line := checkpointLine(c); line != "" {
		fmt.Fprintf(b, "  %s\n", line)
	}
	if fv := r.GetFileVerification(); fv != nil {
		fmt.Fprintf(b, "  state files: %s\n", fv.GetSummary())
	}
	fmt.Fprintf(b, "\nVERDICT: %s\n", VerdictName(r.GetVerdict()))

	if t.Len() > 0 {
		b.WriteString("\nOPERATORS\n")
		t.write(b, lim.Operators)
		b.WriteString("\n")
		writeIndented(b, wrap(legend(operatorsLegend, false), 100), "  ")
	}

	b.WriteString("\nFINDINGS\n")
	if len(r.GetFindings()) == 0 {
		b.WriteString("  none\n")
	}
	idx := indexReferenced(r)
	fs := r.GetFindings()
	for _, f := range fs[:min(len(fs), lim.Findings)] {
		fmt.Fprintf(b, "  %-7s %s  %s\n", SeverityName(f.GetSeverity()), f.GetRuleId(), f.GetTitle())
		if where := findingWhere(f, idx.finding(f)); where != "" {
			fmt.Fprintf(b, "          %s\n", where)
		}
		writeIndented(b, f.GetMessage(), "          ")
		if f.GetRemediation() != "" {
			writeIndented(b, "Fix: "+f.GetRemediation(), "          ")
		}
		if len(f.GetReferences()) > 0 {
			fmt.Fprintf(b, "          Refs: %s\n", strings.Join(f.GetReferences(), ", "))
		}
	}
	if len(fs) > lim.Findings {
		fmt.Fprintf(b, "  %s\n", leftOutFindings(fs, lim.Findings))
	}

	if len(r.GetSafeParallelism()) > 0 {
		b.WriteString("\nNEAREST SAFE PARALLELISM\n")
		for _, s := range r.GetSafeParallelism() {
			fmt.Fprintf(b, "  %s: requested %d; below: %s; above: %s\n", idx.vertex(s),
				s.GetRequested(), orNone(s.GetBelow()), orNone(s.GetAbove()))
		}
	}

	writeCharts(b, r)
	return b.Flush()
}

// legendEntry explains one column, named as the text and the Markdown header call it ("" when
// the Markdown table has no such column).
type legendEntry struct{ text, markdown, meaning string }

// operatorsLegend explains the check's operators table in the same words in text and Markdown;
// the proto's field comments say the same for JSON.
var operatorsLegend = []legendEntry{
	{"OPERATOR STATE", "Operator state", "name, distribution mode × elements in the checkpoint"},
	{"KEYED", "Keyed", "keyed state in the checkpoint"},
	{"PAYLOAD/SUBTASK", "Payload/subtask", "the most state one new subtask receives in its deployment " +
		"(TaskDeploymentDescriptor: state handles, offsets, inline state; estimated), which must fit the RPC frame size"},
	{"", "", "In JSON: operators[].states (name, mode, elements), keyed.bytes and maxSubtaskPayloadBytes, in bytes."},
}

// writeInspectLegend writes the inspection's legend after a blank line.
func writeInspectLegend(w io.Writer, markdown bool) error {
	text := "\n" + wrap(legend(inspectLegend, false), 100) + "\n"
	if markdown {
		text = "\n_" + legend(inspectLegend, true) + "_\n"
	}
	_, err := io.WriteString(w, text)
	return err
}

// inspectLegend explains the inspection's columns.
var inspectLegend = []legendEntry{
	{"COORD", "", "operator coordinator state (restored whole, on the JobManager)"},
	{"OPERATOR STATE", "Operator state", "name, distribution mode × elements (bytes)"},
	{"KEYED", "Keyed", "keyed state and its handle kinds"},
	{"CHANNEL", "", "in-flight data of an unaligned checkpoint"},
	{"LOOKS LIKE", "Looks like", "the operator the catalog recognises by its state names"},
}

// legend writes a legend as sentences, naming each column as the format's header does.
func legend(entries []legendEntry, markdown bool) string {
	var parts []string
	for _, l := range entries {
		col := l.text
		if markdown {
			col = l.markdown
		}
		switch {
		case l.text == "":
			parts = append(parts, l.meaning)
		case col != "":
			parts = append(parts, col+": "+l.meaning+".")
		}
	}
	return strings.Join(parts, " ")
}

// wrap breaks text into lines of at most width runes at spaces.
func wrap(text string, width int) string {
	var b strings.Builder
	n := 0
	for i, word := range strings.Fields(text) {
		w := utf8.RuneCountInString(word)
		switch {
		case i == 0:
		case n+1+w > width:
			b.WriteByte('\n')
			n = 0
		default:
			b.WriteByte(' ')
			n++
		}
		b.WriteString(word)
		n += w
	}
	return b.String()
}

// operatorRow is the cells of one line of the operators table.
func operatorRow(op *pb.OperatorAssignment) [7]string {
	par := fmt.Sprintf("%d → %d", op.GetOldParallelism(), op.GetNewParallelism())
	if op.GetOldParallelism() == op.GetNewParallelism() {
		par = strconv.Itoa(int(op.GetNewParallelism()))
	}
	if op.GetFullyFinished() {
		par += " (finished)"
	}
	o := assignmentRef(op)
	return [7]string{o.column(), o.shortID(), par, strconv.Itoa(int(op.GetMaxParallelism())), statesCell(op.GetStates()),
		keyedCell(op), units.Bytes(op.GetMaxSubtaskPayloadBytes())}
}

// keyedCell is the KEYED column: keyed state bytes, "-" without keyed state.
func keyedCell(op *pb.OperatorAssignment) string {
	if k := op.GetKeyed(); k != nil && k.GetBytes() > 0 {
		return units.Bytes(k.GetBytes())
	}
	return "-"
}

// operatorHead is the operators table's header row.
var operatorHead = [7]string{"OPERATOR", "ID", "PARALLELISM", "MAX", "OPERATOR STATE", "KEYED", "PAYLOAD/SUBTASK"}

// OperatorTable is the text and Markdown reports' operators table. Built with Add, it keeps each
// row as its text and the operator's full ID (the characters + 8 bytes), not the operator's message (several hundred bytes),
// for a report of very many operators; WriteText builds one over the report's operators.
type OperatorTable struct {
	ops []*pb.OperatorAssignment // rows taken from messages (WriteText)
	// blocks hold the cells of the rows added, each cell its length (uvarint) then its bytes, a
	// row never split between blocks. Fixed-size blocks rather than one growing slice: doubling
	// a slice of a million rows would briefly need twice its memory.
	blocks [][]byte
	rows   int    // rows added
	width  [6]int // widest cell per column but the last, in runes, of the rows added
	// Keep is how many rows Add keeps; it only counts the others (0: every row). A report that
	// shows the first Limits.Operators rows needs no more: the rows of a million operators
	// are tens of MB of text (bench/README.md, "Many operators: one finding per rule and
	// cause").
	Keep int
}

// tableBlock is the size of an OperatorTable block.
const tableBlock = 64 << 10

// Add appends op's row.
func (t *OperatorTable) Add(op *pb.OperatorAssignment) {
	if t.Keep > 0 && t.rows >= t.Keep {
		t.rows++
		return
	}
	row := operatorRow(op)
	id := op.GetOperatorId() // Markdown shows the full ID
	n := binary.MaxVarintLen64 + len(id)
	for k, cell := range row {
		n += binary.MaxVarintLen64 + len(cell)
		if k < len(t.width) {
			t.width[k] = max(t.width[k], utf8.RuneCountInString(cell))
		}
	}
	if len(t.blocks) == 0 || cap(t.blocks[len(t.blocks)-1])-len(t.blocks[len(t.blocks)-1]) < n {
		t.blocks = append(t.blocks, make([]byte, 0, max(tableBlock, n)))
	}
	b := t.blocks[len(t.blocks)-1]
	for _, cell := range append(row[:], id) {
		b = binary.AppendUvarint(b, uint64(len(cell)))
		b = append(b, cell...)
	}
	t.blocks[len(t.blocks)-1] = b
	t.rows++
}

// Len is the number of rows.
func (t *OperatorTable) Len() int { return len(t.ops) + t.rows }

// write writes the first limit rows (and a line counting the others) as aligned columns (two
// spaces apart, widths in runes, as text/tabwriter aligns them) without holding more than one
// row's cells: tabwriter would buffer the whole table.
func (t *OperatorTable) write(b *bufio.Writer, limit int) {
	width := t.width
	measure := func(row [7]string, _ string) {
		for k := range width {
			width[k] = max(width[k], utf8.RuneCountInString(row[k]))
		}
	}
	ops := t.ops[:min(len(t.ops), limit)]
	if rest := limit - len(ops); t.rows > rest { // rows shown from the blocks: measure those only
		width = [6]int{}
		t.eachWithID(rest, measure)
	}
	measure(operatorHead, "")
	for _, op := range ops {
		measure(operatorRow(op), "")
	}
	line := func(row [7]string, _ string) {
		b.WriteString("  ")
		for k := range width {
			b.WriteString(row[k])
			b.WriteString(strings.Repeat(" ", width[k]-utf8.RuneCountInString(row[k])+2))
		}
		b.WriteString(row[6])
		b.WriteByte('\n')
	}
	line(operatorHead, "")
	t.rowsWithID(limit, line)
	if n := t.Len(); n > limit {
		b.WriteString("  " + leftOutOperators(n-limit) + "\n")
	}
}

// eachWithID calls f with the first limit rows added and their operators' full IDs.
func (t *OperatorTable) eachWithID(limit int, f func(row [7]string, id string)) {
	for _, cells := range t.blocks {
		for len(cells) > 0 {
			if limit <= 0 {
				return
			}
			limit--
			var cell [8]string // the row, then the full ID
			for k := range cell {
				n, w := binary.Uvarint(cells)
				cell[k], cells = string(cells[w:w+int(n)]), cells[w+int(n):]
			}
			f([7]string(cell[:7]), cell[7])
		}
	}
}

// rowsWithID calls f with the first limit rows of the table, from messages or added, and their
// operators' full IDs.
func (t *OperatorTable) rowsWithID(limit int, f func(row [7]string, id string)) {
	ops := t.ops[:min(len(t.ops), limit)]
	for _, op := range ops {
		f(operatorRow(op), op.GetOperatorId())
	}
	t.eachWithID(limit-len(ops), f)
}

func orNone(p int32) string {
	if p <= 0 {
		return "none"
	}
	return fmt.Sprintf("%d", p)
}

func statesCell(states []*pb.StateAssignment) string {
	if len(states) == 0 {
		return "-"
	}
	var parts []string
	for _, s := range states[:min(len(states), 3)] { // the rest only counted: an operator may have 300,000
		mode := s.GetMode()
		switch mode {
		case "SPLIT_DISTRIBUTE":
			mode = "split"
		case "UNION":
			mode = "union"
		case "BROADCAST":
			mode = "broadcast"
		}
		parts = append(parts, fmt.Sprintf("%s %s×%d", s.GetName(), mode, s.GetElements()))
	}
	if len(states) > 3 {
		parts = append(parts, fmt.Sprintf("+%d more", len(states)-3))
	}
	return strings.Join(parts, ", ")
}

func writeIndented(b io.StringWriter, text, indent string) {
	if strings.TrimSpace(text) == "" {
		return
	}
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		b.WriteString(indent + line + "\n")
	}
}

// writeCharts draws state per subtask before and after, for the operators that findings name (or,
// when nothing was found, the rescaled operator with the most state). Every index of either side
// gets a row: scaling down shows the old subtasks that disappear, scaling up the new ones.
func writeCharts(b *bufio.Writer, r *pb.RescaleReport) {
	named := map[string]bool{}
	for _, f := range r.GetFindings() {
		if f.GetOperatorId() != "" && f.GetSeverity() >= pb.Severity_SEVERITY_WARNING {
			named[f.GetOperatorId()] = true
			for _, id := range f.GetOperatorIds() { // a finding standing for many operators
				named[id] = true
			}
		}
	}
	var ops []*pb.OperatorAssignment
	for _, op := range r.GetOperators() {
		if named[op.GetOperatorId()] && len(op.GetSubtasks()) > 0 {
			ops = append(ops, op)
		}
	}
	if len(ops) == 0 {
		var best *pb.OperatorAssignment
		var bestBytes int64
		bestRescaled := false
		for _, op := range r.GetOperators() {
			if len(op.GetSubtasks()) == 0 {
				continue
			}
			var sum int64
			for _, row := range chartRows(op) {
				sum += maxInt64(row.before, row.after)
			}
			rescaled := op.GetOldParallelism() != op.GetNewParallelism()
			if best == nil || rescaled && !bestRescaled || rescaled == bestRescaled && sum > bestBytes {
				best, bestBytes, bestRescaled = op, sum, rescaled
			}
		}
		if best != nil && bestBytes > 0 {
			ops = append(ops, best)
		}
	}
	if len(ops) > MaxCharts {
		ops = ops[:MaxCharts]
	}
	for _, op := range ops {
		rows := chartRows(op)
		var max int64 = 1
		for _, row := range rows {
			max = maxInt64(max, maxInt64(row.before, row.after))
		}
		ref := assignmentRef(op)
		fmt.Fprintf(b, "\nSTATE PER SUBTASK: %s, parallelism %d → %d (before → after)\n",
			ref.withID(ref.shortID()), op.GetOldParallelism(), op.GetNewParallelism())
		shown := rows
		if len(rows) > maxChartRows {
			shown = pickChartRows(rows)
		}
		for _, row := range shown {
			before := fmt.Sprintf("%-20s %9s", "", "(new)")
			if row.before >= 0 {
				before = fmt.Sprintf("%s %9s", bar(row.before, max), units.Bytes(row.before))
			}
			after := fmt.Sprintf("%-20s %9s", "", "(removed)")
			if row.after >= 0 {
				after = fmt.Sprintf("%s %9s", bar(row.after, max), units.Bytes(row.after))
			}
			mark := ""
			if row.after >= 0 && row.empty {
				mark = "  ← empty"
			}
			fmt.Fprintf(b, "  %4d  %s  →  %s%s\n", row.index, before, after, mark)
		}
		total := len(rows)
		if n := int(max32(op.GetNewParallelism(), op.GetOldParallelism())); n > total {
			total = n // the report carries only the rows a chart shows (engine.SubtasksForChart)
		}
		if len(shown) < total {
			fmt.Fprintf(b, "  (%d of %d subtasks shown: the first, the last and the extremes)\n", len(shown), total)
		}
	}
	if len(ops) == MaxCharts && len(named) > MaxCharts {
		fmt.Fprintf(b, "\n(charts of the first %d of the %d operators that findings name; -o json --subtasks lists every subtask)\n", MaxCharts, len(named))
	}
}

// chartRow is one subtask index of a before/after chart; -1 marks a side without that index.
type chartRow struct {
	index         int32
	before, after int64
	empty         bool // the new subtask receives no operator-state element although the operator has some
}

// chartRows pairs before and after per subtask index, in ascending order: a row for every new
// subtask the report carries (the engine may carry only those a chart shows) and one for every
// old subtask a scale-down removes.
func chartRows(op *pb.OperatorAssignment) []chartRow {
	newP := int(op.GetNewParallelism())
	var rows []chartRow
	for _, s := range op.GetSubtasks() {
		rows = append(rows, chartRow{
			index:  s.GetIndex(),
			before: s.GetBytesBefore(),
			after:  s.GetStateBytes() + s.GetKeyedOwnedBytes(),
			empty:  s.GetElements() == 0 && len(op.GetStates()) > 0,
		})
	}
	for _, o := range op.GetOldSubtasks() {
		if int(o.GetIndex()) >= newP {
			rows = append(rows, chartRow{index: o.GetIndex(), before: o.GetBytes(), after: -1})
		}
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].index < rows[j].index })
	return rows
}

// pickChartRows keeps the first and last subtasks and the largest and smallest ones after the
// restore (and, among removed subtasks, the largest before it).
func pickChartRows(rows []chartRow) []chartRow {
	size := func(r chartRow) int64 { return maxInt64(r.after, r.before) }
	sorted := append([]chartRow(nil), rows...)
	sort.SliceStable(sorted, func(i, j int) bool { return size(sorted[i]) < size(sorted[j]) })
	keep := map[int32]bool{}
	for _, part := range [][]chartRow{rows[:4], rows[len(rows)-4:], sorted[:4], sorted[len(sorted)-4:]} {
		for _, r := range part {
			keep[r.index] = true
		}
	}
	var out []chartRow
	for _, r := range rows {
		if keep[r.index] {
			out = append(out, r)
		}
	}
	return out
}

func bar(v, max int64) string {
	const width = 20
	n := int(v * width / max)
	if v > 0 && n == 0 {
		n = 1
	}
	return strings.Repeat("█", n) + strings.Repeat(" ", width-n)
}

func maxInt64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// WriteInspectText renders an inspection for a terminal, with the legend of its columns.
func WriteInspectText(w io.Writer, r *pb.InspectCheckpointResponse) error {
	if err := writeInspectTable(w, r); err != nil {
		return err
	}
	return writeInspectLegend(w, false)
}

// writeInspectTable is WriteInspectText without the legend.
func writeInspectTable(w io.Writer, r *pb.InspectCheckpointResponse) error {
	var b strings.Builder
	c := r.GetCheckpoint()
	fmt.Fprintf(&b, "Flink Preflight: %s\n  %s\n\n", c.GetSource(), checkpointLine(c))
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "OPERATOR\tUID\tID\tPARALLELISM\tMAX\tCOORD\tOPERATOR STATE\tKEYED\tCHANNEL\tLOOKS LIKE")
	for _, op := range r.GetOperators() {
		par := fmt.Sprintf("%d", op.GetParallelism())
		if op.GetFullyFinished() {
			par += " (finished)"
		} else if op.GetFinishedSubtasks() > 0 {
			par += fmt.Sprintf(" (%d finished)", op.GetFinishedSubtasks())
		}
		keyed := "-"
		if op.GetKeyedBytes() > 0 || len(op.GetKeyedHandleKinds()) > 0 {
			keyed = units.Bytes(op.GetKeyedBytes()) + " " + strings.Join(op.GetKeyedHandleKinds(), ",")
		}
		channel := "-"
		if op.GetChannelStateBytes() > 0 {
			channel = units.Bytes(op.GetChannelStateBytes())
		}
		coord := "-"
		if op.GetCoordinatorStateBytes() > 0 {
			coord = units.Bytes(op.GetCoordinatorStateBytes())
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", inspectName(op), dash(op.GetUid()), op.GetOperatorId(), par,
			op.GetMaxParallelism(), coord, stateInfoCell(op.GetStates()), keyed, channel, dash(op.GetCatalogEntry()))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// inspectName is the OPERATOR column of an inspection, beside its UID and ID columns: the name,
// else the operator's position in the checkpoint ("operator #3").
func inspectName(op *pb.OperatorInfo) string {
	if op.GetName() != "" {
		return op.GetName()
	}
	return infoRef(op).unnamed()
}

func stateInfoCell(states []*pb.StateInfo) string {
	if len(states) == 0 {
		return "-"
	}
	var parts []string
	for _, s := range states {
		raw := ""
		if s.GetRaw() {
			raw = " raw"
		}
		parts = append(parts, fmt.Sprintf("%s %s%s×%d (%s)", s.GetName(), strings.ToLower(strings.TrimSuffix(s.GetMode(), "_DISTRIBUTE")), raw, s.GetElements(), units.Bytes(s.GetBytes())))
	}
	return strings.Join(parts, "; ")
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func max32(a, b int32) int32 {
	if a > b {
		return a
	}
	return b
}
