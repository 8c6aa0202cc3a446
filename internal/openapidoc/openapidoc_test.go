package openapidoc

import (
	"strings"
	"testing"

	"github.com/flinkpreflight/preflight/internal/testutil"
)

func TestBuild(t *testing.T) {
	gen := `{"paths":{"/a":{}},"definitions":{"X":{"type":"object","properties":{
		"y":{"$ref":"#/definitions/Y","description":"the y"},
		"z":{"type":"array","items":{"type":"object","$ref":"#/definitions/Y"}},
		"w":{"$ref":"#/definitions/Y"}}},
		"rpcStatus":{"properties":{"code":{"type":"integer"}}}}}`
	tests := []struct {
		name, extra string
		want        []string
		wantErr     string
	}{
		{"merge and fix", `{"paths":{"/b":{}},"definitions":{"Y":{"type":"object"}}}`, []string{
			`"/b": {}`, `"Y": {`,
			`"y": {
          "allOf": [
            {
              "$ref": "#/definitions/Y"
            }
          ],
          "description": "the y"`,
			`"items": {
            "$ref": "#/definitions/Y"
          }`,
			`"w": {
          "$ref": "#/definitions/Y"
        }`,
			`"description": "The gRPC status code`,
		}, ""},
		{"no override", `{"paths":{"/a":{}}}`, nil, `redefines paths "/a"`},
		{"bad fragment", `{`, nil, "fragment"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Build([]byte(gen), []byte(tt.extra))
			if testutil.WantError(t, err, tt.wantErr) {
				return
			}
			for _, w := range tt.want {
				if !strings.Contains(string(got), w) {
					t.Errorf("output lacks %s:\n%s", w, got)
				}
			}
		})
	}
}
