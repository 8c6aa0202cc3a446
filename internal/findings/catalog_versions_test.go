package findings

import (
	"strings"
	"testing"
)

// TestCatalogVersionsValidated: a bad version range or component in a catalog is an error that
// names the entry (or bug) and the state.
func TestCatalogVersionsValidated(t *testing.T) {
	const entry = `{"entries":[{"id":"my-op","fingerprint":{"uids":["u"]},"states":[{"name":"s","assumption":"FIRST-ONLY","versions":%s}]}]}`
	for _, tc := range []struct {
		name, json, want string
	}{
		{"ok", strings.Replace(entry, "%s", `{"component":"iceberg","from":"1.1.0"}`, 1), ""},
		{"ok flink", strings.Replace(entry, "%s", `{"component":"flink","before":"2.0"}`, 1), ""},
		{"no bounds", strings.Replace(entry, "%s", `{"component":"iceberg"}`, 1), "entry my-op state s: versions of iceberg: give from, before or both"},
		{"no component", strings.Replace(entry, "%s", `{"from":"1.0"}`, 1), `entry my-op state s: component ""`},
		{"bad component", strings.Replace(entry, "%s", `{"component":"Iceberg Flink","from":"1.0"}`, 1), `entry my-op state s: component "Iceberg Flink"`},
		{"bad from", strings.Replace(entry, "%s", `{"component":"iceberg","from":"one"}`, 1), `entry my-op state s: versions of iceberg: version "one"`},
		{"empty range", strings.Replace(entry, "%s", `{"component":"iceberg","from":"1.2","before":"1.1"}`, 1), `entry my-op state s: versions of iceberg: empty version range`},
		{"equal bounds", strings.Replace(entry, "%s", `{"component":"iceberg","from":"1.1","before":"1.1.0"}`, 1), `empty version range`},
		{"unknown field", strings.Replace(entry, "%s", `{"component":"iceberg","since":"1.1"}`, 1), `unknown field "since"`},
		{"bug range", `{"bugs":[{"id":"B-1","component":"paimon","affected":[{"introduced":"0.9","fixed":"0.8"}],"summary":"x"}]}`, "bug B-1: empty version range"},
		{"bug component", `{"bugs":[{"id":"B-2","component":"Paimon!","summary":"x"}]}`, `bug B-2: component "Paimon!"`},
	} {
		_, err := parseCatalog([]byte(tc.json), "user.json", true)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

func TestParseConnectorVersion(t *testing.T) {
	for _, tc := range []struct {
		arg, name, version, err string
	}{
		{"iceberg=1.4.3", "iceberg", "1.4.3", ""},
		{" Flink-Connector-Kafka = 3.2.0-1.19 ", "flink-connector-kafka", "3.2.0-1.19", ""},
		{"flink-cdc=3.6.0", "flink-cdc", "3.6.0", ""},
		{"iceberg", "", "", "want NAME=VERSION"},
		{"iceberg=", "", "", "empty version"},
		{"iceberg=banana", "", "", "not a number"},
		{"=1.0", "", "", `component ""`},
		{"flink=1.19", "", "", "--flink-version"},
	} {
		name, version, err := ParseConnectorVersion(tc.arg)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.arg, err, tc.err)
			}
			continue
		}
		if err != nil || name != tc.name || version != tc.version {
			t.Errorf("%q: %q %q %v, want %q %q", tc.arg, name, version, err, tc.name, tc.version)
		}
	}
}

// TestConnectorBugApplies: a connector's bug is compared with Options.ConnectorVersions; when
// the connector version is not given it is assumed affected and the note says how to give it.
func TestConnectorBugApplies(t *testing.T) {
	cat := DefaultCatalog()
	for _, tc := range []struct {
		bug      string
		versions map[string]string
		want     bool
		note     string
	}{
		{"iceberg-5873", nil, true, "--connector-version iceberg=VERSION"},
		{"iceberg-5873", map[string]string{"iceberg": "1.0.0"}, true, "includes 1.0.0"},
		{"iceberg-5873", map[string]string{"ICEBERG": "0.14.1"}, true, "includes 0.14.1"},
		{"iceberg-5873", map[string]string{"iceberg": "1.1.0"}, false, "does not affect iceberg 1.1.0"},
		{"iceberg-5873", map[string]string{"iceberg": "new"}, true, "could not be parsed"},
		{"iceberg-5873", map[string]string{"paimon": "1.0"}, true, "unknown"},
		{"FLINK-40043", map[string]string{"flink-cdc": "3.5.0"}, false, "does not affect"},
		{"FLINK-40043", map[string]string{"flink-cdc": "3.6.0"}, true, "includes 3.6.0"},
		{"FLINK-40043", map[string]string{"flink-cdc": "3.7.0"}, false, "does not affect"},
	} {
		got, note := cat.Bug(tc.bug).Applies(Options{FlinkVersion: "1.20.0", ConnectorVersions: tc.versions})
		if got != tc.want || !strings.Contains(note, tc.note) {
			t.Errorf("%s with %v: %v %q, want %v with %q", tc.bug, tc.versions, got, note, tc.want, tc.note)
		}
	}
}

// TestStateRuleVersionScope: a state rule confined to some connector versions applies inside
// them, not outside, and (conservatively) when the version is unknown, saying so.
func TestStateRuleVersionScope(t *testing.T) {
	cat := DefaultCatalog()
	r := &StateRule{Name: "s", Assumption: FirstOnly, Versions: &VersionScope{Component: "iceberg", From: "1.1.0"}}
	for _, tc := range []struct {
		versions map[string]string
		want     bool
		note     string
	}{
		{nil, true, "iceberg version is unknown"},
		{map[string]string{"iceberg": "1.0.0"}, false, "not 1.0.0"},
		{map[string]string{"iceberg": "1.1.0"}, true, "iceberg 1.1.0 and later, which includes 1.1.0"},
		{map[string]string{"iceberg": "1.1.0-rc1"}, false, "not 1.1.0-rc1"},
		{map[string]string{"iceberg": "x"}, true, "could not be parsed"},
	} {
		got, note := r.applies(cat, Options{ConnectorVersions: tc.versions})
		if got != tc.want || !strings.Contains(note, tc.note) {
			t.Errorf("%v: %v %q, want %v with %q", tc.versions, got, note, tc.want, tc.note)
		}
	}
}
