package findings

import (
	"fmt"
	"strings"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/rescale"
	"github.com/flinkpreflight/preflight/internal/units"
)

// compressedOperatorState is PF135.
var compressedOperatorState = RuleMeta{
	ID:       "PF135",
	Title:    "Operator state written with snapshot compression, restored by an affected Flink version",
	Severity: Error,
	Grading: "ERROR when the restoring Flink has the bug (or its version is unknown); INFO on a fixed version when a rescale " +
		"splits a compressed stream holding several list states (a stream written by Flink 1.18.0 or 1.18.1 itself keeps " +
		"offsets taken before the compression buffer was flushed).",
	Cause: "Since Flink 1.18 (FLIP-290, FLINK-30113) execution.checkpointing.snapshot-compression also compresses operator " +
		"state; the uncompressed header of each stream records it (OperatorBackendSerializationProxy version 6, a " +
		"compression flag). Flink 1.18.0 and 1.18.1 restored the states of a compressed stream in the order of the metadata map, " +
		"not the order they were written, and a compressed stream cannot seek back: a stream with a broadcast state " +
		"next to other states fails to restore (FLINK-33863). Its writer also took element offsets without flushing the " +
		"compression buffer, and its reader continued from the last position instead of seeking per state: when a " +
		"rescale hands a subtask slices of several list states of one stream, elements are lost (source splits " +
		"disappear) or the restore fails (FLINK-34063). Only streams stored inside _metadata (under the inline " +
		"threshold) can be checked; compression of streams in files is not visible in _metadata. Files in format 5+ " +
		"come from Flink 2.0+ and are only read by it, so only format-4 files (Flink 1.18-1.20) are checked.",
	Remedies: []Remedy{
		{When: "affected", Text: "Restore on Flink 1.19.0 or later, or a 1.18 release after 1.18.1 (the 1.18.1 release announcement warns users of state compression not to use 1.18.0 or 1.18.1). Until then keep the parallelism unchanged and take a savepoint with execution.checkpointing.snapshot-compression: false before rescaling."},
		{When: "written-by-1.18.0-or-1.18.1", Text: "If the checkpoint was written by Flink 1.18.0 or 1.18.1, take a new savepoint on a fixed Flink (1.19.0+, or a 1.18 release after 1.18.1, or with snapshot compression off) at the old parallelism before rescaling."},
	},
	References: []string{"https://github.com/apache/flink/pull/23938", "https://github.com/apache/flink/pull/24079",
		"https://flink.apache.org/news/2024/01/19/release-1.18.1.html",
		"FLINK-30113", "https://github.com/apache/flink/pull/21636"},
	Bugs: []Bug{
		{ID: "FLINK-33863", Component: "flink", Affected: []VersionRange{{Introduced: "1.18", Fixed: "1.18.2"}},
			FixedIn: "1.19.0 and 1.18 releases after 1.18.1 (apache/flink#23938, backport #24008; not in the 1.18.1 release notes, and its sorting was corrected by FLINK-34063)",
			Summary: "restoring a compressed operator-state stream with a broadcast state among several states fails"},
		{ID: "FLINK-34063", Component: "flink", Affected: []VersionRange{{Introduced: "1.18", Fixed: "1.18.2"}},
			FixedIn: "1.19.0 and 1.18 releases after 1.18.1 (apache/flink#24079, backport #24083; the 1.18.1 announcement names 1.18.0 and 1.18.1 as affected)",
			Summary: "with snapshot compression, rescaling an operator with several list states in one stream loses elements (source splits)"},
	},
}

func init() {
	register(&Rule{meta: &compressedOperatorState, check: checkCompressedOperatorState, safeAt: compressedOperatorStateSafeAt})
}

// compressedStreams counts an operator's compressed managed streams (stored in _metadata) that
// hold a broadcast state next to other states, those holding several list states, and all
// compressed ones. It depends on the checkpoint only: computed once per operator and check
// (the safe-parallelism search asks for every candidate).
func compressedStreams(c *Context, op *checkpoint.OperatorLayout) (broadcastMixed, multiList, compressed int) {
	if n, ok := c.memo.compression[op]; ok {
		return n[0], n[1], n[2]
	}
	defer func() {
		if c.memo.compression == nil {
			c.memo.compression = map[*checkpoint.OperatorLayout][3]int{}
		}
		c.memo.compression[op] = [3]int{broadcastMixed, multiList, compressed}
	}()
	for i := range op.Subtasks {
		c.stop.Check()
		h := op.Subtasks[i].ManagedOperatorState
		if h == nil || h.Compression != checkpoint.CompressionSnappy {
			continue
		}
		compressed++
		lists, broadcast := 0, false
		for _, s := range h.States {
			if s.Mode == checkpoint.Broadcast {
				broadcast = true
			} else if s.Elements > 0 {
				lists++
			}
		}
		if broadcast && len(h.States) > 1 {
			broadcastMixed++
		}
		if lists > 1 {
			multiList++
		}
	}
	return broadcastMixed, multiList, compressed
}

