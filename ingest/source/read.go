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

// MaxSize is the largest source read, in bytes (as given, before any
// conversion). A long source is rendered into pages of bounded size (a
// contents page and section pages, package render), each within the text
// limit a scan of the vault reads (4 MiB), and it is read, rendered and
// staged one source at a time, so a run of sources of this size stays
// within the memory docs/limits.md states.
const MaxSize = 16 << 20

// MaxQuoted is the largest quotation of a source read back (ReadQuoted):
// the Markdown outline prompts quote (Document.Markdown), which escaping
// makes larger than the source — a backslash before each character
// Markdown could read as markup, a link with no text written with its URL
// as its text too. Four times MaxSize holds what a source within MaxSize
// comes to (Read refuses one whose outline would not fit), and still
// bounds what a hostile prompt can make the offline engine read.
const MaxQuoted = 4 * MaxSize

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
// describe the redacted bytes. Text in UTF-16 (with a byte order mark)
// or, for every kind but a JSON transcript, in Windows-1252 is converted
// to UTF-8 first (Encoding says from what; see decodeText); the size
// limit is on the bytes as given. Bytes that are none of these, or hold
// NUL bytes, are refused as binary.
func Read(name string, data []byte, kind Kind) (*Document, error) {
	return readWith(name, data, kind, nil)
}

// readWith is Read, leaving out b's blocks of an HTML source.
func readWith(name string, data []byte, kind Kind, b *Boilerplate) (*Document, error) {
	if len(data) > MaxSize {
		return nil, tooLarge(name, int64(len(data)), true)
	}
	d, err := read(name, data, kind, b, true)
	if err != nil {
		return nil, err
	}
	if n := len(d.Markdown()); n > MaxQuoted {
		return nil, fmt.Errorf("%s: its outline, as prompts quote it, comes to %d bytes, more than the %d MiB a quotation may have (wide tables of short rows grow most): split it into smaller files and ingest those", name, n, MaxQuoted>>20)
	}
	return d, nil
}

// ReadQuoted reads a source as a prompt quotes it: the Markdown outline of
// Document.Markdown, up to MaxQuoted bytes. It reads back the document
// that outline was made of. The outline is of a document whose secrets
// were redacted when it was read, so it is not redacted again (the pages
// prose renders hold the same text): reading a 16 MiB quotation costs its
// parse alone. The result holds the parsed text, not data (its Data is
// nil; its ID is data's): a reader that keeps it for the calls quoting
// the source does not keep a second copy of the quotation.
func ReadQuoted(name string, data []byte) (*Document, error) {
	if len(data) > MaxQuoted {
		return nil, fmt.Errorf("%s: the quoted source is %d bytes, more than the %d MiB the outline of a source within the %d MiB limit comes to", name, len(data), MaxQuoted>>20, MaxSize>>20)
	}
	d, err := read(name, data, Markdown, nil, false)
	if d != nil {
		d.Data = nil
	}
	return d, err
}

func read(name string, data []byte, kind Kind, b *Boilerplate, redact bool) (*Document, error) {
	asked := kind
	named := kind
	if named == "" {
		named = KindOf(name)
	}
	// A JSON transcript is UTF-8 (or UTF-16 with a mark) by its format;
	// any other kind may be in Windows-1252.
	data, encoding, err := decodeText(name, data, named != Conversation)
	if err != nil {
		return nil, err
	}
	if kind == "" {
		if kind = KindOf(name); kind == "" {
			kind = Sniff(data)
		}
	}
	d := &Document{Name: name, Kind: kind, Data: data, Encoding: encoding, asked: asked}
	var redacted string // the text as a string, for the readers of one
	if redact {
		redacted, d.Redactions = receipt.RedactText(string(data))
		if d.Redactions > 0 {
			d.Data = []byte(redacted)
		}
	} else if kind == Text {
		redacted = string(data)
	}
	d.ID = canon.BLAKE3.Token(d.Data)
	d.Size = len(d.Data)
	switch kind {
	case Markdown:
		readMarkdown(d, d.Data)
	case Text:
		readText(d, redacted)
	case HTML:
		if err := readHTML(d, d.Data, b); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	case Conversation:
		if err := readConversation(d, d.Data); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	default:
		return nil, fmt.Errorf("%s: unknown source kind %q", name, kind)
	}
	boundBlocks(d)
	if d.Title == "" && d.empty() {
		return nil, fmt.Errorf("%s: %w", name, ErrEmpty)
	}
	if d.Title == "" {
		d.Title = TitleFromName(name)
	}
	return d, nil
}

