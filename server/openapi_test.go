package server

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestOpenAPIDocumented: every operation has a summary and a description and documents its
// 4xx errors; every property of every definition has a description or a title.
func TestOpenAPIDocumented(t *testing.T) {
	var doc struct {
		Info struct {
			Title, Version string
		}
		Paths       map[string]map[string]map[string]any
		Definitions map[string]struct {
			Properties map[string]map[string]any
		}
	}
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Info.Title != "Flink Preflight API" || doc.Info.Version == "" || strings.Contains(doc.Info.Version, "not set") {
		t.Errorf("info: title %q, version %q", doc.Info.Title, doc.Info.Version)
	}
	for _, path := range []string{"/v1/check", "/v1/inspect", UploadPath} {
		op := doc.Paths[path]["post"]
		if op == nil {
			t.Errorf("no POST %s", path)
			continue
		}
		if op["summary"] == nil || op["description"] == nil {
			t.Errorf("POST %s: no summary or description", path)
		}
		responses, _ := op["responses"].(map[string]any)
		if responses["400"] == nil || responses["429"] == nil {
			t.Errorf("POST %s: errors undocumented (responses %v)", path, keys(responses))
		}
	}
	if doc.Paths[UploadPath]["post"]["responses"].(map[string]any)["413"] == nil {
		t.Errorf("the upload does not document 413")
	}
	for name, def := range doc.Definitions {
		for p, s := range def.Properties {
			if s["description"] == nil && s["title"] == nil {
				t.Errorf("%s.%s has no description", name, p)
			}
		}
	}
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
