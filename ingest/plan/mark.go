package plan

import (
	"fmt"
	"hash/fnv"
	"strings"
)

// SourceMark is the class marking what the source named name adds to a
// page other sources wrote: "from-" and eight hex digits of the name's
// FNV-1a hash (a class the sanitizer keeps). Every version of a source has
// the same mark, so a changed source finds what an earlier version added.
func SourceMark(name string) string {
	h := fnv.New32a()
	h.Write([]byte(name))
	return fmt.Sprintf("from-%08x", h.Sum32())
}

// CutMarked removes from h every paragraph marked with class mark
// (`<p class="MARK">…</p>`) and the line break before it; n is how many it
// removed.
func CutMarked(h, mark string) (string, int) {
	open := `<p class="` + mark + `">`
	n := 0
	for {
		i := strings.Index(h, open)
		if i < 0 {
			return h, n
		}
		end := strings.Index(h[i:], "</p>")
		if end < 0 {
			end = len(h) - i
		} else {
			end += len("</p>")
		}
		start := i
		if start > 0 && h[start-1] == '\n' {
			start--
		} else if i+end < len(h) && h[i+end] == '\n' {
			end++
		}
		h = h[:start] + h[i+end:]
		n++
	}
}
