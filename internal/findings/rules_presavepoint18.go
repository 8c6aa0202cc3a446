package findings

import "fmt"

// preFlink18Savepoint is PF118.
var preFlink18Savepoint = RuleMeta{
	ID:       "PF118",
	Title:    "Format-2 checkpoint restored by Flink 1.17 or later, which dropped savepoints of Flink before 1.8",
	Severity: Warning,
	Cause: "Flink 1.17 removed TypeSerializerConfigSnapshot and with it the restore of savepoints written by Flink before " +
		"1.8, and of savepoints from before 1.17 whose custom serializers still snapshot through TypeSerializerConfigSnapshot " +
		"(FLINK-29807, 1.17 release notes). _metadata format 2 is what Flink 1.3 to 1.10 wrote: it does not say which, " +
		"so a format-2 file restored by 1.17 or later may be refused. Format 1 and older are refused by PF115.",
	Remedies: []Remedy{{Text: "Restore the snapshot on a Flink 1.8-1.16 cluster first (migrating custom serializers to " +
		"TypeSerializerSnapshot), take a new savepoint there, and restore that savepoint on Flink %s.",
		Args: []string{"restoring version"}}},
	References: []string{"https://issues.apache.org/jira/browse/FLINK-29807",
		"https://nightlies.apache.org/flink/flink-docs-release-1.17/release-notes/flink-1.17/"},
}

func init() {
	register(&Rule{meta: &preFlink18Savepoint, check: checkPreFlink18Savepoint, jobWide: true})
}

// checkPreFlink18Savepoint (PF118): a format-2 _metadata (Flink 1.3-1.10) restored by Flink 1.17+.
func checkPreFlink18Savepoint(c *Context) []Finding {
	if c.Layout == nil || c.Layout.Version != 2 || c.Options.FlinkVersion == "" {
		return nil
	}
	v, err := ParseVersion(c.Options.FlinkVersion)
	if err != nil || v.Compare(MustParseVersion("1.17")) < 0 {
		return nil
	}
	f := c.finding(&preFlink18Savepoint, Warning, nil)
	f.Message = fmt.Sprintf("This format-2 _metadata file was written by Flink 1.3 to 1.10. Flink %s cannot restore savepoints "+
		"of Flink before 1.8, nor state whose custom serializers still use TypeSerializerConfigSnapshot (FLINK-29807, "+
		"since 1.17): if this snapshot is one of those, the restore fails.", c.Options.FlinkVersion)
	f.Remediation = preFlink18Savepoint.remedy("", c.Options.FlinkVersion)
	f.References = preFlink18Savepoint.refs()
	return []Finding{f}
}
