package render

import (
	"strings"
	"testing"

	"github.com/prose-store/prose/ingest/source"
)

// A row shorter than its table is shown as wide as the table.
func TestAShortRowIsAsWideAsItsTable(t *testing.T) {
	b := source.Block{Kind: source.Table, Rows: [][]string{{"a", "b", "c"}, {"d"}}}
	got := block(b, func(s string) string { return s }, nil)
	for _, row := range strings.Split(got, "<tr>")[1:] {
		if n := strings.Count(row, "<td>"); n != 3 {
			t.Errorf("a row of %d cells: %s", n, got)
		}
	}
}
