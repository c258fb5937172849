package forme

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/prose-store/prose/canon"
)

// Options control loading and compiling. The zero value works: BLAKE3
// fingerprints, HOME and PATH from the process environment.
type Options struct {
	// Root is the directory manifest source paths are relative to. Empty:
	// the directory given (or the one holding the file given), or the
	// deepest directory common to several paths.
	Root string

	// ProjectDir holds the project's skills/ directory and .mcp.json.
	// Empty: Root, or Root's parent when Root is a vault's src/ directory.
	ProjectDir string

	// Env looks up HOME (skill roots, ~/.claude.json) and PATH (cli tools).
	// Nil: os.Getenv. Tests pass a map so the real environment never leaks in.
	Env func(key string) string

	// SkillRoots, when non-nil, replaces the default skill search roots
	// (<project>/skills, ~/.claude/skills, ~/.codex/skills, ~/.agents/skills).
	SkillRoots []string

	// MCPServers, when non-nil, is the host MCP registry. Nil: the
	// "mcpServers" keys of <project>/.mcp.json and ~/.claude.json.
	MCPServers []string

	// Hash is the vault's hash algorithm, used for contract fingerprints.
	// Empty (or not one canon supports): BLAKE3.
	Hash canon.Algorithm

	// Workers bounds parallel parsing. Zero: GOMAXPROCS.
	Workers int
}

func (o Options) env(key string) string {
	if o.Env != nil {
		return o.Env(key)
	}
	return os.Getenv(key)
}

func (o Options) hasher() canon.Algorithm {
	if a, err := canon.ParseAlgorithm(string(o.Hash)); err == nil {
		return a
	}
	return canon.BLAKE3
}

// Source is one contract file's bytes. Path is how diagnostics name it; Rel
// is its manifest path (root-relative, forward slashes; Path when empty). A
// non-nil Err records a file that could not be read.
type Source struct {
	Path string
	Rel  string
	Data []byte
	Err  error
}

// Project is a parsed contract set, ready to compile.
type Project struct {
	Files []*File
	Root  string
	opts  Options

	once     sync.Once
	manifest *Manifest
	diags    []Diagnostic
}

// SourceExt is the Contract Markdown file extension.
const SourceExt = ".prose.md"

// LoadProject finds the *.prose.md files under paths (files are taken as
// given; directories are walked, skipping hidden directories and
// node_modules), reads and parses them. It fails only when a path does not
// exist or cannot be walked; problems inside files are diagnostics.
func LoadProject(paths []string, opts Options) (*Project, error) {
	if len(paths) == 0 {
		return nil, errors.New("no path to check: give a contract file or a directory of *.prose.md files")
	}
	type found struct{ display, abs string }
	var files []found
	seen := map[string]bool{}
	var absRoots []string
	for _, arg := range paths {
		abs, err := filepath.Abs(arg)
		if err != nil {
			return nil, fmt.Errorf("resolve %s: %w", arg, err)
		}
		st, err := os.Stat(arg)
		if err != nil {
			return nil, fmt.Errorf("read contracts: %w", err)
		}
		if !st.IsDir() {
			absRoots = append(absRoots, filepath.Dir(abs))
			if !seen[abs] {
				seen[abs] = true
				files = append(files, found{filepath.ToSlash(arg), abs})
			}
			continue
		}
		absRoots = append(absRoots, abs)
		err = filepath.WalkDir(arg, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			name := d.Name()
			if d.IsDir() {
				if p != arg && (strings.HasPrefix(name, ".") || name == "node_modules") {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(name, SourceExt) || !d.Type().IsRegular() {
				return nil
			}
			a, err := filepath.Abs(p)
			if err != nil {
				return err
			}
			if !seen[a] {
				seen[a] = true
				files = append(files, found{filepath.ToSlash(p), a})
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read contracts under %s: %w", arg, err)
		}
	}
	root := opts.Root
	if root == "" {
		root = commonDir(absRoots)
	} else if r, err := filepath.Abs(root); err == nil {
		root = r
	}
	opts.Root = root
	srcs := make([]Source, len(files))
	for i, f := range files {
		rel := f.display
		if r, err := filepath.Rel(root, f.abs); err == nil && !strings.HasPrefix(r, "..") {
			rel = filepath.ToSlash(r)
		}
		data, err := os.ReadFile(f.abs)
		srcs[i] = Source{Path: f.display, Rel: rel, Data: data, Err: err}
	}
	return ParseSources(srcs, opts), nil
}

// commonDir is the deepest directory containing every path.
func commonDir(dirs []string) string {
	if len(dirs) == 0 {
		return ""
	}
	common := dirs[0]
	for _, d := range dirs[1:] {
		for !within(d, common) {
			parent := filepath.Dir(common)
			if parent == common {
				break
			}
			common = parent
		}
	}
	return common
}

func within(p, dir string) bool {
	r, err := filepath.Rel(dir, p)
	return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator))
}

// ParseSources parses in-memory sources (in parallel; the result does not
// depend on scheduling) into a project. Sources are ordered by Path. With no
// Root, there is no project directory: only HOME's skill roots and the
// registry in ~/.claude.json are consulted.
func ParseSources(srcs []Source, opts Options) *Project {
	if opts.ProjectDir == "" && opts.Root != "" {
		opts.ProjectDir = opts.Root
		if filepath.Base(opts.Root) == "src" {
			opts.ProjectDir = filepath.Dir(opts.Root)
		}
	}
	srcs = append([]Source(nil), srcs...)
	sort.SliceStable(srcs, func(i, j int) bool { return srcs[i].Path < srcs[j].Path })
	files := make([]*File, len(srcs))
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				s := srcs[i]
				rel := s.Rel
				if rel == "" {
					rel = s.Path
				}
				if s.Err != nil {
					f := &File{Path: s.Path, Rel: rel, Frontmatter: map[string]string{}, fmKeys: map[string]Pos{}}
					f.Diagnostics = append(f.Diagnostics, Diagnostic{Code: CodeSourceUnreadable, Severity: SeverityError,
						Message: fmt.Sprintf("cannot read the file (%v): check that it exists and is readable", s.Err), File: s.Path})
					files[i] = f
					continue
				}
				f := ParseFile(s.Path, s.Data)
				f.Rel = rel
				files[i] = f
			}
		}()
	}
	for i := range srcs {
		next <- i
	}
	close(next)
	wg.Wait()
	return &Project{Files: files, Root: opts.Root, opts: opts}
}

// Contracts lists every contract in source order.
func (p *Project) Contracts() []*Contract {
	var out []*Contract
	for _, f := range p.Files {
		out = append(out, f.Contracts...)
	}
	return out
}

// Diagnostics returns every diagnostic for the project (parsing, checks and
// wiring), sorted.
func (p *Project) Diagnostics() []Diagnostic {
	_, d := Compile(p)
	return d
}

// parallel runs fn(0..n-1) on GOMAXPROCS workers. fn must only write to
// its own index's results.
func parallel(n int, fn func(i int)) {
	workers := runtime.GOMAXPROCS(0)
	if n < 64 || workers < 2 {
		for i := 0; i < n; i++ {
			fn(i)
		}
		return
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	next := 0
	const chunk = 32
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				start := next
				next += chunk
				mu.Unlock()
				if start >= n {
					return
				}
				for i := start; i < min(start+chunk, n); i++ {
					fn(i)
				}
			}
		}()
	}
	wg.Wait()
}
