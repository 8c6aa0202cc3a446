package report

import (
	"bytes"
	"encoding/json"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
)

// indentSeeds are JSON texts whose indentation indentJSON must get as json.Indent does.
var indentSeeds = []string{
	`{}`, `[]`, `{"a":[]}`, `{"a":{},"b":[1,2,{"c":"x"}]}`, ` { "a" : [ ] , "b" : "q\"u:o{t}e,\\" } `,
	`{"s":"tab\tand \u00e9 and [brackets] {braces}, commas"}`, `[[],[[]],{"k":null,"t":true,"f":false,"n":-1.5e3}]`,
}

func TestIndentJSONMatchesJSONIndent(t *testing.T) {
	compact, err := protojson.Marshal(sampleReport())
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range append(indentSeeds, string(compact)) {
		checkIndent(t, []byte(src))
	}
}

func FuzzIndentJSON(f *testing.F) {
	for _, s := range indentSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		if !json.Valid(src) {
			t.Skip()
		}
		checkIndent(t, src)
	})
}

// checkIndent compares with json.Indent, which copies trailing whitespace (protojson writes none).
func checkIndent(t *testing.T, src []byte) {
	t.Helper()
	src = bytes.TrimRight(src, " \t\r\n")
	var want, got bytes.Buffer
	if err := json.Indent(&want, src, "", "  "); err != nil {
		t.Fatal(err)
	}
	want.WriteByte('\n')
	if err := indentJSON(&got, src); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Errorf("indentJSON(%q) =\n%s\nwant\n%s", src, got.String(), want.String())
	}
}
