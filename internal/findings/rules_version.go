package findings

import "fmt"

// unknownFlinkVersion is PF116.
var unknownFlinkVersion = RuleMeta{
	ID:       "PF116",
	Title:    "The restoring Flink version is newer than any release Preflight knows",
	Severity: Info,
	Cause: "Preflight models Flink's restore (the _metadata formats each release reads, the redistribution " +
		"algorithms, the known bugs and their fixes) up to the " + minorText(LatestKnownFlink) + " release line. A newer " +
		"version is checked as if it behaved like " + minorText(LatestKnownFlink) + "; a change in a later release is not seen.",
	Remedies: []Remedy{{Text: "Use a Preflight release that knows Flink %[1]s when there is one, or check " +
		"the release notes between %[2]s and %[1]s for changes to state restore.",
		Args: []string{"restoring version", "latest known release line"}}},
}

func init() {
	register(&Rule{meta: &unknownFlinkVersion, check: checkUnknownFlinkVersion, jobWide: true})
}

// checkUnknownFlinkVersion (PF116): the restoring Flink is newer than any release Preflight models.
func checkUnknownFlinkVersion(c *Context) []Finding {
	if c.Options.FlinkVersion == "" {
		return nil
	}
	v, err := ParseVersion(c.Options.FlinkVersion)
	if err != nil || !newerLine(v, LatestKnownFlink) {
		return nil
	}
	f := c.finding(&unknownFlinkVersion, Info, nil)
	f.Message = fmt.Sprintf("Flink %s is newer than the latest release line Preflight knows (%s): the verdict assumes it reads "+
		"checkpoints, redistributes state and carries the same unfixed bugs as %s.", c.Options.FlinkVersion,
		minorText(LatestKnownFlink), minorText(LatestKnownFlink))
	f.Remediation = unknownFlinkVersion.remedy("", c.Options.FlinkVersion, minorText(LatestKnownFlink))
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
