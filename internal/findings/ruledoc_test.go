package findings

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestRulesDocCoversEveryRule(t *testing.T) {
	var md, text, js bytes.Buffer
	if err := WriteRulesDoc(&md, nil); err != nil {
		t.Fatal(err)
	}
	if err := WriteRulesText(&text, RuleDocs()); err != nil {
		t.Fatal(err)
	}
	if err := WriteRulesJSON(&js, RuleDocs(), CatalogBugDocs(nil), CatalogEntryDocs(nil)); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Rules []struct {
			ID   string `json:"id"`
			Bugs []struct {
				ID       string   `json:"id"`
				Affected []string `json:"affected"`
			} `json:"bugs"`
		} `json:"rules"`
		CatalogBugs      []struct{ ID string } `json:"catalog_bugs"`
		CatalogOperators []struct{ ID string } `json:"catalog_operators"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatalf("rules JSON: %v", err)
	}
	cat := DefaultCatalog()
	if len(doc.Rules) != len(Rules()) || len(doc.CatalogBugs) != len(cat.Bugs) || len(doc.CatalogOperators) != len(cat.Entries) {
		t.Fatalf("JSON has %d rules, %d catalog bugs and %d operators, want %d, %d and %d", len(doc.Rules), len(doc.CatalogBugs),
			len(doc.CatalogOperators), len(Rules()), len(cat.Bugs), len(cat.Entries))
	}
	for _, e := range cat.Entries {
		if !strings.Contains(md.String(), "| "+e.ID+" |") {
			t.Errorf("catalog entry %s missing from the Markdown", e.ID)
		}
	}
	for _, r := range Rules() {
		m := r.Meta()
		if !strings.Contains(md.String(), "\n## "+m.ID+"\n") || !strings.Contains(text.String(), m.ID+" ") {
			t.Errorf("%s missing from the Markdown or text rendering", m.ID)
		}
		for _, b := range m.Bugs {
			if !strings.Contains(md.String(), "| "+b.ID+" |") {
				t.Errorf("%s: bug %s missing from the Markdown", m.ID, b.ID)
			}
		}
	}
}

func TestSelectRuleDocs(t *testing.T) {
	docs, err := SelectRuleDocs([]string{"pf150", "PF101"})
	if err != nil || len(docs) != 2 || docs[0].ID != "PF150" || docs[1].ID != "PF101" {
		t.Fatalf("SelectRuleDocs = %v, %v", docs, err)
	}
	if _, err := SelectRuleDocs([]string{"PF999"}); err == nil || !strings.Contains(err.Error(), "PF101") {
		t.Fatalf("unknown rule: err = %v, want one listing the known rules", err)
	}
}
