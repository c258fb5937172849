package forme

import (
	"fmt"
	"sort"
	"strings"
)

// Severity is how bad a diagnostic is. Any error blocks the manifest.
type Severity string

// The three severities, as ir-v0 spells them.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityInfo    Severity = "info"
)

func (s Severity) rank() int {
	switch s {
	case SeverityError:
		return 0
	case SeverityWarning:
		return 1
	}
	return 2
}

// Diagnostic is one finding about the contract set: a stable code, a
// severity, a message that says how to fix it, and a position. File is empty
// for findings about the project as a whole (no_sources); Line and Column are
// 1-based and zero when unknown.
type Diagnostic struct {
	Code     string   `json:"code"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
	File     string   `json:"file,omitempty"`
	Line     int      `json:"line,omitempty"`
	Column   int      `json:"column,omitempty"`
}

// String renders the diagnostic as `file:line:col: severity: code: message`.
// The location prefix shrinks to what is known (`file: …` when there is no
// line) and disappears for project-wide findings.
func (d Diagnostic) String() string {
	var b strings.Builder
	if d.File != "" {
		b.WriteString(d.File)
		if d.Line > 0 {
			fmt.Fprintf(&b, ":%d", d.Line)
			if d.Column > 0 {
				fmt.Fprintf(&b, ":%d", d.Column)
			}
		}
		b.WriteString(": ")
	}
	fmt.Fprintf(&b, "%s: %s: %s", d.Severity, d.Code, d.Message)
	return b.String()
}

// HasErrors reports whether any diagnostic is an error.
func HasErrors(diags []Diagnostic) bool {
	for _, d := range diags {
		if d.Severity == SeverityError {
			return true
		}
	}
	return false
}

// SortDiagnostics orders diagnostics by file, line, column, severity, code and
// message, so output is stable whatever order the checks ran in.
// Project-wide diagnostics (no file) come first.
func SortDiagnostics(diags []Diagnostic) {
	sort.SliceStable(diags, func(i, j int) bool {
		a, b := diags[i], diags[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Column != b.Column {
			return a.Column < b.Column
		}
		if a.Severity != b.Severity {
			return a.Severity.rank() < b.Severity.rank()
		}
		if a.Code != b.Code {
			return a.Code < b.Code
		}
		return a.Message < b.Message
	})
}

// dedupeDiagnostics drops exact repeats (sorted input).
func dedupeDiagnostics(diags []Diagnostic) []Diagnostic {
	out := diags[:0]
	for i, d := range diags {
		if i > 0 && d == diags[i-1] {
			continue
		}
		out = append(out, d)
	}
	return out
}

// diagAt builds a diagnostic with the catalog severity of code.
func diagAt(code, file string, pos Pos, format string, args ...any) Diagnostic {
	return Diagnostic{
		Code:     code,
		Severity: severityOf(code),
		Message:  fmt.Sprintf(format, args...),
		File:     file,
		Line:     pos.Line,
		Column:   pos.Column,
	}
}
