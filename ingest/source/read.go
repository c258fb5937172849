package source

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/prose-store/prose/canon"
	"github.com/prose-store/prose/receipt"
)

// MaxSize is the largest source read, in bytes. A source becomes pages
// about twice its size, which must stay within the text limit a scan of the
// vault reads (4 MiB); and the analysis of one long paragraph holds many
// times its size in memory (a 1 MiB paragraph: about 360 MB at peak).
const MaxSize = 1 << 20

// kinds maps file extensions to the kind they are read as.
var kinds = map[string]Kind{
	".md": Markdown, ".markdown": Markdown, ".mdown": Markdown, ".mkd": Markdown,
	".txt": Text, ".text": Text,
	".html": HTML, ".htm": HTML, ".xhtml": HTML,
	".json": Conversation, ".jsonl": Conversation, ".ndjson": Conversation,
}

// KindOf returns the kind a file name's extension says, or "" when the
// extension names no supported kind.
func KindOf(name string) Kind {
	return kinds[strings.ToLower(path.Ext(name))]
}

// Sniff guesses the kind of unnamed bytes (standard input): a transcript
// when it parses as one, HTML when it opens with a tag, Markdown when it
// has a heading, fence or list, plain text otherwise.
func Sniff(data []byte) Kind {
	t := bytes.TrimSpace(data)
	if len(t) > 0 && (t[0] == '[' || t[0] == '{') {
		if _, _, err := parseConversation(t); err == nil {
			return Conversation
		}
	}
	lower := bytes.ToLower(t[:min(len(t), 512)])
	if bytes.HasPrefix(lower, []byte("<!doctype html")) || bytes.HasPrefix(lower, []byte("<html")) ||
		bytes.Contains(lower, []byte("<body")) || bytes.Contains(lower, []byte("<p>")) {
		return HTML
	}
	for _, line := range strings.Split(string(t), "\n") {
		l := strings.TrimSpace(line)
		if strings.HasPrefix(l, "# ") || strings.HasPrefix(l, "## ") || strings.HasPrefix(l, "```") {
			return Markdown
		}
	}
	return Text
}

// Read reads one source. kind "" means: by name's extension, else Sniff.
// Secrets are redacted first; the result's Data, ID and Redactions
// describe the redacted bytes. Text that is not UTF-8 or holds NUL bytes
// is refused as binary.
func Read(name string, data []byte, kind Kind) (*Document, error) {
	if len(data) > MaxSize {
		return nil, fmt.Errorf("%s: %d bytes is larger than the %d MiB a source may have: split it into smaller files (by chapter or section) and ingest those", name, len(data), MaxSize>>20)
	}
	if bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data) {
		return nil, fmt.Errorf("%s: not text (binary or not UTF-8)", name)
	}
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	if kind == "" {
		if kind = KindOf(name); kind == "" {
			kind = Sniff(data)
		}
	}
	redacted, n := receipt.RedactText(string(data))
	d := &Document{Name: name, Kind: kind, Data: []byte(redacted), Redactions: n}
	d.ID = canon.BLAKE3.Token(d.Data)
	switch kind {
	case Markdown:
		readMarkdown(d, d.Data)
	case Text:
		readText(d, redacted)
	case HTML:
		if err := readHTML(d, d.Data); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	case Conversation:
		if err := readConversation(d, d.Data); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	default:
		return nil, fmt.Errorf("%s: unknown source kind %q", name, kind)
	}
	if d.Title == "" && d.empty() {
		return nil, fmt.Errorf("%s: %w", name, ErrEmpty)
	}
	if d.Title == "" {
		d.Title = TitleFromName(name)
	}
	return d, nil
}

// ErrEmpty is the error of a source with no text: no title, heading or
// block (an empty file, or only white space or markup).
var ErrEmpty = errors.New("the source is empty (no text to make a page of): write something in it, or leave it out")

// empty reports a document with no heading and no block.
func (d *Document) empty() bool {
	for _, s := range d.Sections {
		if strings.TrimSpace(s.Heading) != "" || len(s.Blocks) > 0 {
			return false
		}
	}
	return true
}

// TitleFromName makes a title of a file name: extension dropped, dashes
// and underscores as spaces, the first letter in capitals.
func TitleFromName(name string) string {
	base := path.Base(filepath.ToSlash(name))
	base = strings.TrimSuffix(base, path.Ext(base))
	base = clean(strings.NewReplacer("-", " ", "_", " ").Replace(base))
	if base == "" || base == "." || base == "/" {
		return "Untitled"
	}
	r, size := utf8.DecodeRuneInString(base)
	return string(unicode.ToUpper(r)) + base[size:]
}

