package published

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

func TestNormalizePath(t *testing.T) {
	tests := []struct {
		in   string
		want string
		rule string // non-empty: the PathError rule expected
	}{
		{in: "a", want: "a"},
		{in: "a/b.json", want: "a/b.json"},
		{in: `a\b`, want: "a/b"},
		{in: "./a//b/", want: "a/b"},
		{in: "a/./b/.", want: "a/b"},
		{in: `state\.\summary.md`, want: "state/summary.md"},
		{in: "a..b/c...", want: "a..b/c..."},
		{in: ".hidden/x", want: ".hidden/x"},
		{in: "é/ü", want: "é/ü"},
		{in: "a:b", rule: RuleDrive},
		{in: "ab:c", want: "ab:c"},
		{in: "x/C:/y", want: "x/C:/y"},
		{in: "", rule: RuleEmpty},
		{in: ".", rule: RuleEmpty},
		{in: "./", rule: RuleEmpty},
		{in: "//", rule: RuleAbsolute},
		{in: "/a", rule: RuleAbsolute},
		{in: `\a`, rule: RuleAbsolute},
		{in: `\\server\share\a`, rule: RuleAbsolute},
		{in: "C:", rule: RuleDrive},
		{in: `C:\x`, rule: RuleDrive},
		{in: "c:x", rule: RuleDrive},
		{in: "./C:/x", rule: RuleDrive},
		{in: "..", rule: RuleDotDot},
		{in: "a/../b", rule: RuleDotDot},
		{in: `a\..\b`, rule: RuleDotDot},
		{in: "a/..", rule: RuleDotDot},
		{in: "a\x00b", rule: RuleControl},
		{in: "a\nb", rule: RuleControl},
		{in: "a\x7fb", rule: RuleControl},
		{in: "a\u0085b", rule: RuleControl},
		{in: "a\xffb", rule: RuleUTF8},
		// Names git reads as ".git" on some file system.
		{in: ".git", rule: RuleGit},
		{in: ".git/config", rule: RuleGit},
		{in: "a/.git/hooks/x", rule: RuleGit},
		{in: `a\.git\x`, rule: RuleGit},
		{in: ".GIT/x", rule: RuleGit},
		{in: "a/.Git", rule: RuleGit},
		{in: ".git./x", rule: RuleGit},
		{in: ".git../x", rule: RuleGit},
		{in: ".git /x", rule: RuleGit},
		{in: ".git . /x", rule: RuleGit},
		{in: "git~1/x", rule: RuleGit},
		{in: "GIT~1", rule: RuleGit},
		{in: ".git::$INDEX_ALLOCATION/x", rule: RuleGit},
		{in: ".g\u200cit/x", rule: RuleGit},
		{in: "\ufeff.git", rule: RuleGit},
		{in: ".GI\u200dT\u206a", rule: RuleGit},
		{in: ".gitignore", want: ".gitignore"},
		{in: ".gitmodules", want: ".gitmodules"},
		{in: ".git.bak/x", want: ".git.bak/x"},
		{in: "git/x", want: "git/x"},
		{in: "git~2", want: "git~2"},
		{in: "x.git", want: "x.git"},
		{in: ".gi\u200ct.x", want: ".gi\u200ct.x"},
	}
	for _, tt := range tests {
		got, err := NormalizePath(tt.in)
		if tt.rule != "" {
			var pe *PathError
			if !errors.As(err, &pe) || pe.Rule != tt.rule || pe.Path != tt.in {
				t.Errorf("NormalizePath(%q) = %q, %v; want PathError with rule %q", tt.in, got, err, tt.rule)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("NormalizePath(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestCheckLinkName(t *testing.T) {
	for _, p := range []string{".gitmodules", "a/.gitmodules", ".GITMODULES", ".gitmodules.", ".gitmodules ", "gitmod~1", "GITMOD~4", "gi7eba~1", ".git\u200dmodules"} {
		var pe *PathError
		if err := CheckLinkName(p); !errors.As(err, &pe) || pe.Rule != RuleGitLink {
			t.Errorf("CheckLinkName(%q) = %v; want rule %q", p, err, RuleGitLink)
		}
	}
	for _, p := range []string{"a", ".gitmodules/x", ".gitmodulesx", "gitmod~5", "gitmodules", ".gitignore"} {
		if err := CheckLinkName(p); err != nil {
			t.Errorf("CheckLinkName(%q) = %v; want nil", p, err)
		}
	}
}

func TestPathErrorMessage(t *testing.T) {
	_, err := NormalizePath("a/../b")
	want := `path "a/../b": ".." segments are not allowed (world-model paths stay inside the node)`
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v; want %s", err, want)
	}
}

func TestCheckCollisions(t *testing.T) {
	tests := []struct {
		name  string
		paths []string
		bad   []string // the two paths the error must name; nil means no error
	}{
		{name: "distinct", paths: []string{"a", "b", "c/d", "c/e", "C-d"}},
		{name: "empty set"},
		{name: "same dir twice", paths: []string{"d/a", "d/b", "d/e/f"}},
		{name: "duplicate", paths: []string{"a/b", "a/b"}, bad: []string{"a/b", "a/b"}},
		{name: "duplicate after normalization", paths: []string{"a/b", `a\b`}, bad: []string{"a/b", `a\b`}},
		{name: "case of file", paths: []string{"x", "README.md", "readme.md"}, bad: []string{"README.md", "readme.md"}},
		{name: "case of directory", paths: []string{"State/a", "state/b"}, bad: []string{"State/a", "state/b"}},
		{name: "case of deep directory", paths: []string{"s/T/a", "s/t/a"}, bad: []string{"s/T/a", "s/t/a"}},
		{name: "unicode case", paths: []string{"ÄRGER", "ärger"}, bad: []string{"ÄRGER", "ärger"}},
		{name: "kelvin sign folds to k", paths: []string{"\u212a", "k"}, bad: []string{"\u212a", "k"}},
		{name: "NFC vs NFD", paths: []string{"caf\u00e9", "cafe\u0301"}, bad: []string{"caf\u00e9", "cafe\u0301"}},
		{name: "NFD directory", paths: []string{"caf\u00e9/a", "cafe\u0301/b"}, bad: []string{"caf\u00e9/a", "cafe\u0301/b"}},
		{name: "file then directory", paths: []string{"a", "a/b"}, bad: []string{"a", "a/b"}},
		{name: "directory then file", paths: []string{"a/b", "A"}, bad: []string{"a/b", "A"}},
		{name: "invalid path", paths: []string{"ok", "../x"}, bad: []string{"../x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckCollisions(tt.paths)
			if tt.bad == nil {
				if err != nil {
					t.Fatalf("CheckCollisions(%q) = %v; want nil", tt.paths, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("CheckCollisions(%q) = nil; want an error naming %q", tt.paths, tt.bad)
			}
			if len(tt.bad) == 1 {
				var pe *PathError
				if !errors.As(err, &pe) || pe.Path != tt.bad[0] {
					t.Fatalf("error = %v; want a PathError for %q", err, tt.bad[0])
				}
				return
			}
			var ce *CollisionError
			if !errors.As(err, &ce) {
				t.Fatalf("error = %v (%T); want *CollisionError", err, err)
			}
			if ce.Other != tt.bad[0] || ce.Path != tt.bad[1] {
				t.Fatalf("error names %q and %q; want %q and %q", ce.Other, ce.Path, tt.bad[0], tt.bad[1])
			}
			for _, p := range tt.bad {
				if !strings.Contains(err.Error(), strconv.Quote(p)) {
					t.Errorf("message %q does not name %q", err, p)
				}
			}
		})
	}
}

func TestEscapeNode(t *testing.T) {
	tests := []struct{ node, dir string }{
		{"ingress.press-feed", "ingress.press-feed"},
		{"responsibility.relevance-filter-speak1", "responsibility.relevance-filter-speak1"},
		{"claude-sessions::ingress", "claude-sessions%3A%3Aingress"},
		{"snake_case", "snake_case"},
		{"Wiki", "%57iki"},
		{"a/b", "a%2Fb"},
		{`a\b`, "a%5Cb"},
		{"100%", "100%25"},
		{"a b", "a%20b"},
		{".hidden", "%2Ehidden"},
		{".", "%2E"},
		{"..", "%2E%2E"},
		{"trailing.", "trailing%2E"},
		{"a..b", "a..b"},
		{"é", "%C3%A9"},
		{"nul", "%6Eul"},
		{"con.log", "%63on.log"},
		{"com7", "%63om7"},
		{"lpt1.x.y", "%6Cpt1.x.y"},
		{"console", "console"},
		{"com10", "com10"},
		{"\xff", "%FF"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := EscapeNode(tt.node); got != tt.dir {
			t.Errorf("EscapeNode(%q) = %q; want %q", tt.node, got, tt.dir)
		}
		if tt.node == "" {
			continue
		}
		if got, err := UnescapeNode(tt.dir); err != nil || got != tt.node {
			t.Errorf("UnescapeNode(%q) = %q, %v; want %q", tt.dir, got, err, tt.node)
		}
	}
}

func TestUnescapeNodeRejects(t *testing.T) {
	tests := []struct{ dir, why string }{
		{"", "empty"},
		{"%", "cut short"},
		{"a%4", "cut short"},
		{"%3a", "lower-case hex"},
		{"%G1", "not hex"},
		{"Wiki", "upper-case byte left plain"},
		{"a:b", "colon left plain"},
		{"%61", "plain byte escaped"},
		{".x", "leading dot left plain"},
		{"x.", "trailing dot left plain"},
		{"nul", "device name left plain"},
		{"%2E%2Ex", "middle dot escaped"},
	}
	for _, tt := range tests {
		if got, err := UnescapeNode(tt.dir); err == nil {
			t.Errorf("UnescapeNode(%q) = %q, nil; want an error (%s)", tt.dir, got, tt.why)
		}
	}
}

// TestEscapeNodeNoCaseCollisions checks the property the escape exists for:
// directory names are lower-case ASCII, so folding cannot merge two nodes.
func TestEscapeNodeNoCaseCollisions(t *testing.T) {
	nodes := []string{"a", "A", "ä", "Ä", "a\u0308", "K", "k", "\u212a", "x.y", "x::y"}
	seen := map[string]string{}
	for _, n := range nodes {
		d := EscapeNode(n)
		k := foldKey(d)
		if other, ok := seen[k]; ok {
			t.Errorf("nodes %q and %q share directory %q", n, other, d)
		}
		seen[k] = n
	}
}

func FuzzNormalizePath(f *testing.F) {
	for _, s := range []string{"a", `a\b`, "./a//b/", "a/../b", "/a", "C:x", "./C:/x", "\x00", "é/ü", ".../..", "a/./.", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		n, err := NormalizePath(p)
		if err != nil {
			var pe *PathError
			if !errors.As(err, &pe) {
				t.Fatalf("NormalizePath(%q) error %v is not a *PathError", p, err)
			}
			return
		}
		again, err := NormalizePath(n)
		if err != nil || again != n {
			t.Fatalf("NormalizePath not idempotent: %q → %q → %q, %v", p, n, again, err)
		}
		if n == "" || strings.HasPrefix(n, "/") || strings.Contains(n, `\`) || !utf8.ValidString(n) {
			t.Fatalf("NormalizePath(%q) = %q: not a normal path", p, n)
		}
		for seg := range strings.SplitSeq(n, "/") {
			if seg == "" || seg == "." || seg == ".." {
				t.Fatalf("NormalizePath(%q) = %q: segment %q left in", p, n, seg)
			}
		}
		if err := CheckCollisions([]string{n, p}); err == nil {
			t.Fatalf("CheckCollisions missed %q and its normal form %q", p, n)
		}
	})
}

func FuzzEscapeNode(f *testing.F) {
	for _, s := range []string{"claude-sessions::ingress", "Wiki", ".", "..", "nul.txt", "%", "é", "\xff\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, node string) {
		if node == "" {
			return
		}
		d := EscapeNode(node)
		for i := 0; i < len(d); i++ {
			if c := d[i]; c >= 0x80 || ('A' <= c && c <= 'Z' && (i < 1 || d[i-1] != '%') && (i < 2 || d[i-2] != '%')) {
				t.Fatalf("EscapeNode(%q) = %q: byte %q at %d is not lower-case ASCII", node, d, c, i)
			}
		}
		if strings.ContainsAny(d, `/\:`) || strings.HasPrefix(d, ".") || strings.HasSuffix(d, ".") {
			t.Fatalf("EscapeNode(%q) = %q: unsafe directory name", node, d)
		}
		back, err := UnescapeNode(d)
		if err != nil || back != node {
			t.Fatalf("UnescapeNode(EscapeNode(%q)) = %q, %v", node, back, err)
		}
		// Any directory name accepted must escape back to itself.
		if n, err := UnescapeNode(node); err == nil && EscapeNode(n) != node {
			t.Fatalf("UnescapeNode(%q) = %q, which escapes to %q", node, n, EscapeNode(n))
		}
	})
}

func TestFoldKeyASCII(t *testing.T) {
	for c := rune(0); c < utf8.RuneSelf; c++ {
		s := string(c)
		m := c
		for f := unicode.SimpleFold(c); f != c; f = unicode.SimpleFold(f) {
			m = min(m, f)
		}
		if got := foldKey(s); got != string(m) {
			t.Errorf("foldKey(%q) = %q; want %q", s, got, string(m))
		}
	}
}

func BenchmarkCheckCollisions(b *testing.B) {
	paths := make([]string, 10000)
	for i := range paths {
		paths[i] = fmt.Sprintf("facet-%d/items/item-%05d.json", i%20, i)
	}
	for b.Loop() {
		if err := CheckCollisions(paths); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNormalizePath(b *testing.B) {
	for b.Loop() {
		if _, err := NormalizePath("state/items/item-00042.json"); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzCheckCollisions compares CheckCollisions on two paths with a direct
// statement of the rule: walking both paths segment by segment while the
// segments are equal under strings.EqualFold after NFC, they collide when one
// path runs out (same file, or a file that is also a directory) or when a
// directory they share is spelled differently.
func FuzzCheckCollisions(f *testing.F) {
	f.Add("a/b", "A/c")
	f.Add("a", "a/b")
	f.Add("caf\u00e9", "cafe\u0301")
	f.Add("x/y", "x/z")
	f.Fuzz(func(t *testing.T, a, b string) {
		na, errA := NormalizePath(a)
		nb, errB := NormalizePath(b)
		if errA != nil || errB != nil {
			if CheckCollisions([]string{a, b}) == nil {
				t.Fatalf("CheckCollisions accepted an invalid path in %q, %q", a, b)
			}
			return
		}
		sa, sb := strings.Split(na, "/"), strings.Split(nb, "/")
		k := 0
		for k < len(sa) && k < len(sb) && strings.EqualFold(norm.NFC.String(sa[k]), norm.NFC.String(sb[k])) {
			k++
		}
		want := k == len(sa) || k == len(sb)
		for i := 0; i < k && !want; i++ {
			want = sa[i] != sb[i]
		}
		if got := CheckCollisions([]string{a, b}) != nil; got != want {
			t.Fatalf("CheckCollisions(%q, %q) collides = %v; want %v", a, b, got, want)
		}
	})
}

// FuzzCheckDirNames compares CheckDirNames on two entries of one directory
// with the rule stated directly: they collide when their names are equal
// under strings.EqualFold after NFC, or when both are files giving the same
// key in the truth ("a.json", "a.yaml").
func FuzzCheckDirNames(f *testing.F) {
	f.Add("a.json", "a.yaml", false, false)
	f.Add("Page.json", "page.json", false, false)
	f.Add("a", "a.json", true, false)
	f.Add("caf\u00e9", "cafe\u0301", true, true)
	f.Add("x.yml", "x", false, false)
	f.Fuzz(func(t *testing.T, a, b string, aDir, bDir bool) {
		for _, n := range []string{a, b} {
			if p, err := NormalizePath(n); err != nil || p != n || strings.Contains(n, "/") {
				return // not a name a scan would list
			}
		}
		if a == b {
			return // one directory cannot list a name twice
		}
		key := func(n string, dir bool) string {
			if dir {
				return n
			}
			k, _ := fileKey(n)
			return k
		}
		want := strings.EqualFold(norm.NFC.String(a), norm.NFC.String(b)) || key(a, aDir) == key(b, bDir)
		if got := CheckDirNames("d/", []string{a, b}, []bool{aDir, bDir}) != nil; got != want {
			t.Fatalf("CheckDirNames(%q dir=%v, %q dir=%v) collides = %v; want %v", a, aDir, b, bDir, got, want)
		}
	})
}
