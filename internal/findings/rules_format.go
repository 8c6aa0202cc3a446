package findings

import "fmt"

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
		return nil
	}
	f := c.finding(r, Error, nil)
	f.Message = fmt.Sprintf("This is a format-%d _metadata file, readable by %s; Flink %s refuses it with %s.",
		format, formatReadersText(format), c.Options.FlinkVersion, flinkRefusal(format))
	f.Remediation = remediation
	return []Finding{f}
}
