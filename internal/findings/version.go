package findings

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is a Flink (or connector) release number: major.minor.patch with an optional
// qualifier such as "SNAPSHOT" or "rc1". A qualified version sorts before the release it
// qualifies: 1.20-SNAPSHOT < 1.20.0.
type Version struct {
	Major, Minor, Patch int
	Qualifier           string // "" for a release
}

// ParseVersion parses "1.19.1", "2.0", "1.20-SNAPSHOT", "v1.18.0" or "2".
func ParseVersion(s string) (Version, error) {
	var v Version
	t := strings.TrimPrefix(strings.TrimSpace(s), "v")
	if t == "" {
		return v, fmt.Errorf("empty version")
	}
	if i := strings.IndexAny(t, "-_+ "); i >= 0 {
		v.Qualifier = t[i+1:]
		t = t[:i]
	}
	parts := strings.Split(t, ".")
	if len(parts) > 3 {
		return v, fmt.Errorf("version %q: more than three numbers", s)
	}
	dst := []*int{&v.Major, &v.Minor, &v.Patch}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return v, fmt.Errorf("version %q: %q is not a number", s, p)
		}
		*dst[i] = n
	}
	return v, nil
}

// LatestKnownFlink is the newest Flink release line whose behaviour (formats it reads, state
// redistribution, known bugs) Preflight models. A restoring cluster newer than it is accepted with
// an INFO finding (PF116): its rules are assumed to be this line's.
var LatestKnownFlink = MustParseVersion("2.3")

// ParseFlinkVersion parses the version of a restoring Flink cluster strictly, as a request gives
// it: major.minor with an optional patch and an optional qualifier after a hyphen ("1.19.1",
// "2.0", "1.20-SNAPSHOT", "v2.1.0-rc1"). Anything else, such as "abc", "1", "1.x" or "1.19.1.2",
// is an error: silently treating it as unknown would turn the version-dependent rules off.
func ParseFlinkVersion(s string) (Version, error) {
	const want = "want major.minor[.patch][-qualifier], e.g. 1.19.1, 2.0 or 1.20-SNAPSHOT"
	t := strings.TrimPrefix(strings.TrimSpace(s), "v")
	num, qual, hasQual := strings.Cut(t, "-")
	if hasQual && !isQualifier(qual) {
		return Version{}, fmt.Errorf("%q is not a Flink version: qualifier %q (%s)", s, qual, want)
	}
	parts := strings.Split(num, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return Version{}, fmt.Errorf("%q is not a Flink version (%s)", s, want)
	}
	for _, p := range parts {
		if p == "" || len(p) > 6 || strings.Trim(p, "0123456789") != "" {
			return Version{}, fmt.Errorf("%q is not a Flink version: %q is not a number (%s)", s, p, want)
		}
	}
	v, err := ParseVersion(t)
	if err != nil {
		return Version{}, fmt.Errorf("%q is not a Flink version (%s)", s, want)
	}
	if v.Major < 1 {
		return Version{}, fmt.Errorf("%q is not a Flink version: releases start at 1.0", s)
	}
	return v, nil
}

func isQualifier(q string) bool {
	if q == "" || len(q) > 32 {
		return false
	}
	for _, r := range q {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-') {
			return false
		}
	}
	return true
}

// MustParseVersion is ParseVersion for constants; it panics on malformed input.
func MustParseVersion(s string) Version {
	v, err := ParseVersion(s)
	if err != nil {
		panic(err)
	}
	return v
}

// Compare returns -1, 0 or +1.
func (v Version) Compare(o Version) int {
	for _, d := range [][2]int{{v.Major, o.Major}, {v.Minor, o.Minor}, {v.Patch, o.Patch}} {
		if d[0] != d[1] {
			if d[0] < d[1] {
				return -1
			}
			return 1
		}
	}
	switch {
	case v.Qualifier == o.Qualifier:
		return 0
	case v.Qualifier == "": // release after its pre-releases
		return 1
	case o.Qualifier == "":
		return -1
	case v.Qualifier < o.Qualifier:
		return -1
	}
	return 1
}

// String prints major.minor.patch[-qualifier].
func (v Version) String() string {
	s := fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch)
	if v.Qualifier != "" {
		s += "-" + v.Qualifier
	}
	return s
}

// VersionRange is a half-open range [Introduced, Fixed) in the style of OSV: Introduced empty
// means "since the beginning", Fixed empty means "not fixed".
type VersionRange struct {
	Introduced string `json:"introduced,omitempty"`
	Fixed      string `json:"fixed,omitempty"`
}

// Contains reports whether v is in the range. Malformed bounds are treated as absent.
func (r VersionRange) Contains(v Version) bool {
	if r.Introduced != "" {
		if lo, err := ParseVersion(r.Introduced); err == nil && v.Compare(lo) < 0 {
			return false
		}
	}
	if r.Fixed != "" {
		if hi, err := ParseVersion(r.Fixed); err == nil && v.Compare(hi) >= 0 {
			return false
		}
	}
	return true
}

