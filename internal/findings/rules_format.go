package findings

import (
	"fmt"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

// FormatVersionRule (PF115): the restoring Flink cannot read the checkpoint's _metadata format.
type FormatVersionRule struct{}

func (FormatVersionRule) ID() string { return "PF115" }
func (FormatVersionRule) Title() string {
	return "The restoring Flink version cannot read this _metadata format"
}
func (FormatVersionRule) Severity() Severity { return Error }
func (FormatVersionRule) Explanation() string {
	return "Each Flink release registers the _metadata format versions it can read (MetadataSerializers): " +
		"format 1 (Flink 1.2) is refused since 1.11, format 4 needs 1.16, 5 needs 2.0, 6 needs 2.1, and format 7 " +
		"is in no release. A restore from a file the cluster cannot read fails before any state is assigned."
}

// formatReaders are the Flink releases that read each format version (spec §2.3): [from, until).
var formatReaders = map[int]VersionRange{
	0: {Introduced: "1.2", Fixed: "1.4"},
	1: {Introduced: "1.2", Fixed: "1.11"},
	2: {Introduced: "1.3"},
	3: {Introduced: "1.11"},
	4: {Introduced: "1.16"},
	5: {Introduced: "2.0"},
	6: {Introduced: "2.1"},
}

// formatReadersText says which releases read a format, for messages.
func formatReadersText(v int) string {
	r, ok := formatReaders[v]
	switch {
	case !ok:
		return "no released Flink version"
	case r.Fixed == "":
		return "Flink " + r.Introduced + " and later"
	}
	return "Flink " + r.Introduced + " up to (not including) " + r.Fixed
}

// flinkRefusal is the exception Flink's reader throws for a format it does not read.
func flinkRefusal(format int) string {
	if format <= 1 {
		return `IOException "This savepoint / checkpoint version (Flink 1.1 / 1.2) is no longer supported."`
	}
	return fmt.Sprintf(`IllegalArgumentException "Unrecognized checkpoint version number: %d"`, format)
}

func (r FormatVersionRule) Check(c *Context) []Finding {
	if c.Layout == nil {
		return nil
	}
	format := c.Layout.Version
	readers, known := formatReaders[format]
	remediation := fmt.Sprintf("Restore on %s, or take a new savepoint with a Flink version that both clusters read "+
		"(a savepoint written by the old cluster in an older format, or an upgrade path through intermediate releases).", formatReadersText(format))
	if c.Options.FlinkVersion == "" {
		// Unknown cluster version: only formats that no supported Flink reads are worth a warning.
		if known && format >= 2 {
			return nil
		}
		f := c.finding(r, Warning, nil)
		f.Message = fmt.Sprintf("This is a format-%d _metadata file, readable by %s. The restoring Flink version is unknown; "+
			"any other version refuses it with %s.", format, formatReadersText(format), flinkRefusal(format))
		f.Remediation = remediation
		return []Finding{f}
	}
	v, err := ParseVersion(c.Options.FlinkVersion)
	if err != nil {
		return nil
	}
	if known && readers.Contains(v) {
		// The format is readable; file-merging handles (tags 15-17, FLIP-306) need 1.20 even
		// inside a format-4 file.
		if v.Compare(MustParseVersion("1.20")) < 0 && usesFileMerging(c.Layout) {
			f := c.finding(r, Error, nil)
			f.Message = fmt.Sprintf("The checkpoint uses file-merging state handles (segment files, FLIP-306), which Flink 1.20 "+
				"introduced; Flink %s refuses them with IOException \"Unknown implementation of StreamStateHandle, code: 15\" "+
				"(or IllegalStateException \"Reading invalid OperatorStateHandle, type: 17\").", c.Options.FlinkVersion)
			f.Remediation = "Restore on Flink 1.20 or later, or take a savepoint (savepoints do not use file merging) and restore from it."
			return []Finding{f}
		}
		return nil
	}
	f := c.finding(r, Error, nil)
	f.Message = fmt.Sprintf("This is a format-%d _metadata file, readable by %s; Flink %s refuses it with %s.",
		format, formatReadersText(format), c.Options.FlinkVersion, flinkRefusal(format))
	f.Remediation = remediation
	return []Finding{f}
}

// usesFileMerging reports whether any handle is a file-merging one (stream tags 15/16, operator
// tag 17).
func usesFileMerging(l *checkpoint.Layout) bool {
	seg := func(s checkpoint.StreamRef) bool {
		return s.Kind == checkpoint.StreamSegment || s.Kind == checkpoint.StreamEmptySegment
	}
	for i := range l.Operators {
		for j := range l.Operators[i].Subtasks {
			st := &l.Operators[i].Subtasks[j]
			for _, h := range []*checkpoint.OperatorStateHandleLayout{st.ManagedOperatorState, st.RawOperatorState} {
				if h != nil && (h.FileMerging || seg(h.Stream)) {
					return true
				}
			}
			for _, k := range []*checkpoint.KeyedStateHandleLayout{st.ManagedKeyedState, st.RawKeyedState} {
				if k != nil && seg(k.Stream) {
					return true
				}
			}
			for _, chs := range [][]checkpoint.ChannelStateLayout{st.InputChannels, st.OutputChannels} {
				for _, ch := range chs {
					if seg(ch.Stream) {
						return true
					}
				}
			}
		}
	}
	return false
}

// UnknownFlinkVersionRule (PF116): the restoring Flink is newer than any release Preflight models.
type UnknownFlinkVersionRule struct{}

func (UnknownFlinkVersionRule) ID() string { return "PF116" }
func (UnknownFlinkVersionRule) Title() string {
	return "The restoring Flink version is newer than any release Preflight knows"
}
func (UnknownFlinkVersionRule) Severity() Severity { return Info }
func (UnknownFlinkVersionRule) Explanation() string {
	return "Preflight models Flink's restore (the _metadata formats each release reads, the redistribution " +
		"algorithms, the known bugs and their fixes) up to the " + minorText(LatestKnownFlink) + " release line. A newer " +
		"version is checked as if it behaved like " + minorText(LatestKnownFlink) + "; a change in a later release is not seen."
}

func (r UnknownFlinkVersionRule) Check(c *Context) []Finding {
	if c.Options.FlinkVersion == "" {
		return nil
	}
	v, err := ParseVersion(c.Options.FlinkVersion)
	if err != nil || !newerLine(v, LatestKnownFlink) {
		return nil
	}
	f := c.finding(r, Info, nil)
	f.Message = fmt.Sprintf("Flink %s is newer than the latest release line Preflight knows (%s): the verdict assumes it reads "+
		"checkpoints, redistributes state and carries the same unfixed bugs as %s.", c.Options.FlinkVersion,
		minorText(LatestKnownFlink), minorText(LatestKnownFlink))
	f.Remediation = "Use a Preflight release that knows Flink " + c.Options.FlinkVersion + " when there is one, or check " +
		"the release notes between " + minorText(LatestKnownFlink) + " and " + c.Options.FlinkVersion + " for changes to state restore."
	return []Finding{f}
}

// newerLine reports whether v belongs to a release line (major.minor) after latest's.
func newerLine(v, latest Version) bool {
	if v.Major != latest.Major {
		return v.Major > latest.Major
	}
	return v.Minor > latest.Minor
}

func minorText(v Version) string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }
