package findings

import (
	"fmt"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

// formatVersion is PF115.
var formatVersion = RuleMeta{
	ID:       "PF115",
	Title:    "The restoring Flink version cannot read this _metadata format",
	Severity: Error,
	Grading:  "WARNING when the restoring Flink version is unknown and the format is one no supported release reads.",
	Cause: "Each Flink release registers the _metadata format versions it can read (MetadataSerializers): " +
		"format 1 (Flink 1.2) is refused since 1.11, format 4 needs 1.16, 5 needs 2.0, 6 needs 2.1, and format 7 " +
		"is in no release. File-merging state handles (FLIP-306) need 1.20 even inside a readable format. A restore " +
		"from a file the cluster cannot read fails before any state is assigned.",
	Remedies: []Remedy{
		{When: "format", Text: "Restore on %s, or take a new savepoint with a Flink version that both clusters read " +
			"(a savepoint written by the old cluster in an older format, or an upgrade path through intermediate releases).",
			Args: []string{"the releases that read the format"}},
		{When: "file-merging", Text: "Restore on Flink 1.20 or later, or take a savepoint (savepoints do not use file merging) and restore from it."},
	},
	References: []string{"https://nightlies.apache.org/flink/flink-docs-stable/docs/ops/upgrading/#compatibility-table"},
}

func init() { register(&Rule{meta: &formatVersion, check: checkFormatVersion, jobWide: true}) }

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

// checkFormatVersion (PF115): the restoring Flink cannot read the checkpoint's _metadata format.
func checkFormatVersion(c *Context) []Finding {
	if c.Layout == nil {
		return nil
	}
	format := c.Layout.Version
	readers, known := formatReaders[format]
	remediation := formatVersion.remedy("format", formatReadersText(format))
	if c.Options.FlinkVersion == "" {
		// Unknown cluster version: only formats that no supported Flink reads are worth a warning.
		if known && format >= 2 {
			return nil
		}
		f := c.finding(&formatVersion, Warning, nil)
		f.Message = fmt.Sprintf("This is a format-%d _metadata file, readable by %s. The restoring Flink version is unknown; "+
			"any other version refuses it with %s.", format, formatReadersText(format), flinkRefusal(format))
		f.Remediation = remediation
		f.References = formatVersion.refs()
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
			f := c.finding(&formatVersion, Error, nil)
			f.Message = fmt.Sprintf("The checkpoint uses file-merging state handles (segment files, FLIP-306), which Flink 1.20 "+
				"introduced; Flink %s refuses them with IOException \"Unknown implementation of StreamStateHandle, code: 15\" "+
				"(or IllegalStateException \"Reading invalid OperatorStateHandle, type: 17\").", c.Options.FlinkVersion)
			f.Remediation = formatVersion.remedy("file-merging")
			f.References = formatVersion.refs()
			return []Finding{f}
		}
		return nil
	}
	f := c.finding(&formatVersion, Error, nil)
	f.Message = fmt.Sprintf("This is a format-%d _metadata file, readable by %s; Flink %s refuses it with %s.",
		format, formatReadersText(format), c.Options.FlinkVersion, flinkRefusal(format))
	f.Remediation = remediation
	f.References = formatVersion.refs()
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
			for h := range st.OperatorStateHandles() {
				if h.FileMerging || seg(h.Stream) {
					return true
				}
			}
			for k := range st.KeyedStateHandles() {
				if seg(k.Stream) {
					return true
				}
			}
			for _, chs := range [][]checkpoint.ChannelStateLayout{st.InputChannels(), st.OutputChannels()} {
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
