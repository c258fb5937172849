package plan

import "testing"

// A page derived from a section (a procedure) has an origin of its own
// beside the section's page, and Underived gives the section back.
func TestDerivedOriginsAreApartFromTheSection(t *testing.T) {
	for _, c := range []struct{ origin, tmpl, want string }{
		{"guide.md#s-install", "procedure", "guide.md#s-install/procedure"},
		{"guide.md#s-install", "section", "guide.md#s-install"},
		{"guide.md#s-install", "", "guide.md#s-install"},
		{"guide.md", "procedure", "guide.md"},
		{"guide.md#s-install/procedure", "procedure", "guide.md#s-install/procedure"},
		{"c#/guide.md#s-a", "note", "c#/guide.md#s-a/note"},
	} {
		got := Derived(c.origin, c.tmpl)
		if got != c.want {
			t.Errorf("Derived(%q, %q) = %q, want %q", c.origin, c.tmpl, got, c.want)
		}
		if bare := Underived(got); bare != c.origin && c.origin == Underived(c.origin) {
			t.Errorf("Underived(%q) = %q, want %q", got, bare, c.origin)
		}
	}
}
