package classpath

import "testing"

// FuzzParseConfig: any bytes as flink-conf.yaml or config.yaml give a Config or an error.
func FuzzParseConfig(f *testing.F) {
	f.Add(true, []byte("classloader:\n  resolve-order: parent-first\n  parent-first-patterns:\n    additional: [org.apache.kafka., com.fasterxml]\n"))
	f.Add(false, []byte("classloader.resolve-order: child-first\nclassloader.parent-first-patterns.additional: org.apache.kafka.;com.google # x\n"))
	f.Fuzz(func(t *testing.T, yamlFormat bool, data []byte) {
		name := "flink-conf.yaml"
		if yamlFormat {
			name = "config.yaml"
		}
		c, err := parseConfig(name, data)
		if err != nil {
			return
		}
		if c.ResolveOrder != "" && c.ResolveOrder != "child-first" && c.ResolveOrder != "parent-first" {
			t.Fatalf("resolve order %q accepted", c.ResolveOrder)
		}
		for _, p := range append(c.Additional, c.ParentFirst...) {
			if p == "" {
				t.Fatal("empty pattern: it would match every class")
			}
		}
	})
}

func TestParseConfig(t *testing.T) {
	for _, tc := range []struct {
		name, file, text string
		order            string
		additional       []string
	}{
		{"legacy flat", "flink-conf.yaml", "classloader.resolve-order: parent-first\nclassloader.parent-first-patterns.additional: org.apache.kafka.;com.google.\n", "parent-first", []string{"org.apache.kafka.", "com.google."}},
		{"1.19 nested list", "config.yaml", "classloader:\n  parent-first-patterns:\n    additional:\n      - org.apache.kafka.\n", "", []string{"org.apache.kafka."}},
		{"1.19 flat keys", "config.yaml", "classloader.resolve-order: child-first\nclassloader.parent-first-patterns.additional: 'a.;b.'\n", "child-first", []string{"a.", "b."}},
		{"comments and blanks", "flink-conf.yaml", "# classloader.resolve-order: parent-first\n\n  classloader.resolve-order: child-first  # default\n", "child-first", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseConfig(tc.file, []byte(tc.text))
			if err != nil {
				t.Fatal(err)
			}
			if c.ResolveOrder != tc.order || len(c.Additional) != len(tc.additional) {
				t.Fatalf("order %q additional %q", c.ResolveOrder, c.Additional)
			}
			for i := range tc.additional {
				if c.Additional[i] != tc.additional[i] {
					t.Fatalf("additional %q", c.Additional)
				}
			}
		})
	}
	if _, err := parseConfig("flink-conf.yaml", []byte("classloader.resolve-order: sideways\n")); err == nil {
		t.Fatal("bad resolve order accepted")
	}
}

func TestDefaultParentFirst(t *testing.T) {
	has := func(ps []string, p string) bool {
		for _, x := range ps {
			if x == p {
				return true
			}
		}
		return false
	}
	for _, tc := range []struct {
		v          string
		xml, rocks bool
	}{{"1.9.1", false, false}, {"1.10.0", true, false}, {"1.13.6", true, false}, {"1.14.0", true, true}, {"1.19.1", true, true}, {"2.0.0", true, true}} {
		v, _ := ParseVersion(tc.v)
		ps := DefaultParentFirst(v)
		if !has(ps, "org.apache.flink.") || !has(ps, "scala.") || has(ps, "org.xml") != tc.xml || has(ps, "org.rocksdb.") != tc.rocks {
			t.Errorf("%s: %v", tc.v, ps)
		}
	}
}