// Input is a source found on the command line: its name and bytes.
type Input struct {
	Name  string
	Data  []byte
	Kind  Kind // "" unless the source was standard input read with a kind
	Stdin bool // read from standard input ("-")
	Found bool // found in a directory (not named on the command line)
}

// Skipped is a file a directory walk left out, and why.
type Skipped struct {
	Path   string
	Reason string
}

// Collect gathers the sources named by args: files, directories (walked
// recursively, dot-directories and dot-files skipped, files of no
// supported kind or that cannot be read reported in skipped), and "-" for
// stdin, named stdinName. A file named explicitly that cannot be read is
// an error. Inputs come back in argument order, a directory's files sorted.
func Collect(args []string, stdin io.Reader, stdinName string) (inputs []Input, skipped []Skipped, err error) {
	stdinUsed := false
	for _, arg := range args {
		if arg == "-" {
			if stdinUsed {
				return nil, nil, errors.New(`"-" (standard input) is named twice`)
			}
			stdinUsed = true
			data, err := io.ReadAll(io.LimitReader(stdin, MaxSize+1))
			if err != nil {
				return nil, nil, fmt.Errorf("read standard input: %w", err)
			}
			name := stdinName
			if name == "" {
				name = "stdin"
			}
			inputs = append(inputs, Input{Name: name, Data: data, Stdin: true})
			continue
		}
		fi, err := os.Stat(arg)
		if err != nil {
			return nil, nil, fmt.Errorf("source %s: %w", arg, unwrapPathError(err))
		}
		if !fi.IsDir() {
			data, err := os.ReadFile(arg)
			if err != nil {
				return nil, nil, fmt.Errorf("source %s: %w", arg, unwrapPathError(err))
			}
			inputs = append(inputs, Input{Name: filepath.ToSlash(filepath.Base(arg)), Data: data})
			continue
		}
		found, sk := walk(arg)
		inputs = append(inputs, found...)
		skipped = append(skipped, sk...)
	}
	return inputs, skipped, nil
}

// vaultManaged are the directories of a vault's root that prose writes:
// walking a vault (`prose ingest .`) must not read its own pages back.
var vaultManaged = map[string]bool{"published": true, "sources": true, "dist": true}

// managedByVault reports whether the directory p, named name, is one a
// vault manages: its parent holds prose.yaml and .git. roots caches the
// answer per parent.
func managedByVault(p, name string, roots map[string]bool) bool {
	if !vaultManaged[name] {
		return false
	}
	parent := filepath.Dir(p)
	is, ok := roots[parent]
	if !ok {
		_, err1 := os.Stat(filepath.Join(parent, "prose.yaml"))
		_, err2 := os.Stat(filepath.Join(parent, ".git"))
		is = err1 == nil && err2 == nil
		roots[parent] = is
	}
	return is
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// walk finds the sources under dir.
func walk(dir string) ([]Input, []Skipped) {
	var inputs []Input
	var skipped []Skipped
	base := filepath.Base(filepath.Clean(dir))
	if base == "." || base == string(filepath.Separator) {
		if abs, err := filepath.Abs(dir); err == nil {
			base = filepath.Base(abs)
		}
	}
	vaultRoots := map[string]bool{}
	_ = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(dir, p)
		shown := filepath.ToSlash(filepath.Join(base, rel))
		if err != nil {
			skipped = append(skipped, Skipped{shown, unwrapPathError(err).Error()})
			if e != nil && e.IsDir() && p != dir {
				return fs.SkipDir
			}
			return nil
		}
		if p != dir && strings.HasPrefix(e.Name(), ".") {
			if e.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if e.IsDir() {
			if managedByVault(p, e.Name(), vaultRoots) {
				skipped = append(skipped, Skipped{shown, "the vault's own " + e.Name() + "/ (its world-models, stored sources or manifests), never a source; name a file there to ingest it anyway"})
				return fs.SkipDir
			}
			return nil
		}
		if !e.Type().IsRegular() {
			skipped = append(skipped, Skipped{shown, "not a regular file"})
			return nil
		}
		if KindOf(p) == "" {
			skipped = append(skipped, Skipped{shown, "not a supported source type (.md, .txt, .html, .json, .jsonl)"})
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			skipped = append(skipped, Skipped{shown, unwrapPathError(err).Error()})
			return nil
		}
		inputs = append(inputs, Input{Name: shown, Data: data, Found: true})
		return nil
	})
	sort.SliceStable(inputs, func(i, j int) bool { return inputs[i].Name < inputs[j].Name })
	return inputs, skipped
}
