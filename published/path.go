package published

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// The rules a world-model path can break. Each is the text a PathError
// carries in Rule, so callers can compare against these constants.
const (
	RuleEmpty    = "the path is empty (a world-model file needs a name)"
	RuleDotDot   = `".." segments are not allowed (world-model paths stay inside the node)`
	RuleAbsolute = "absolute paths are not allowed (world-model paths are relative to the node)"
	RuleDrive    = "Windows drive paths are not allowed (world-model paths are relative to the node)"
	RuleControl  = "NUL and control characters are not allowed in world-model paths"
	RuleUTF8     = "world-model paths must be valid UTF-8"
	RuleGit      = `".git" is reserved for git, in any spelling git reads as ".git" (any case, trailing dots or spaces, "git~1", ignorable Unicode): rename it`
	RuleGitLink  = `".gitmodules" cannot be a symlink (git refuses it in any spelling it reads as ".gitmodules"): make it a regular file`
)

// PathError reports a world-model path that breaks one of the path rules.
// Path is the path as given; Rule is one of the Rule constants.
type PathError struct {
	Path string
	Rule string
}

// Error returns a sentence naming the path and the rule it breaks.
func (e *PathError) Error() string {
	return fmt.Sprintf("path %q: %s", e.Path, e.Rule)
}

