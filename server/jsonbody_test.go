package server

import (
	"io"
	"net/http"
	"strings"
	"testing"

	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

func TestJSONPathAt(t *testing.T) {
	doc := `{"plan": {"parallelism": {"a": 2}, "vertices": [{"id": "x", "operators": ["p", "q"]}]}, "n": 1}`
	for _, tc := range []struct{ at, want string }{
		{`{"a"`, "plan.parallelism"}, {`2}`, "plan.parallelism.a"}, {`"x"`, "plan.vertices[0].id"},
		{`"q"`, "plan.vertices[0].operators[1]"}, {`1}`, "n"},
	} {
		off := strings.Index(doc, tc.at)
		if got := jsonPathAt([]byte(doc), off); got != tc.want {
			t.Errorf("at %q (byte %d): %q, want %q", tc.at, off, got, tc.want)
		}
	}
}

// TestJSONBodyErrors: a body the API cannot read is refused naming the field or the byte.
func TestJSONBodyErrors(t *testing.T) {
	m := newJSONBodyMarshaler()
	for _, tc := range []struct{ body, want string }{
		{`{"checkpoint":{"uri":"/x"},"plan":{"parallelism":2}}`, "field plan.parallelism (byte 49): unexpected token 2; plan.parallelism is per vertex"},
		{`{"plan":{"defaultParallelism":"two"}}`, "field plan.defaultParallelism (byte 30)"},
		{`{"plan":{"defaultParallelism":2}`, "the JSON ends before it is complete"},
		{`{"plan":{"defaultParallelism":2}}}`, ""},
		{`{"plan" {}}`, "malformed JSON at byte 8"},
		{``, "empty, want a JSON object"},
	} {
		err := m.NewDecoder(strings.NewReader(tc.body)).Decode(&pb.CheckRescaleRequest{})
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.body, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want %q", tc.body, err, tc.want)
		}
	}
}

// TestHTTPJSONErrorsNameTheField: through the HTTP face, the natural guess of a job-wide
// parallelism answers 400 naming plan.parallelism and the field to use.
func TestHTTPJSONErrorsNameTheField(t *testing.T) {
	base := serveHarnessHTTP(t, startInProcess(t, Config{}))
	resp, err := http.Post(base+"/v1/check", "application/json", strings.NewReader(`{"checkpoint":{"uri":"/x"},"plan":{"parallelism":2}}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "plan.parallelism") || !strings.Contains(string(b), "plan.defaultParallelism") {
		t.Fatalf("HTTP %d %s", resp.StatusCode, b)
	}
}
