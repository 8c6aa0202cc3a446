package statefiles

import (
	"fmt"
	"sort"
	"strings"

	"github.com/flinkpreflight/preflight/internal/units"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// namedFiles is how many files a finding's message names before it counts the rest.
const namedFiles = 5

// Summary is the FileVerification message of the result: the counts, the one-line summary and
// every problem (files not verified in time are only counted).
func (r *Result) Summary() *pb.FileVerification {
	v := &pb.FileVerification{Referenced: int64(len(r.Files))}
	if r.Err != nil {
		v.Summary = "state files not verified: " + publicMsg(r.Err)
		return v
	}
	for i := range r.Files {
		o := &r.Outcomes[i]
		switch {
		case !o.Checked:
			v.NotVerified++
			continue
		case o.Kind == pb.FileProblemKind_FILE_PROBLEM_KIND_UNSPECIFIED:
			v.Verified++
			continue
		case o.Kind == pb.FileProblemKind_FILE_PROBLEM_KIND_MISSING:
			v.Missing++
		case o.Kind == pb.FileProblemKind_FILE_PROBLEM_KIND_WRONG_SIZE:
			v.WrongSize++
		case o.Kind == pb.FileProblemKind_FILE_PROBLEM_KIND_PERMISSION_DENIED:
			v.Denied++
		case o.Kind == pb.FileProblemKind_FILE_PROBLEM_KIND_CANNOT_VERIFY:
			v.Unverifiable++
		default:
			v.NotVerified++
		}
		f := &r.Files[i]
		uri := f.URI
		if uri == "" {
			uri = f.Recorded
		}
		v.Problems = append(v.Problems, &pb.FileProblem{
			Uri: uri, RecordedPath: f.Recorded, Kind: o.Kind, ExpectedSize: expected(f), AtLeast: f.Size < 0 || f.SizeConflict,
			ActualSize: o.Actual * boolInt(o.Kind == pb.FileProblemKind_FILE_PROBLEM_KIND_WRONG_SIZE),
			OperatorId: f.Operator.String(), Subtask: int32(f.Subtask), Detail: o.Detail,
		})
	}
	v.Referenced += r.Skipped
	v.NotVerified += r.Skipped
	v.Summary = summaryLine(v)
	return v
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// expected is the size a file must have: the recorded one, or the least one.
func expected(f *File) int64 {
	if f.Size >= 0 && !f.SizeConflict {
		return f.Size
	}
	return f.MinSize
}

// summaryLine is "10,000 files verified", "4 of 10,000 files missing or wrong", with what was
// not verified after it.
func summaryLine(v *pb.FileVerification) string {
	n := units.Thousands(v.Referenced)
	files := "files"
	if v.Referenced == 1 {
		files = "file"
	}
	bad := v.Missing + v.WrongSize + v.Denied
	var s string
	switch {
	case v.Referenced == 0:
		return "no state files referenced (all state inline in _metadata)"
	case bad > 0:
		s = fmt.Sprintf("%s of %s %s missing or wrong", units.Thousands(bad), n, files)
	case v.Verified == v.Referenced:
		return fmt.Sprintf("%s %s verified", n, files)
	default:
		s = fmt.Sprintf("%s of %s %s verified", units.Thousands(v.Verified), n, files)
	}
	var rest []string
	if bad > 0 {
		rest = append(rest, units.Thousands(v.Verified)+" verified")
	}
	if v.Unverifiable > 0 {
		rest = append(rest, units.Thousands(v.Unverifiable)+" cannot be verified")
	}
	if v.NotVerified > 0 {
		rest = append(rest, units.Thousands(v.NotVerified)+" not verified")
	}
	if len(rest) > 0 {
		s += " (" + strings.Join(rest, ", ") + ")"
	}
	return s
}

// Findings are the result's findings: one PF210 per kind of problem (missing, wrong size,
// refused) and one PF211 per reason files could not be verified, each naming the first files by
// URI and counting the rest.
func (r *Result) Findings() []*pb.Finding {
	if r.Err != nil {
		return []*pb.Finding{{RuleId: unverifiedRule.ID, Title: unverifiedRule.Title, Severity: pb.Severity_SEVERITY_WARNING,
			Message:     "The state files the checkpoint references were not verified: " + publicMsg(r.Err) + ".",
			Remediation: unverifiedRule.Remedies[0].Text}}
	}
	groups := map[string][]int{}
	var order []string
	for i := range r.Files {
		o := &r.Outcomes[i]
		key := o.Kind.String()
		switch {
		case !o.Checked:
			key = "not-verified"
		case o.Kind == pb.FileProblemKind_FILE_PROBLEM_KIND_UNSPECIFIED:
			continue
		case o.Kind == pb.FileProblemKind_FILE_PROBLEM_KIND_CANNOT_VERIFY || o.Kind == pb.FileProblemKind_FILE_PROBLEM_KIND_UNAVAILABLE:
			key += "|" + o.Detail
		}
		if _, ok := groups[key]; !ok {
			order = append(order, key)
		}
		groups[key] = append(groups[key], i)
	}
	sort.Strings(order)
	var out []*pb.Finding
	for _, key := range order {
		out = append(out, r.finding(key, groups[key]))
	}
	if r.Skipped > 0 {
		out = append(out, &pb.Finding{RuleId: unverifiedRule.ID, Title: unverifiedRule.Title, Severity: pb.Severity_SEVERITY_WARNING,
			Message: fmt.Sprintf("The checkpoint references more than %s distinct state files: %s references past them were not verified.",
				units.Thousands(MaxFiles), units.Thousands(r.Skipped)),
			Remediation: unverifiedRule.Remedies[0].Text})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].GetSeverity() > out[j].GetSeverity() })
	return out
}

