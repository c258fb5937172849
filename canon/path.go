package canon

import (
	"fmt"
	"strings"
)

// Path addresses a value inside structured truth: the object keys leading to
// it, outermost first. The empty Path is the root. Array elements have no
// segment of their own: they sit at their array's path.
type Path []string

// ParsePath parses the dotted form of a path. Segments are separated by
// dots; within a segment `\.` stands for a literal dot and `\\` for a
// backslash, so the key "notes.md" under "docs" is written `docs.notes\.md`.
// The empty string is the root. Empty segments ("a..b", a leading or
// trailing dot), any other backslash escape and a trailing lone backslash
// are errors.
func ParsePath(s string) (Path, error) {
	if s == "" {
		return Path{}, nil
	}
	var p Path
	var seg strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			if i+1 >= len(s) {
				return nil, fmt.Errorf("canon: path %s ends with a lone backslash (write \\\\ for a literal backslash)", quoteForError(s))
			}
			i++
			if s[i] != '.' && s[i] != '\\' {
				return nil, fmt.Errorf("canon: path %s has an invalid escape \\%c at offset %d (only \\. and \\\\ are allowed)", quoteForError(s), s[i], i-1)
			}
			seg.WriteByte(s[i])
		case '.':
			if seg.Len() == 0 {
				return nil, fmt.Errorf("canon: path %s has an empty segment at offset %d", quoteForError(s), i)
			}
			p = append(p, seg.String())
			seg.Reset()
		default:
			seg.WriteByte(c)
		}
	}
	if seg.Len() == 0 {
		return nil, fmt.Errorf("canon: path %s ends with a dot (empty last segment)", quoteForError(s))
	}
	return append(p, seg.String()), nil
}

// String returns the dotted form of p, escaping dots and backslashes inside
// segments, so that ParsePath(p.String()) equals p for any path of non-empty
// segments.
func (p Path) String() string {
	var b strings.Builder
	for i, seg := range p {
		if i > 0 {
			b.WriteByte('.')
		}
		if !strings.ContainsAny(seg, `.\`) {
			b.WriteString(seg)
			continue
		}
		for j := 0; j < len(seg); j++ {
			if seg[j] == '.' || seg[j] == '\\' {
				b.WriteByte('\\')
			}
			b.WriteByte(seg[j])
		}
	}
	return b.String()
}

// Child returns a new path: p followed by key. It never shares p's backing
// array, so children of one parent do not overwrite each other.
func (p Path) Child(key string) Path {
	c := make(Path, len(p)+1)
	copy(c, p)
	c[len(p)] = key
	return c
}

// HasPrefix reports whether p equals prefix or lies below it.
func (p Path) HasPrefix(prefix Path) bool {
	if len(prefix) > len(p) {
		return false
	}
	for i, seg := range prefix {
		if p[i] != seg {
			return false
		}
	}
	return true
}