// NormalizePath returns the normal form of a world-model file path:
// backslashes become slashes and empty and "." segments are dropped, so
// "a\\b", "./a//b/" and "a/./b" all become "a/b". It rejects, with a
// *PathError, paths that are not valid UTF-8, contain NUL or other control
// characters, are absolute (a leading slash or backslash, a Windows drive such
// as "C:"), contain a ".." segment, or are empty once normalized.
//
// NormalizePath does not look at case or Unicode normalization: two paths
// that differ only there are distinct here and a collision for
// CheckCollisions.
func NormalizePath(p string) (string, error) {
	if !utf8.ValidString(p) {
		return "", &PathError{Path: p, Rule: RuleUTF8}
	}
	for _, r := range p {
		if unicode.IsControl(r) {
			return "", &PathError{Path: p, Rule: RuleControl}
		}
	}
	if strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) {
		return "", &PathError{Path: p, Rule: RuleAbsolute}
	}
	if isNormalShape(p) {
		// The common case, paths already in normal form, allocates nothing.
		if isDrive(p) {
			return "", &PathError{Path: p, Rule: RuleDrive}
		}
		for seg := range strings.SplitSeq(p, "/") {
			if IsGitDir(seg) {
				return "", &PathError{Path: p, Rule: RuleGit}
			}
		}
		return p, nil
	}
	s := strings.ReplaceAll(p, `\`, "/")
	segs := make([]string, 0, strings.Count(s, "/")+1)
	for seg := range strings.SplitSeq(s, "/") {
		switch seg {
		case "", ".":
			continue
		case "..":
			return "", &PathError{Path: p, Rule: RuleDotDot}
		}
		if IsGitDir(seg) {
			return "", &PathError{Path: p, Rule: RuleGit}
		}
		segs = append(segs, seg)
	}
	if len(segs) == 0 {
		return "", &PathError{Path: p, Rule: RuleEmpty}
	}
	// Checked after dropping "." segments: "./C:/x" is as much a drive path
	// as "C:/x", and the normal form must stay valid when normalized again.
	if isDrive(segs[0]) {
		return "", &PathError{Path: p, Rule: RuleDrive}
	}
	return strings.Join(segs, "/"), nil
}

// IsGitDir reports whether git reads the path segment seg as ".git" on some
// file system, and so refuses it in a tree (git fsck's hasDotgit): ".git" in
// any case; on NTFS also with trailing dots or spaces, with an alternate
// data stream (".git::$INDEX_ALLOCATION") and as the short name "git~1"; on
// HFS+ also with ignorable Unicode code points anywhere (".g\u200cit").
func IsGitDir(seg string) bool {
	return reservedGitName(seg, ".git", "git~1", "")
}

// IsGitModules reports whether git reads seg as ".gitmodules" on some file
// system (the same spellings as IsGitDir, with the NTFS short names
// "gitmod~1" to "gitmod~4" and "gi7eba~1" to "gi7eba~9"); git refuses such
// a name when it is a symlink.
func IsGitModules(seg string) bool {
	return reservedGitName(seg, ".gitmodules", "gitmod~", "gi7eba~")
}

// CheckLinkName reports, with a *PathError, a symlink at the world-model
// path p whose last segment git refuses as a link. Regular files of that
// name are fine.
func CheckLinkName(p string) error {
	name := p[strings.LastIndexByte(p, '/')+1:]
	if IsGitModules(name) {
		return &PathError{Path: p, Rule: RuleGitLink}
	}
	return nil
}

// reservedGitName reports whether seg is name (a dot name such as ".git")
// as git reads it on NTFS or HFS+. short is an NTFS short name: a full one
// ("git~1"), or a prefix ending in '~' followed by one digit ("gitmod~"
// takes 1 to 4, a fallback prefix such as "gi7eba~" 1 to 9).
func reservedGitName(seg, name, short, fallback string) bool {
	if seg == "" {
		return false
	}
	switch c := seg[0]; {
	case c == '.' || c == 'g' || c == 'G':
	case c >= utf8.RuneSelf:
		// HFS+ ignores some code points: ".git" may start with one.
	default:
		return false
	}
	if hasNTFSName(seg, name) {
		return true
	}
	if strings.HasSuffix(short, "~") {
		if n := len(short); len(seg) > n && strings.EqualFold(seg[:n], short) && '1' <= seg[n] && seg[n] <= '4' && ntfsTail(seg[n+1:]) {
			return true
		}
	} else if hasNTFSName(seg, short) {
		return true
	}
	if n := len(fallback); n > 0 && len(seg) > n && strings.EqualFold(seg[:n], fallback) && '1' <= seg[n] && seg[n] <= '9' && ntfsTail(seg[n+1:]) {
		return true
	}
	return hfsName(seg, name)
}

// hasNTFSName reports whether seg is name in any case, followed only by
// dots and spaces (which NTFS drops) and an optional alternate data stream
// (":stream").
func hasNTFSName(seg, name string) bool {
	return len(seg) >= len(name) && strings.EqualFold(seg[:len(name)], name) && ntfsTail(seg[len(name):])
}

// ntfsTail reports whether NTFS drops all of rest from a name: dots and
// spaces, then nothing or a data stream.
func ntfsTail(rest string) bool {
	for i := 0; i < len(rest); i++ {
		switch rest[i] {
		case '.', ' ':
			continue
		case ':':
			return true
		}
		return false
	}
	return true
}

// hfsName reports whether seg is name in any case once the code points HFS+
// ignores are dropped.
func hfsName(seg, name string) bool {
	i := 0
	for _, r := range seg {
		if hfsIgnorable(r) {
			continue
		}
		if i >= len(name) || unicode.ToLower(r) != rune(name[i]) {
			return false
		}
		i++
	}
	return i == len(name)
}

// hfsIgnorable reports the code points HFS+ drops from names: the
// zero-width joiners and directional marks git lists.
func hfsIgnorable(r rune) bool {
	switch {
	case 0x200c <= r && r <= 0x200f, 0x202a <= r && r <= 0x202e, 0x206a <= r && r <= 0x206f, r == 0xfeff:
		return true
	}
	return false
}

// isNormalShape reports whether p, already known to be free of control
// characters and not to start with a slash, has no backslash and no empty,
// "." or ".." segment.
func isNormalShape(p string) bool {
	if p == "" || strings.IndexByte(p, '\\') >= 0 {
		return false
	}
	for seg := range strings.SplitSeq(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

// isDrive reports whether a first path segment names a Windows drive ("C:",
// "c:foo"), which Windows resolves outside the node directory.
func isDrive(seg string) bool {
	if len(seg) < 2 || seg[1] != ':' {
		return false
	}
	c := seg[0] | 0x20
	return 'a' <= c && c <= 'z'
}

// CollisionError reports two world-model paths that would name the same
// file or directory on some filesystem.
type CollisionError struct {
	Path   string // the later path, as given
	Other  string // the earlier path it collides with, as given
	Reason string
}

// Error returns a sentence naming both paths and why they collide.
func (e *CollisionError) Error() string {
	return fmt.Sprintf("path %q collides with %q: %s", e.Path, e.Other, e.Reason)
}

// CheckCollisions reports the first problem in a set of world-model paths,
// in input order: a path that breaks a NormalizePath rule (a *PathError), or
// a *CollisionError naming both paths when two of them normalize to the same
// path, differ only in case or Unicode normalization (compared after NFC with
// Unicode simple case folding, as strings.EqualFold does, for the whole path
// and for each directory on the way), or when one path is a file and also a
// directory of another ("a" and "a/b"). Case-insensitive and normalizing
// filesystems (macOS, Windows) would otherwise merge such files silently.
func CheckCollisions(paths []string) error {
	type seen struct {
		spelling string // normalized path or directory prefix
		path     string // the path that introduced it, as given
	}
	files := make(map[string]seen, len(paths))
	dirs := make(map[string]seen)
	for _, p := range paths {
		n, err := NormalizePath(p)
		if err != nil {
			return err
		}
		// Folding and NFC never move, make or remove a '/', so the key of
		// each directory on the way is a prefix of the path's key, ending
		// at the same count of slashes.
		key := foldKey(n)
		ni, ki := 0, 0
		for {
			dn := strings.IndexByte(n[ni:], '/')
			if dn < 0 {
				break
			}
			dk := strings.IndexByte(key[ki:], '/')
			ni, ki = ni+dn, ki+dk
			spelling, k := n[:ni], key[:ki]
			ni, ki = ni+1, ki+1
			if f, ok := files[k]; ok {
				return &CollisionError{Path: p, Other: f.path,
					Reason: fmt.Sprintf("%q would be both a file and a directory", spelling)}
			}
			if d, ok := dirs[k]; ok {
				if d.spelling != spelling {
					return &CollisionError{Path: p, Other: d.path,
						Reason: fmt.Sprintf("directories %q and %q differ only in case or Unicode normalization", spelling, d.spelling)}
				}
				continue
			}
			dirs[k] = seen{spelling: spelling, path: p}
		}
		if f, ok := files[key]; ok {
			if f.spelling == n {
				return &CollisionError{Path: p, Other: f.path,
					Reason: fmt.Sprintf("both name %q", n)}
			}
			return &CollisionError{Path: p, Other: f.path,
				Reason: fmt.Sprintf("%q and %q differ only in case or Unicode normalization", n, f.spelling)}
		}
		if d, ok := dirs[key]; ok {
			return &CollisionError{Path: p, Other: d.path,
				Reason: fmt.Sprintf("%q would be both a file and a directory", n)}
		}
		files[key] = seen{spelling: n, path: p}
	}
	return nil
}

// foldKey maps a path to a key that is equal for two paths exactly when
// strings.EqualFold holds between their NFC forms: each rune becomes the
// smallest rune of its simple case-folding orbit.
func foldKey(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		// NFC leaves ASCII alone, and the smallest rune of an ASCII
		// letter's orbit is its upper case ('K' < 'k' < U+212A KELVIN SIGN).
		return strings.ToUpper(s)
	}
	s = norm.NFC.String(s)
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		m := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f < m {
				m = f
			}
		}
		b.WriteRune(m)
	}
	return b.String()
}

// EscapeNode maps a node id to the directory name that holds the node's
// world-model, such as published/<EscapeNode(node)>/. The mapping is
// reversible (UnescapeNode undoes it) and its result is plain lower-case
// ASCII, so two distinct nodes never share a directory, even on
// case-insensitive or Unicode-normalizing filesystems.
//
// The bytes a-z, 0-9, '-', '_' and '.' stay as they are. Every other byte of
// the id's UTF-8 encoding, upper-case letters and '%' included, is written as
// '%' and two upper-case hex digits, as in URL percent-encoding. A '.' is
// escaped too when it is the first or last byte (no hidden, ".", ".." or
// trailing-dot names, which Windows strips), and so is the first byte of an
// id whose part before the first '.' is a Windows device name (con, prn, aux,
// nul, com0-com9, lpt0-lpt9). Examples:
//
//	ingress.press-feed        → ingress.press-feed
//	claude-sessions::ingress  → claude-sessions%3A%3Aingress
//	Wiki                      → %57iki
//	.hidden                   → %2Ehidden
//	nul                       → %6Eul
//
// An empty id has no directory; EscapeNode returns "" for it.
func EscapeNode(node string) string {
	reserved := isDeviceName(node)
	var b strings.Builder
	b.Grow(len(node))
	for i := 0; i < len(node); i++ {
		c := node[i]
		escape := !isPlainNodeByte(c) ||
			(c == '.' && (i == 0 || i == len(node)-1)) ||
			(i == 0 && reserved)
		if escape {
			const hex = "0123456789ABCDEF"
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xF])
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// UnescapeNode returns the node id whose EscapeNode form is dir. It accepts
// only the exact output of EscapeNode: malformed or lower-case escapes,
// bytes that should have been escaped, and escapes of bytes that should have
// stayed plain are errors, so each directory name stands for one node.
func UnescapeNode(dir string) (string, error) {
	if dir == "" {
		return "", fmt.Errorf("node directory name is empty")
	}
	node := make([]byte, 0, len(dir))
	for i := 0; i < len(dir); i++ {
		c := dir[i]
		switch {
		case c == '%':
			if i+2 >= len(dir) {
				return "", fmt.Errorf("node directory %q: escape at byte %d is cut short (want %%XX with upper-case hex)", dir, i)
			}
			hi, ok1 := upperHex(dir[i+1])
			lo, ok2 := upperHex(dir[i+2])
			if !ok1 || !ok2 {
				return "", fmt.Errorf("node directory %q: escape %q at byte %d is not %%XX with upper-case hex", dir, dir[i:i+3], i)
			}
			node = append(node, hi<<4|lo)
			i += 2
		case isPlainNodeByte(c):
			node = append(node, c)
		default:
			return "", fmt.Errorf("node directory %q: byte %q at %d should have been escaped", dir, c, i)
		}
	}
	s := string(node)
	if want := EscapeNode(s); want != dir {
		return "", fmt.Errorf("node directory %q is not in canonical form (node %q is stored as %q)", dir, s, want)
	}
	return s, nil
}

// isPlainNodeByte reports whether c may appear unescaped in a node directory.
func isPlainNodeByte(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.'
}

// isDeviceName reports whether a node id, up to its first '.', is a Windows
// device name; such names cannot be directories on Windows. Only lower-case
// ids matter: upper-case letters are escaped anyway.
func isDeviceName(node string) bool {
	stem, _, _ := strings.Cut(node, ".")
	switch stem {
	case "con", "prn", "aux", "nul":
		return true
	}
	if len(stem) == 4 && (stem[:3] == "com" || stem[:3] == "lpt") && '0' <= stem[3] && stem[3] <= '9' {
		return true
	}
	return false
}

// upperHex decodes one upper-case hex digit.
func upperHex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// RuleIdent is the rule an identifier (a wiki slot id or template name)
// breaks when it is not a lowercase ASCII letter followed by up to 63
// lowercase letters, digits, '-' or '_'.
const RuleIdent = "identifiers are a lowercase ASCII letter followed by up to 63 lowercase letters, digits, '-' or '_'"

// CheckIdent reports, with a *PathError naming RuleIdent, an identifier
// that is not safe to use as a file name, an HTML attribute value and a
// YAML key without quoting: slot ids and template names.
func CheckIdent(s string) error {
	ok := len(s) > 0 && len(s) <= 64 && 'a' <= s[0] && s[0] <= 'z'
	for i := 1; ok && i < len(s); i++ {
		c := s[i]
		ok = 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_'
	}
	if !ok {
		return &PathError{Path: s, Rule: RuleIdent}
	}
	return nil
}

// IsDeviceName reports whether a file or folder name, up to its first '.'
// and in any case, is a Windows device name (con, prn, aux, nul, com0-com9,
// lpt0-lpt9), which no file or folder can be called on Windows.
func IsDeviceName(name string) bool { return isDeviceName(strings.ToLower(name)) }