// finding is the finding for one group of files (indexes into r.Files, ascending by URI).
func (r *Result) finding(key string, idx []int) *pb.Finding {
	total := units.Thousands(int64(len(r.Files)))
	n := int64(len(idx))
	first := &r.Outcomes[idx[0]]
	meta, sev := &missingRule, pb.Severity_SEVERITY_ERROR
	var msg string
	switch {
	case key == "not-verified":
		meta, sev = &unverifiedRule, pb.Severity_SEVERITY_WARNING
		msg = fmt.Sprintf("%s of %s state files were not verified before the verification's budget ran out: %s.",
			units.Thousands(n), total, r.names(idx, false))
	case first.Kind == pb.FileProblemKind_FILE_PROBLEM_KIND_MISSING:
		msg = fmt.Sprintf("%s of %s state files the checkpoint references %s missing: %s. The restore fails with FileNotFoundException.",
			units.Thousands(n), total, verb(n), r.names(idx, false))
	case first.Kind == pb.FileProblemKind_FILE_PROBLEM_KIND_WRONG_SIZE:
		msg = fmt.Sprintf("%s of %s state files the checkpoint references %s not the size recorded: %s. The restore reads past the end of the file or misreads it.",
			units.Thousands(n), total, verb(n), r.names(idx, true))
	case first.Kind == pb.FileProblemKind_FILE_PROBLEM_KIND_PERMISSION_DENIED:
		msg = fmt.Sprintf("%s of %s state files the checkpoint references %s refused (%s): %s. The restore fails unless the job reads them as another identity.",
			units.Thousands(n), total, verb(n), first.Detail, r.names(idx, false))
	default:
		meta, sev = &unverifiedRule, pb.Severity_SEVERITY_WARNING
		msg = fmt.Sprintf("Cannot verify %s of %s state files the checkpoint references (%s): %s.",
			units.Thousands(n), total, first.Detail, r.names(idx, false))
	}
	f := &pb.Finding{RuleId: meta.ID, Title: meta.Title, Severity: sev, Message: msg, Remediation: meta.Remedies[0].Text,
		References: append([]string(nil), meta.References...)}
	if op := r.Files[idx[0]].Operator; r.oneOperator(idx) {
		f.OperatorId = op.String()
	}
	return f
}

func verb(n int64) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// oneOperator reports whether every file of the group belongs to the first one's operator.
func (r *Result) oneOperator(idx []int) bool {
	for _, i := range idx[1:] {
		if r.Files[i].Operator != r.Files[idx[0]].Operator {
			return false
		}
	}
	return true
}

// names names the first files of the group (with the sizes recorded and found when sizes is
// set) and counts the rest.
func (r *Result) names(idx []int, sizes bool) string {
	shown := min(len(idx), namedFiles)
	if len(idx) == namedFiles+1 {
		shown = len(idx)
	}
	parts := make([]string, 0, shown+1)
	for _, i := range idx[:shown] {
		f := &r.Files[i]
		name := f.URI
		if name == "" {
			name = f.Recorded
		}
		s := "`" + name + "`"
		if sizes {
			want := "recorded " + units.Thousands(expected(f)) + " bytes"
			if f.Size < 0 || f.SizeConflict {
				want = "segments end at " + units.Thousands(f.MinSize) + " bytes"
			}
			s += fmt.Sprintf(" (%s, found %s)", want, units.Thousands(r.Outcomes[i].Actual))
		}
		parts = append(parts, s)
	}
	if rest := len(idx) - shown; rest > 0 {
		parts = append(parts, units.Thousands(int64(rest))+" more")
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// Apply adds the result's findings and summary to a check's report and updates its verdict
// with fail (UNSPECIFIED means ERROR), as the engine judges its own findings.
func (r *Result) Apply(rep *pb.RescaleReport, fail pb.Severity) {
	if fail == pb.Severity_SEVERITY_UNSPECIFIED {
		fail = pb.Severity_SEVERITY_ERROR
	}
	rep.FileVerification = r.Summary()
	fs := r.Findings()
	rep.Findings = append(rep.Findings, fs...)
	sort.SliceStable(rep.Findings, func(a, b int) bool { return rep.Findings[a].GetSeverity() > rep.Findings[b].GetSeverity() })
	for _, f := range fs {
		switch {
		case f.GetSeverity() >= fail:
			rep.Verdict = pb.Verdict_VERDICT_DENY
		case f.GetSeverity() >= pb.Severity_SEVERITY_WARNING && rep.Verdict == pb.Verdict_VERDICT_ALLOW:
			rep.Verdict = pb.Verdict_VERDICT_ALLOW_WITH_WARNINGS
		}
	}
}
