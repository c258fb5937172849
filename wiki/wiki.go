package wiki

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/prose-store/prose/published"
	"github.com/prose-store/prose/vault"
)

// Node is the name of the wiki's built-in node: its pages live under
// published/wiki/ in the vault.
const Node = "wiki"

// IndexName is the file name of a folder's index page.
const IndexName = "README.html"

// Dir is the wiki's directory relative to the vault root.
const Dir = "published/wiki"

// Wiki is the wiki of one vault.
type Wiki struct {
	v         *vault.Vault
	templates *templateSet
	// Now gives the date written to created and updated (UTC, YYYY-MM-DD).
	Now func() time.Time
}

// Open opens the wiki of vault v, loading the built-in templates and the
// vault's own under TemplateDir.
func Open(v *vault.Vault) (*Wiki, error) {
	ts, err := openTemplates(v.Root())
	if err != nil {
		return nil, err
	}
	return &Wiki{v: v, templates: ts, Now: time.Now}, nil
}

// Vault returns the vault the wiki lives in.
func (w *Wiki) Vault() *vault.Vault { return w.v }

// Root returns the absolute directory of the wiki's pages.
func (w *Wiki) Root() string { return filepath.Join(w.v.Root(), filepath.FromSlash(Dir)) }

func (w *Wiki) today() string { return w.Now().UTC().Format("2006-01-02") }

// Templates returns every template, sorted by name.
func (w *Wiki) Templates() []*Template {
	var out []*Template
	for _, n := range w.templates.names() {
		if t, _, err := w.templates.get(n); err == nil {
			out = append(out, t)
		}
	}
	return out
}

// Template returns the template name.
func (w *Wiki) Template(name string) (*Template, error) {
	if err := published.CheckIdent(name); err != nil {
		return nil, fmt.Errorf("template %w", err)
	}
	t, ok, err := w.templates.get(name)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("unknown template %q; `prose wiki templates` lists them (%s)", name, strings.Join(w.templates.names(), ", "))
	}
	return t, nil
}

// Error kinds callers (the CLI) map to exit codes and hints.
var (
	ErrNotFound  = errors.New("no such page")
	ErrAmbiguous = errors.New("the page name is ambiguous")
	ErrExists    = errors.New("the page already exists")
	ErrHandEdits = errors.New("pages were edited by hand")
	ErrUnsafe    = errors.New("unsafe path")
)

// cleanPagePath returns the wiki path of a page named p ("ml/attention",
// "ml/attention.html" or "published/wiki/ml/attention.html"): normalized,
// with the .html suffix, checked against the world-model path rules.
func cleanPagePath(p string) (string, error) {
	if strings.HasPrefix(p, "/") || filepath.IsAbs(p) {
		return "", fmt.Errorf("%w: %s", ErrUnsafe, &published.PathError{Path: p, Rule: published.RuleAbsolute})
	}
	n, err := published.NormalizePath(p)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrUnsafe, err)
	}
	n = strings.TrimPrefix(n, Dir+"/")
	if !strings.HasSuffix(n, ".html") {
		n += ".html"
	}
	for _, seg := range strings.Split(n, "/") {
		if strings.HasPrefix(seg, ".") {
			return "", fmt.Errorf("%w: path %q: names starting with '.' are not wiki pages or folders", ErrUnsafe, p)
		}
	}
	if path.Base(n) == ".html" {
		return "", fmt.Errorf("%w: path %q: a page needs a name", ErrUnsafe, p)
	}
	return n, nil
}

// checkInside refuses a wiki path whose directories, in the working tree,
// pass through a symbolic link (which could lead outside the vault).
func (w *Wiki) checkInside(rel string) error { return w.checkInsideSeen(rel, nil) }

// lstat is os.Lstat; a test counts the calls through it.
var lstat = os.Lstat

// insideSeen remembers, for one Tx's tool calls or one pass over a
// commit's paths, the directories checkInside found to be real
// directories (true) or missing (false), so each is looked at once rather
// than once per page below it (an ingest's 2,500 pages made 22,755 lstat
// calls of published/ alone). It only spares an early refusal's look: the
// commit checks every path it writes again with a fresh one, and the
// vault looks at each directory on the way, without following links,
// before it writes.
type insideSeen map[string]bool

// checkInsideSeen is checkInside, skipping the directories seen records
// (nil records nothing).
func (w *Wiki) checkInsideSeen(rel string, seen insideSeen) error {
	cur := w.v.Root()
	segs := append([]string{"published", "wiki"}, strings.Split(rel, "/")...)
	for i, s := range segs {
		cur = filepath.Join(cur, s)
		dir := i < len(segs)-1
		if dir && seen != nil {
			if real, ok := seen[cur]; ok {
				if !real {
					return nil // what does not exist yet cannot lead outside
				}
				continue
			}
		}
		fi, err := lstat(cur)
		if err != nil {
			if dir && seen != nil && errors.Is(err, fs.ErrNotExist) {
				seen[cur] = false
			}
			return nil // what does not exist yet cannot lead outside
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("%w: %s is a symbolic link; prose writes only real files and folders inside published/wiki/ (replace the link with a folder)", ErrUnsafe, filepath.ToSlash(strings.TrimPrefix(cur, w.v.Root()+string(filepath.Separator))))
		}
		if dir && seen != nil && fi.IsDir() {
			seen[cur] = true
		}
	}
	return nil
}

// state is the committed wiki a reader or a Tx starts from.
type state struct {
	w      *Wiki
	base   plumbing.Hash // branch commit
	tree   plumbing.Hash // node tree at base
	files  map[string]plumbing.Hash
	parsed map[string]*Page
}

func (w *Wiki) head() (*state, error) {
	base, tree, err := w.v.NodeHead(Node)
	if err != nil {
		return nil, err
	}
	return &state{w: w, base: base, tree: tree, parsed: map[string]*Page{}}, nil
}

// list returns every file of the committed wiki (loaded once).
func (s *state) list() (map[string]plumbing.Hash, error) {
	if s.files == nil {
		f, err := s.w.v.NodeFiles(s.tree)
		if err != nil {
			return nil, err
		}
		s.files = f
	}
	return s.files, nil
}

// has reports whether the branch holds a file at rel, without listing
// every file when the list is not read yet.
func (s *state) has(rel string) (bool, error) {
	if s.files != nil {
		_, ok := s.files[rel]
		return ok, nil
	}
	return s.w.v.NodeHas(s.tree, rel)
}

// raw reads a committed file.
func (s *state) raw(rel string) ([]byte, bool, error) {
	if s.files != nil {
		h, ok := s.files[rel]
		if !ok {
			return nil, false, nil
		}
		d, err := s.w.v.Blob(h)
		return d, err == nil, err
	}
	return s.w.v.NodeFileOf(Node, s.tree, rel)
}

// Head returns the branch commit the wiki's committed state is read from.
func (w *Wiki) Head() (string, error) {
	s, err := w.head()
	if err != nil {
		return "", err
	}
	return s.base.String(), nil
}

// dirFS is os.DirFS: the wiki root as a file system for lint.
func dirFS(dir string) fs.FS { return os.DirFS(dir) }