// writtenByFixedFlink reports whether the _metadata format proves a writer with both fixes:
// formats 5+ come from Flink 2.0+, which only Flink 2.0+ reads (PF115 reports older readers).
func writtenByFixedFlink(c *Context) bool { return c.Layout == nil || c.Layout.Version >= 5 }

// checkCompressedOperatorState (PF135): managed operator state written with snapshot
// compression meets the restore bugs of Flink 1.18.0.
func checkCompressedOperatorState(c *Context) []Finding {
	if writtenByFixedFlink(c) {
		return nil
	}
	var out []Finding
	c.operators(func(v *rescale.VertexAssignment, op *rescale.OperatorAssignment) {
		if op.Path == rescale.PathFinished || op.Path == rescale.PathNotRestored {
			return
		}
		broadcastMixed, multiList, compressed := compressedStreams(c, op.Layout)
		if compressed == 0 {
			return
		}
		label := opLabel(op, c.Entry(op))
		if broadcastMixed > 0 {
			if applies, note := compressedOperatorState.bugApplies("FLINK-33863", c.Options.FlinkVersion); applies {
				f := c.finding(&compressedOperatorState, Error, op)
				f.AffectedSubtasks = rangeFrom(0, int32(op.NewParallelism))
				f.Message = strings.TrimSpace(fmt.Sprintf("%s was checkpointed with snapshot compression, and %s of its %s %s a broadcast state next to other states. Flink %s reads such a stream in map order and cannot seek back in the compressed data: the restore fails at any parallelism. %s",
					upperFirst(label), units.Plural(int64(broadcastMixed), "stream", "streams"), units.Plural(int64(compressed), "compressed stream"), verbFor(broadcastMixed, "holds", "hold"), versionOr(c, "1.18.0/1.18.1"), note))
				f.Remediation = compressedOperatorState.remedy("affected")
				f.References = compressedOperatorState.refs()
				out = append(out, f)
			}
		}
		if multiList == 0 || !v.Rescaled() {
			return
		}
		applies, note := compressedOperatorState.bugApplies("FLINK-34063", c.Options.FlinkVersion)
		f := c.finding(&compressedOperatorState, Error, op)
		f.AffectedSubtasks = rangeFrom(0, int32(op.NewParallelism))
		f.References = compressedOperatorState.refs()
		what := fmt.Sprintf("%s was checkpointed with snapshot compression; %s of its %s %s several list states, and the parallelism changes %d -> %d, so new subtasks read slices of several states from one compressed stream.",
			upperFirst(label), units.Plural(int64(multiList), "stream", "streams"), units.Plural(int64(compressed), "compressed stream"), verbFor(multiList, "holds", "hold"), v.OldParallelism, v.NewParallelism)
		if applies {
			f.Message = strings.TrimSpace(what + " Flink " + versionOr(c, "1.18.0/1.18.1") + " continues reading where the previous state ended instead of seeking to each slice: elements are lost (for a source, splits disappear) or the restore fails. " + note)
			f.Remediation = compressedOperatorState.remedy("affected")
		} else {
			f.Severity = Info
			f.Message = what + fmt.Sprintf(" Flink %s reads them correctly; only if this checkpoint was written by Flink 1.18.0 or 1.18.1 do its element offsets point into unflushed compressed data (FLINK-34063), which no reader can fix.", c.Options.FlinkVersion)
			f.Remediation = compressedOperatorState.remedy("written-by-1.18.0-or-1.18.1")
		}
		out = append(out, f)
	})
	return out
}

// compressedOperatorStateSafeAt: on an affected version a compressed stream with a broadcast state fails at every
// parallelism, and one with several list states only at a changed one.
func compressedOperatorStateSafeAt(c *Context, v *rescale.VertexAssignment, p int) (bool, bool) {
	if writtenByFixedFlink(c) {
		return true, true
	}
	for _, op := range v.Operators {
		if op.Layout == nil {
			continue
		}
		broadcastMixed, multiList, _ := compressedStreams(c, op.Layout)
		if broadcastMixed > 0 {
			if compressedOperatorState.bugAffects("FLINK-33863", c.Options.FlinkVersion) {
				return false, true
			}
		}
		if multiList > 0 && p != v.OldParallelism {
			if compressedOperatorState.bugAffects("FLINK-34063", c.Options.FlinkVersion) {
				return false, true
			}
		}
	}
	return true, true
}

// versionOr is the restoring Flink version, or def when it is unknown.
func versionOr(c *Context, def string) string {
	if c.Options.FlinkVersion == "" {
		return def
	}
	return c.Options.FlinkVersion
}
