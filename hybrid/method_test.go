package hybrid

import (
	"os"
	"strings"
	"testing"
)

// TestMethodTable: every row is complete and consistent, and the package
// doc, docs/design.md and the README name every method of the table.
func TestMethodTable(t *testing.T) {
	if len(Methods) != len(methods) {
		t.Fatalf("%d names for %d methods", len(Methods), len(methods))
	}
	for _, m := range methods {
		if got, err := MethodByName(m.Name); err != nil || got != m {
			t.Errorf("MethodByName(%q) = %v, %v", m.Name, got, err)
		}
		if m.drafter == nil || m.verifier == nil || m.Summary == "" {
			t.Errorf("%s: drafter, verifier and summary are required", m.Name)
		}
		if m.Family != FamilyLLM && m.uploader == nil {
			t.Errorf("%s: no upload rule", m.Name)
		}
		if m.Family == FamilyBlock && m.uploader != nil && m.uploader(DefaultParams()) == nil {
			t.Errorf("%s: nil uploader", m.Name)
		}
		if m.Uncertainty && m.Family != FamilySkip || m.Controlled && m.Family != FamilyBlock {
			t.Errorf("%s: uncertainty belongs to the skip family, draft control to blocks", m.Name)
		}
		p := DefaultParams()
		p.Method = m.Name
		if err := p.Validate(); err != nil {
			t.Errorf("%s: default parameters invalid: %v", m.Name, err)
		}
	}
	if _, err := MethodByName("nope"); err == nil || !strings.Contains(err.Error(), "q-s") {
		t.Errorf("unknown method: err = %v, want one listing the methods", err)
	}
	for _, doc := range []string{"doc.go", "../docs/design.md", "../README.md"} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		for _, name := range Methods {
			if !strings.Contains(text, " "+name+" ") && !strings.Contains(text, "`"+name+"`") {
				t.Errorf("%s does not list method %s", doc, name)
			}
		}
	}
}