// Stored returns the bytes the vault keeps of the source name read as
// data, of kind ("" as Read takes it): what Read gives as Data (converted
// to UTF-8, secrets redacted), without parsing it. A document read again
// (Document.Reload) is checked against its ID by the caller.
func Stored(name string, data []byte, kind Kind) ([]byte, error) {
	if len(data) > MaxSize {
		return nil, tooLarge(name, int64(len(data)), true)
	}
	named := kind
	if named == "" {
		named = KindOf(name)
	}
	data, _, err := decodeText(name, data, named != Conversation)
	if err != nil {
		return nil, err
	}
	if redacted, n := receipt.RedactText(string(data)); n > 0 {
		return []byte(redacted), nil
	}
	return data, nil
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

// nameSpaces reads a file name's dashes and underscores as spaces (one
// replacer for all: building one was a twentieth of reading a small
// document).
var nameSpaces = strings.NewReplacer("-", " ", "_", " ")

// TitleFromName makes a title of a file name: extension dropped, dashes
// and underscores as spaces, the first letter in capitals.
func TitleFromName(name string) string {
	base := path.Base(filepath.ToSlash(name))
	base = strings.TrimSuffix(base, path.Ext(base))
	base = clean(nameSpaces.Replace(base))
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
	// Collection is the directory argument a found file came from: the
	// files of one are compared for their boilerplate (FindBoilerplate).
	Collection string
	// Earlier is the name an earlier prose gave a found file (the
	// directory's own base name and the path below it) when it differs
	// from Name: a vault that holds the source under it keeps it there.
	Earlier string
	// Path is the file the input was read from ("" for standard input).
	Path string
}

// Skipped is a file a directory walk left out, and why.
type Skipped struct {
	Path   string
	Reason string
	// Unsupported is set for a file of a directory whose type is not a
	// source kind (an image, a stylesheet): expected in a manual's
	// folder, so a caller may count these rather than name each.
	Unsupported bool
	// RedirectTo is, for a page that only redirects (Redirect), the
	// source name its target has in the collection ("" when it leads
	// elsewhere): a link to the page is a link to its target.
	RedirectTo string
	// Redirect is set for such a page.
	Redirect bool
}

// Collect gathers the sources named by args: files, directories (walked
// recursively, dot-directories and dot-files skipped, files of no
// supported kind or that cannot be read reported in skipped), and "-" for
// stdin, named stdinName. A file named explicitly that cannot be read is
// an error. Inputs come back in argument order, a directory's files sorted.
//
// Each input's name is unique among them. A file named on the command
// line is named by its base name, a file found in a directory by the
// directory's collection name (CollectionNames) and its path below it;
// when two inputs would
// share a name, each takes as many more trailing components of its path
// as makes them distinct (a/README.md and b/README.md). A file given twice
// (named twice, or named and found in a directory named too) is read once,
// under the name it was first given.
func Collect(args []string, stdin io.Reader, stdinName string) (inputs []Input, skipped []Skipped, err error) {
	stdinUsed := false
	var named []namedInput
	seen := map[string]bool{}
	add := func(in Input, p string) {
		if p != "" {
			key := fileKey(p)
			if seen[key] {
				return
			}
			seen[key] = true
		}
		named = append(named, namedInput{in: in, comps: pathComponents(p, in.Name), k: len(strings.Split(in.Name, "/"))})
	}
	collections := CollectionNames(args)
	for _, arg := range args {
		if arg == "-" {
			if stdinUsed {
				return nil, nil, errors.New(`"-" (standard input) is named twice`)
			}
			stdinUsed = true
			name := stdinName
			if name == "" {
				name = "stdin"
			}
			data, err := ReadLimited(stdin, "standard input")
			if err != nil {
				if errors.Is(err, ErrTooLarge) {
					return nil, nil, err
				}
				return nil, nil, fmt.Errorf("read standard input: %w", err)
			}
			add(Input{Name: name, Data: data, Stdin: true}, "")
			continue
		}
		fi, err := os.Stat(arg)
		if err != nil {
			return nil, nil, fmt.Errorf("source %s: %w", arg, unwrapPathError(err))
		}
		if !fi.IsDir() {
			data, err := ReadFile(arg, arg)
			if errors.Is(err, ErrNotRegular) || errors.Is(err, ErrTooLarge) {
				return nil, nil, fmt.Errorf("source %w", err)
			}
			if err != nil {
				return nil, nil, fmt.Errorf("source %s: %w", arg, unwrapPathError(err))
			}
			add(Input{Name: filepath.ToSlash(filepath.Base(arg)), Data: data, Path: arg}, arg)
			continue
		}
		found, paths, sk := walk(arg, collections[arg])
		for i, in := range found {
			add(in, paths[i])
		}
		skipped = append(skipped, sk...)
	}
	if err := distinctNames(named); err != nil {
		return nil, nil, err
	}
	for _, n := range named {
		inputs = append(inputs, n.in)
	}
	return inputs, skipped, nil
}

// namedInput is an input while Collect names it: the components of its
// path (absolute, from the root) and how many of the last it is named by.
type namedInput struct {
	in    Input
	comps []string
	k     int
}

// pathComponents are the components of the absolute path of p, or of
// name when p is "" (standard input).
func pathComponents(p, name string) []string {
	if p == "" {
		return strings.Split(name, "/")
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		abs = filepath.Clean(p)
	}
	abs = filepath.ToSlash(strings.TrimPrefix(abs, filepath.VolumeName(abs)))
	var comps []string
	for _, c := range strings.Split(abs, "/") {
		if c != "" {
			comps = append(comps, c)
		}
	}
	return comps
}

// fileKey identifies the file at p: its absolute path with symbolic
// links resolved.
func fileKey(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}

// distinctNames lengthens the names two inputs share, a component at a
// time, until every name is distinct.
func distinctNames(named []namedInput) error {
	for {
		byName := map[string][]int{}
		for i, n := range named {
			byName[n.in.Name] = append(byName[n.in.Name], i)
		}
		longer := false
		var stuck string
		for name, idx := range byName {
			if len(idx) < 2 {
				continue
			}
			grew := false
			for _, i := range idx {
				n := &named[i]
				if n.k < len(n.comps) {
					n.k++
					n.in.Name = strings.Join(n.comps[len(n.comps)-n.k:], "/")
					grew = true
				}
			}
			if grew {
				longer = true
			} else {
				stuck = name
			}
		}
		if !longer {
			if stuck != "" {
				return fmt.Errorf("two sources would both be named %q: name standard input another way (--name)", stuck)
			}
			return nil
		}
	}
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

// walk finds the sources under dir, and the path of each.
func walk(dir, base string) ([]Input, []string, []Skipped) {
	var inputs []Input
	var paths []string
	var skipped []Skipped
	if base == "" {
		base = collectionBase(pathComponents(dir, dir))
	}
	// How prose named a directory's files before collections had names
	// of their own: the directory's base name.
	earlierBase := filepath.Base(filepath.Clean(dir))
	if earlierBase == "." || earlierBase == string(filepath.Separator) {
		if abs, err := filepath.Abs(dir); err == nil {
			earlierBase = filepath.Base(abs)
		}
	}
	vaultRoots := map[string]bool{}
	_ = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(dir, p)
		shown := filepath.ToSlash(filepath.Join(base, rel))
		if err != nil {
			skipped = append(skipped, Skipped{Path: shown, Reason: unwrapPathError(err).Error()})
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
				skipped = append(skipped, Skipped{Path: shown, Reason: "the vault's own " + e.Name() + "/ (its world-models, stored sources or manifests), never a source; name a file there to ingest it anyway"})
				return fs.SkipDir
			}
			return nil
		}
		if !e.Type().IsRegular() {
			reason := fileType(e.Type()) + ", not a regular file (a pipe, device or socket may never end)"
			if e.Type()&fs.ModeSymlink != 0 {
				reason = "a symbolic link, not a regular file (name its target to ingest it)"
			}
			skipped = append(skipped, Skipped{Path: shown, Reason: reason})
			return nil
		}
		if KindOf(p) == "" {
			skipped = append(skipped, Skipped{Path: shown, Reason: "not a supported source type (.md, .txt, .html, .json, .jsonl)", Unsupported: true})
			return nil
		}
		data, err := ReadFile(p, shown)
		if err != nil {
			skipped = append(skipped, Skipped{Path: shown, Reason: strings.TrimPrefix(unwrapPathError(err).Error(), shown+": ")})
			return nil
		}
		if KindOf(p) == HTML {
			if target, ok := Redirect(data); ok {
				sk := Skipped{Path: shown, Reason: "a page that only redirects (to " + target + "), no text of its own", Redirect: true}
				if name, _, ok := RelativeTarget(shown, target); ok {
					sk.RedirectTo = name
				}
				skipped = append(skipped, sk)
				return nil
			}
		}
		in := Input{Name: shown, Data: data, Found: true, Collection: filepath.Clean(dir), Path: p}
		if earlier := filepath.ToSlash(filepath.Join(earlierBase, rel)); earlier != shown {
			in.Earlier = earlier
		}
		inputs = append(inputs, in)
		paths = append(paths, p)
		return nil
	})
	order := make([]int, len(inputs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return inputs[order[i]].Name < inputs[order[j]].Name })
	sorted := make([]Input, len(inputs))
	sortedPaths := make([]string, len(inputs))
	for i, o := range order {
		sorted[i], sortedPaths[i] = inputs[o], paths[o]
	}
	return sorted, sortedPaths, skipped
}

