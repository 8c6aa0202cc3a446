package findings

import (
	"strings"
	"testing"

	"github.com/flinkpreflight/preflight/internal/rescale"
)

func TestParseVersionCompare(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"1.19.1", "1.19.1", 0},
		{"1.19", "1.19.0", 0},
		{"2.0", "1.20.3", 1},
		{"1.20-SNAPSHOT", "1.20.0", -1},
		{"1.20-SNAPSHOT", "1.19.9", 1},
		{"v1.18.0", "1.18", 0},
		{"1.9", "1.10", -1},
		{"2", "2.0.0", 0},
	} {
		a, err := ParseVersion(tc.a)
		if err != nil {
			t.Fatal(err)
		}
		b := MustParseVersion(tc.b)
		if got := a.Compare(b); got != tc.want {
			t.Errorf("Compare(%s, %s) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := b.Compare(a); got != -tc.want {
			t.Errorf("Compare(%s, %s) = %d, want %d", tc.b, tc.a, got, -tc.want)
		}
	}
	for _, bad := range []string{"", "x.1", "1.2.3.4", "1.-2"} {
		if _, err := ParseVersion(bad); err == nil {
			t.Errorf("ParseVersion(%q): want error", bad)
		}
	}
}

func TestVersionRangeContains(t *testing.T) {
	r := VersionRange{Introduced: "1.12", Fixed: "1.15"}
	for v, want := range map[string]bool{"1.11.6": false, "1.12": true, "1.14.6": true, "1.15-SNAPSHOT": true, "1.15.0": false, "2.0": false} {
		if got := r.Contains(MustParseVersion(v)); got != want {
			t.Errorf("%v contains %s = %v, want %v", r, v, got, want)
		}
	}
	if !(VersionRange{}).Contains(MustParseVersion("0.1")) {
		t.Error("empty range should contain everything")
	}
}

func TestBugApplies(t *testing.T) {
	cat := DefaultCatalog()
	for _, tc := range []struct {
		bug, version string
		want         bool
		note         string
	}{
		{"FLINK-31689", "", true, "unknown"},
		{"FLINK-31689", "1.19.1", true, "includes 1.19.1"},
		{"FLINK-31689", "1.11.3", false, "does not affect"},
		{"FLINK-38735", "1.14.6", true, "includes"},
		{"FLINK-38735", "1.17.2", true, "includes 1.17.2"},
		{"FLINK-38735", "1.19.1", true, "includes 1.19.1"},
		{"FLINK-38735", "2.0.0", true, "no fix known"},
		{"FLINK-38735", "1.11.3", false, "does not affect"},
		{"FLINK-40043", "1.20.0", true, "assumed affected"},
		{"FLINK-31689", "banana", true, "could not be parsed"},
	} {
		got, note := cat.Bug(tc.bug).Applies(Options{FlinkVersion: tc.version})
		if got != tc.want || !strings.Contains(note, tc.note) {
			t.Errorf("%s at %q: %v %q, want %v with %q", tc.bug, tc.version, got, note, tc.want, tc.note)
		}
	}
}

func TestParseFlinkVersion(t *testing.T) {
	tests := []struct {
		in   string
		want string // "" = refused
	}{
		{"1.19.1", "1.19.1"},
		{"2.0", "2.0.0"},
		{"1.20-SNAPSHOT", "1.20.0-SNAPSHOT"},
		{"v2.1.0-rc1", "2.1.0-rc1"},
		{" 1.18 ", "1.18.0"},
		{"3.4.0", "3.4.0"}, // well-formed, unknown: accepted (PF116 says so)
		{"abc", ""},
		{"", ""},
		{"1", ""},
		{"2", ""},
		{"1.x", ""},
		{"1.19.1.2", ""},
		{"1..2", ""},
		{"+1.19", ""},
		{"1.-19", ""},
		{"0.10.2", ""},
		{"1.19_1", ""},
		{"1.19 SNAPSHOT", ""},
		{"1.19-", ""},
		{"1.19-bad qualifier", ""},
		{"99999999999999999999.1", ""},
		{"1.19.1\n", "1.19.1"},
	}
	for _, tt := range tests {
		v, err := ParseFlinkVersion(tt.in)
		switch {
		case tt.want == "" && err == nil:
			t.Errorf("ParseFlinkVersion(%q) = %v, want an error", tt.in, v)
		case tt.want != "" && (err != nil || v.String() != tt.want):
			t.Errorf("ParseFlinkVersion(%q) = %v, %v; want %s", tt.in, v, err, tt.want)
		}
	}
}

func TestUnknownFlinkVersionRule(t *testing.T) {
	tests := []struct {
		version string
		want    bool
	}{
		{"", false},
		{"1.19.1", false},
		{LatestKnownFlink.String(), false},
		{"2.3.9", false},
		{"2.4-SNAPSHOT", true},
		{"2.4.0", true},
		{"3.4.0", true},
		{"10.0", true},
	}
	for _, tt := range tests {
		c := newContext(nil, rescale.Plan{}, &rescale.Result{}, nil, Options{FlinkVersion: tt.version}, nil)
		fs := checkUnknownFlinkVersion(c)
		if got := len(fs) == 1 && fs[0].Severity == Info && fs[0].RuleID == "PF116"; got != tt.want || (!tt.want && len(fs) != 0) {
			t.Errorf("Flink %q: findings %+v, want one INFO finding: %v", tt.version, fs, tt.want)
		}
	}
}