// String renders the range for messages: "1.12 – unfixed", "before 1.16", ">= 1.15".
func (r VersionRange) String() string {
	switch {
	case r.Introduced == "" && r.Fixed == "":
		return "all versions"
	case r.Fixed == "":
		return r.Introduced + " and later (no fix known)"
	case r.Introduced == "":
		return "before " + r.Fixed
	}
	return r.Introduced + " up to (not including) " + r.Fixed
}

// rangesText renders ranges for messages ("all versions" when there are none).
func rangesText(ranges []VersionRange) string {
	parts := make([]string, 0, len(ranges))
	for _, r := range ranges {
		parts = append(parts, r.String())
	}
	if len(parts) == 0 {
		return "all versions"
	}
	return strings.Join(parts, "; ")
}

// checkRange validates a range read from a catalog: each bound is a version and, when both are
// given, Introduced comes before Fixed.
func checkRange(r VersionRange) error {
	var lo, hi Version
	var err error
	if r.Introduced != "" {
		if lo, err = ParseVersion(r.Introduced); err != nil {
			return err
		}
	}
	if r.Fixed != "" {
		if hi, err = ParseVersion(r.Fixed); err != nil {
			return err
		}
	}
	if r.Introduced != "" && r.Fixed != "" && lo.Compare(hi) >= 0 {
		return fmt.Errorf("empty version range: %q is not before %q", r.Introduced, r.Fixed)
	}
	return nil
}

// A component is whose version a range refers to: "flink" (Options.FlinkVersion) or a connector
// or library as Options.ConnectorVersions names it ("iceberg", "flink-connector-kafka",
// "flink-cdc", "paimon"). Names are lower case: letters, digits, '-' and '.'.
func isFlinkComponent(component string) bool { return component == "" || component == "flink" }

// checkComponent validates a component name read from a catalog or given by the user.
func checkComponent(name string) error {
	if name == "" || len(name) > 64 || strings.Trim(name, "abcdefghijklmnopqrstuvwxyz0123456789-.") != "" {
		return fmt.Errorf("component %q: want a lower-case name such as flink, iceberg or flink-connector-kafka", name)
	}
	return nil
}

// componentTitle names a component in messages.
func componentTitle(component string) string {
	if isFlinkComponent(component) {
		return "Flink"
	}
	return component
}

// ParseConnectorVersion parses a --connector-version argument, NAME=VERSION (e.g.
// "iceberg=1.4.3", "flink-connector-kafka=3.2.0-1.19"), for Options.ConnectorVersions.
func ParseConnectorVersion(arg string) (name, version string, err error) {
	name, version, ok := strings.Cut(arg, "=")
	name = strings.ToLower(strings.TrimSpace(name))
	version = strings.TrimSpace(version)
	if !ok {
		return "", "", fmt.Errorf("connector version %q: want NAME=VERSION, e.g. iceberg=1.4.3", arg)
	}
	if err := checkComponent(name); err != nil {
		return "", "", fmt.Errorf("connector version %q: %v", arg, err)
	}
	if name == "flink" {
		return "", "", fmt.Errorf("connector version %q: give the Flink version with --flink-version", arg)
	}
	if _, err := ParseVersion(version); err != nil {
		return "", "", fmt.Errorf("connector version %q: %v", arg, err)
	}
	return name, version, nil
}

// versionMatch is how the restoring version of a component relates to a set of ranges.
type versionMatch int

const (
	versionIn       versionMatch = iota // known and in one of the ranges (or there are none)
	versionOut                          // known and in none of them
	versionUnknown                      // not given: assume the ranges' behaviour applies
	versionUnparsed                     // given but not a version: likewise
)

// componentVersion returns the restoring version of a component from the options, "" when the
// caller did not give it. Connector names compare case-insensitively.
func (o Options) componentVersion(component string) string {
	if isFlinkComponent(component) {
		return o.FlinkVersion
	}
	if v, ok := o.ConnectorVersions[component]; ok {
		return v
	}
	for k, v := range o.ConnectorVersions {
		if strings.EqualFold(strings.TrimSpace(k), component) {
			return v
		}
	}
	return ""
}

// matchVersions decides whether the component's restoring version (from o) is in ranges; no
// ranges, or one without bounds, means all versions. It returns the version as given.
func matchVersions(component string, ranges []VersionRange, o Options) (versionMatch, string) {
	given := o.componentVersion(component)
	if given == "" {
		return versionUnknown, ""
	}
	v, err := ParseVersion(given)
	if err != nil {
		return versionUnparsed, given
	}
	if len(ranges) == 0 {
		return versionIn, given
	}
	for _, r := range ranges {
		if r.Contains(v) {
			return versionIn, given
		}
	}
	return versionOut, given
}

// unknownVersionText says how to give the missing version of a component.
func unknownVersionText(component string) string {
	if isFlinkComponent(component) {
		return "the restoring Flink version is unknown"
	}
	return fmt.Sprintf("the %s version is unknown (give it with --connector-version %s=VERSION)", component, component)
}
