package classpath

import "testing"

func TestPackageGroup(t *testing.T) {
	for in, want := range map[string]string{
		"com.fasterxml.jackson.databind.ObjectMapper": "com.fasterxml.*",
		"acme.Tool": "acme.*",
		"Main":      "(default package)",
	} {
		if got := packageGroup(in); got != want {
			t.Errorf("packageGroup(%q) = %q, want %q", in, got, want)
		}
	}
}
