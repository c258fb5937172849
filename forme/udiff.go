package forme

import (
	"fmt"
	"strings"
)

// UnifiedDiff renders the change from a to b as a unified diff with three
// lines of context, headed "--- oldName" and "+++ newName"; "" when they
// are equal. It is how `prose upgrade --dry-run` shows its plan; contract
// sources are small, so the quadratic line alignment is fine.
func UnifiedDiff(oldName, newName string, a, b []byte) string {
	if string(a) == string(b) && oldName == newName {
		return ""
	}
	x, y := splitLines(a), splitLines(b)
	ops := alignLines(x, y)
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", oldName, newName)
	const ctx = 3
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		// A hunk: from ctx lines before this change to ctx lines after the
		// last change that is within 2*ctx of the previous one.
		start := max(i-ctx, 0)
		end := i
		for j := i; j < len(ops); j++ {
			if ops[j].kind != ' ' {
				end = j
			} else if j-end > 2*ctx {
				break
			}
		}
		stop := min(end+ctx+1, len(ops))
		oldStart, newStart := ops[start].x+1, ops[start].y+1
		oldN, newN := 0, 0
		var body strings.Builder
		for _, op := range ops[start:stop] {
			switch op.kind {
			case ' ':
				oldN++
				newN++
				body.WriteString(" " + x[op.x])
			case '-':
				oldN++
				body.WriteString("-" + x[op.x])
			case '+':
				newN++
				body.WriteString("+" + y[op.y])
			}
		}
		if oldN == 0 {
			oldStart--
		}
		if newN == 0 {
			newStart--
		}
		fmt.Fprintf(&out, "@@ -%d,%d +%d,%d @@\n", oldStart, oldN, newStart, newN)
		out.WriteString(body.String())
		i = stop
	}
	return out.String()
}

// splitLines splits text into lines that keep their "\n"; a last line
// without one gets the marker diff prints for it.
func splitLines(b []byte) []string {
	s := string(b)
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	} else {
		lines[len(lines)-1] += "\n\\ No newline at end of file\n"
	}
	return lines
}

// diffOp is one line of the alignment: kept (' '), removed ('-') or added
// ('+'); x and y are the line's index in the old and new text (for an added
// line, x is where the old text stands, and the other way round).
type diffOp struct {
	kind rune
	x, y int
}

// alignLines aligns x and y on a longest common subsequence of lines.
func alignLines(x, y []string) []diffOp {
	n, m := len(x), len(y)
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []diffOp
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && x[i] == y[j]:
			ops = append(ops, diffOp{' ', i, j})
			i++
			j++
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, diffOp{'-', i, j})
			i++
		default:
			ops = append(ops, diffOp{'+', i, j})
			j++
		}
	}
	return ops
}
