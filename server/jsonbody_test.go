package server

import (
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
		{`{"checkpoint":{"uri":"/x"},"plan":{"parallelism":2}}`, "field plan.parallelism (byte 49): unexpected token 2; plan.parallelism is the deprecated name of plan.vertexParallelism"},
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
	code, b := post(t, base+"/v1/check", []byte(`{"checkpoint":{"uri":"/x"},"plan":{"parallelism":2}}`))
	if code != http.StatusBadRequest || !strings.Contains(string(b), "plan.parallelism") || !strings.Contains(string(b), "plan.defaultParallelism") {
		t.Fatalf("HTTP %d %s", code, b)
	}
}

// TestHTTPVertexParallelism: the per-vertex map is plan.vertexParallelism; its deprecated name
// plan.parallelism still works and gives the same answer; the two disagreeing is refused.
func TestHTTPVertexParallelism(t *testing.T) {
	td := testdataDir(t)
	base := serveHarnessHTTP(t, startInProcess(t, Config{Allow: []string{td}}))
	uri := `{"uri":"` + td + `/compact-sink"}`
	for _, tc := range []struct{ name, plan, want string }{
		{"vertexParallelism", `{"vertexParallelism":{"compact-operator":8}}`, `"VERDICT_DENY"`},
		{"deprecated parallelism", `{"parallelism":{"compact-operator":8}}`, `"VERDICT_DENY"`},
		{"job-wide", `{"defaultParallelism":4}`, `"VERDICT_ALLOW"`},
		{"both disagree", `{"parallelism":{"compact-operator":8},"vertexParallelism":{"compact-operator":4}}`, "is 8 in parallelism (the deprecated name) and 4 in vertex_parallelism"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, b := post(t, base+"/v1/check", []byte(`{"checkpoint":`+uri+`,"plan":`+tc.plan+`}`))
			if !strings.Contains(string(b), tc.want) {
				t.Fatalf("HTTP %d %s, want %s", code, b, tc.want)
			}
		})
	}
}
