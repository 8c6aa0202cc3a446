package server

import (
	"io"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
)

func TestBuildInfoMetric(t *testing.T) {
	h := startInProcess(t, Config{})
	rec := httptest.NewRecorder()
	h.s.HTTPHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	var line string
	for _, l := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(l, "preflight_build_info{") {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("/metrics has no preflight_build_info series")
	}
	for _, want := range []string{`goversion="` + runtime.Version() + `"`, `revision="`, `version="`, "} 1"} {
		if !strings.Contains(line, want) {
			t.Errorf("build info series %q lacks %q", line, want)
		}
	}
}