// genericDirs are directory names that say how a collection was built or
// for which language, not what it is: "html" in /usr/share/doc/libffi-dev/html,
// "en" in …/aptitude/html/en. A collection is named for the nearest
// directory above them instead.
var genericDirs = map[string]bool{
	"html": true, "htm": true, "xhtml": true, "en": true, "en_us": true, "en-us": true,
	"out": true, "output": true, "build": true, "_build": true, "site": true, "public": true, "www": true, "web": true,
}

// collectionStart is the index in comps (the components of a directory's
// absolute path) of the one its collection is named for: the last, or
// the nearest above it that is not generic.
func collectionStart(comps []string) int {
	k := len(comps) - 1
	for k > 0 && genericDirs[strings.ToLower(comps[k])] {
		k--
	}
	return k
}

// collectionBase is the name of the collection of the directory whose
// absolute path has components comps ("libffi-dev" for
// /usr/share/doc/libffi-dev/html).
func collectionBase(comps []string) string {
	if len(comps) == 0 {
		return "root"
	}
	return comps[collectionStart(comps)]
}

// CollectionNames names the collection of each directory among args (by
// the argument as given): its name, or the nearest directory's above it
// whose name is not generic (collectionBase). Two directories that would
// share a name are told apart by the directories above them, a component
// at a time (a/docs and b/docs), so two collections ingested together
// never share a folder.
func CollectionNames(args []string) map[string]string {
	type dirName struct {
		arg, key string
		comps    []string
		k, end   int // the name is comps[k : end+1]
	}
	var dirs []*dirName
	byKey := map[string]bool{}
	for _, arg := range args {
		if arg == "-" {
			continue
		}
		if fi, err := os.Stat(arg); err != nil || !fi.IsDir() {
			continue
		}
		key := fileKey(arg)
		if byKey[key] {
			continue // one directory named twice is read once
		}
		byKey[key] = true
		comps := pathComponents(arg, arg)
		if len(comps) == 0 {
			comps = []string{"root"}
		}
		end := collectionStart(comps)
		dirs = append(dirs, &dirName{arg: arg, key: key, comps: comps, k: end, end: end})
	}
	name := func(d *dirName) string { return strings.Join(d.comps[d.k:d.end+1], "/") }
	for {
		byName := map[string][]*dirName{}
		for _, d := range dirs {
			byName[name(d)] = append(byName[name(d)], d)
		}
		grew := false
		for _, ds := range byName {
			if len(ds) < 2 {
				continue
			}
			for _, d := range ds {
				if d.k > 0 {
					d.k--
					grew = true
				}
			}
		}
		if !grew {
			break
		}
	}
	out := map[string]string{}
	for _, d := range dirs {
		out[d.arg] = name(d)
	}
	return out
}
