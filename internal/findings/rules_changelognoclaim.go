package findings

import (
	"fmt"
	"strings"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/units"
)

// Restore modes (Options.RestoreMode): Flink's RestoreMode / RecoveryClaimMode, as the CLI's
// --restore-mode spells them.
const (
	RestoreClaim   = "claim"
	RestoreNoClaim = "no-claim"
	RestoreLegacy  = "legacy"
)

// changelogNoClaim is PF191.
var changelogNoClaim = RuleMeta{
	ID:       "PF191",
	Title:    "Changelog state backend restored in NO_CLAIM mode: every checkpoint after the restore fails",
	Severity: Error,
	Grading:  "WARNING when the restore mode is not given (--restore-mode): Flink's default, NO_CLAIM, is assumed.",
	Cause: "Keyed state handles of types 8, 9, 10, 13 and 14 in _metadata are the Changelog state backend's " +
		"(state.changelog.enabled). After a NO_CLAIM restore (Flink's default since 1.15, FLINK-25192) the first checkpoint " +
		"must be a full snapshot, and ChangelogStateBackend does not support one (supportsNoClaimRestoreMode() is false): the " +
		"restore succeeds, then every checkpoint is declined with IllegalStateException \"Configured state backend " +
		"(ChangelogStateBackend) does not support enforcing a full snapshot. If you are restoring in NO_CLAIM mode, please " +
		"consider choosing CLAIM mode.\" This was reported as a bug (FLINK-38307) and documented as a limitation (FLINK-40476). " +
		"Flink before 1.15 has no restore modes. The rule assumes the restored job keeps the changelog backend enabled.",
	Remedies: []Remedy{{Text: "Restore in CLAIM mode (flink run -claimMode CLAIM, or execution.state-recovery.claim-mode: CLAIM; " +
		"on 1.15-1.19 -restoreMode CLAIM or execution.savepoint-restore-mode: CLAIM); Flink then owns the snapshot and may " +
		"delete it, so copy it first if you need to keep it. Or disable the changelog backend (state.changelog.enabled: false) " +
		"for this restore; re-enable it after the first completed checkpoint."}},
	References: []string{"https://issues.apache.org/jira/browse/FLINK-38307", "https://issues.apache.org/jira/browse/FLINK-40476",
		"https://issues.apache.org/jira/browse/FLINK-25192", "https://github.com/apache/flink/pull/29025",
		"https://nightlies.apache.org/flink/flink-docs-stable/docs/ops/state/savepoints/#resuming-from-savepoints"},
}

func init() { register(&Rule{meta: &changelogNoClaim, check: checkChangelogNoClaim, jobWide: true}) }

// checkChangelogNoClaim (PF191): a checkpoint of the Changelog state backend restored in NO_CLAIM
// mode.
func checkChangelogNoClaim(c *Context) []Finding {
	mode := strings.ToLower(c.Options.RestoreMode)
	if c.Layout == nil || (mode != "" && mode != RestoreNoClaim) {
		return nil
	}
	if c.Options.FlinkVersion != "" {
		v, err := ParseVersion(c.Options.FlinkVersion)
		if err != nil || v.Compare(MustParseVersion("1.15")) < 0 {
			return nil // no restore modes before 1.15: every restore behaves like LEGACY
		}
	}
	ops, n := changelogOperators(c)
	if n == 0 {
		return nil
	}
	sev, modeText := Error, "in NO_CLAIM mode"
	if mode == "" {
		sev, modeText = Warning, "in NO_CLAIM mode (Flink's default; the restore mode was not given, set it with --restore-mode)"
	}
	version := "Flink " + c.Options.FlinkVersion
	if c.Options.FlinkVersion == "" {
		version = "Flink (version unknown; restore modes exist since 1.15)"
	}
	f := c.finding(&changelogNoClaim, sev, nil)
	f.Message = fmt.Sprintf("The checkpoint holds Changelog state backend handles (%s: %s). Restored by %s %s, the restore "+
		"succeeds but the first checkpoint after it must be a full snapshot, which the changelog backend cannot take: every "+
		"checkpoint fails with IllegalStateException \"Configured state backend (ChangelogStateBackend) does not support "+
		"enforcing a full snapshot\" (FLINK-38307, documented limitation FLINK-40476).",
		units.Plural(int64(n), "operator"), strings.Join(ops, "; "), version, modeText)
	f.Remediation = changelogNoClaim.remedy("")
	f.References = changelogNoClaim.refs()
	return []Finding{f}
}

// changelogOperators returns the labels of the first few checkpoint operators with changelog
// keyed state handles, and how many there are.
func changelogOperators(c *Context) ([]string, int) {
	return firstOperators(c, func(ol *checkpoint.OperatorLayout) (string, bool) {
		return layoutOpLabel(c, ol), hasChangelogHandle(ol)
	})
}

// firstOperators describes the first three checkpoint operators that describe accepts, with
// "and N more operators" for the rest, and counts them all.
func firstOperators(c *Context, describe func(*checkpoint.OperatorLayout) (string, bool)) ([]string, int) {
	const shown = 3
	var out []string
	n := 0
	for i := range c.Layout.Operators {
		c.stop.Check()
		text, ok := describe(&c.Layout.Operators[i])
		if !ok {
			continue
		}
		if n++; n <= shown {
			out = append(out, text)
		}
	}
	if n > shown {
		out = append(out, "and "+units.Plural(int64(n-shown), "more operator"))
	}
	return out, n
}

// hasChangelogHandle reports whether any subtask of ol has a keyed handle of the changelog
// backend (tags 8, 9, 10, 13, 14).
func hasChangelogHandle(ol *checkpoint.OperatorLayout) bool {
	for j := range ol.Subtasks {
		for k := range ol.Subtasks[j].KeyedStateHandles() {
			switch k.Kind {
			case checkpoint.ChangelogHandle, checkpoint.ChangelogBytesHandle, checkpoint.ChangelogFileHandle:
				return true
			}
		}
	}
	return false
}
