package published

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/zeebo/blake3"
	"gopkg.in/yaml.v3"

	"github.com/prose-store/prose/canon"
)

// This file maps a node directory to structured truth (PRODUCT.md
// §Structured truth):
//
//   - a directory is an object keyed by the names of its entries;
//   - a file whose name ends in ".json" contributes its value (canon.Decode)
//     under its name without the extension;
//   - a file whose name ends in ".yaml" or ".yml" contributes its value,
//     converted to the value model, under its name without the extension;
//   - any other file contributes its text under its full name; a file that is
//     not valid UTF-8 (binary content) contributes the string
//     "blake3:<hex>" naming its content instead, so a binary change still
//     moves fingerprints while the truth stays JSON.
//
// Extensions are matched case-sensitively (".JSON" is text), and only when
// something is left before them (a file named ".json" is text under the key
// ".json"). Directories without files do not exist in the truth, as in git.
// Keys are the raw names: a key holding a dot, such as "notes.md", is
// addressed in spec paths with the escape canon.ParsePath defines,
// "notes\.md". Two entries of one directory that give the same key ("a.json"
// and "a.yaml", or "a.json" and the directory "a") are an error naming both.
//
// YAML is read with gopkg.in/yaml.v3 and converted exactly: mappings must
// have string keys (any other key is an error naming the file and line),
// duplicate keys are an error, merge keys ("<<") and aliases are expanded,
// numbers become float64 (rounded as JavaScript rounds them), timestamps and
// other scalars the value model cannot hold keep the text they were written
// with, !!binary keeps its base64 text, NaN and infinities are an error, and
// an empty document is null. A file must hold at most one document.

// fileKind says how a file's content becomes a value.
type fileKind uint8

const (
	kindText fileKind = iota // text under the full name
	kindJSON                 // JSON under the name without ".json"
	kindYAML                 // YAML under the name without ".yaml"/".yml"
)

// fileKey returns the key a file named name takes in its directory's object
// and how its content is read.
func fileKey(name string) (string, fileKind) {
	switch {
	case len(name) > len(".json") && strings.HasSuffix(name, ".json"):
		return name[:len(name)-len(".json")], kindJSON
	case len(name) > len(".yaml") && strings.HasSuffix(name, ".yaml"):
		return name[:len(name)-len(".yaml")], kindYAML
	case len(name) > len(".yml") && strings.HasSuffix(name, ".yml"):
		return name[:len(name)-len(".yml")], kindYAML
	}
	return name, kindText
}

// truthPath returns the path of a file's value in the structured truth: the
// directory names of p followed by the file's key.
func truthPath(p string) canon.Path {
	segs := strings.Split(p, "/")
	segs[len(segs)-1], _ = fileKey(segs[len(segs)-1])
	return canon.Path(segs)
}

// fileValue returns the structured-truth value of the file at path p (used
// in error messages) with content data. sum is the BLAKE3 of data when the
// caller has it, else nil.
func fileValue(view View, p string, data []byte, sum *[32]byte) (any, error) {
	if view != nil {
		if v, ok, err := view.Value(p, data); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		} else if ok {
			return v, nil
		}
	}
	_, kind := fileKey(path.Base(p))
	switch kind {
	case kindJSON:
		v, err := canon.Decode(data)
		if err != nil {
			return nil, fmt.Errorf("%s: not valid JSON: %w", p, err)
		}
		return v, nil
	case kindYAML:
		v, err := yamlValue(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		return v, nil
	}
	if utf8.Valid(data) {
		return string(data), nil
	}
	if sum == nil {
		s := blake3.Sum256(data)
		sum = &s
	}
	return canon.BLAKE3.TokenOf(sum[:]), nil
}

// TruthOfFiles returns the structured truth of a world-model given as a map
// from file path to content, such as files read from a git tree. Paths are
// normalized with NormalizePath; a path that breaks a path rule, two paths
// that collide (CheckCollisions) or two files that give the same key are an
// error. The mapping is the one ReadTruth applies to a directory.
func TruthOfFiles(files map[string][]byte) (any, error) { return TruthOfFilesView(files, nil) }

// TruthOfFilesView is TruthOfFiles with a node's view deciding the value of
// the files it claims (see View).
func TruthOfFilesView(files map[string][]byte, view View) (any, error) {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	if err := CheckCollisions(paths); err != nil {
		return nil, err
	}
	b := newTruthBuilder()
	for _, p := range paths {
		n, _ := NormalizePath(p) // checked by CheckCollisions
		v, err := fileValue(view, n, files[p], nil)
		if err != nil {
			return nil, err
		}
		if err := b.add(n, v); err != nil {
			return nil, err
		}
	}
	return b.root, nil
}

// ReadTruth returns the structured truth of the node directory dir. It
// applies the same path rules as Scan (symlinks that leave dir, names that
// differ only in case and special files are errors; links to files inside
// dir are read as those files) and the same mapping as TruthOfFiles.
func ReadTruth(dir string) (any, error) {
	w, err := newWalker(dir)
	if err != nil {
		return nil, err
	}
	defer w.close()
	walked, err := w.walk()
	if err != nil {
		return nil, err
	}
	paths := make([]string, len(walked))
	for i, f := range walked {
		paths[i] = f.path
	}
	if err := CheckCollisions(paths); err != nil {
		return nil, fmt.Errorf("scan %s: %w", w.root, err)
	}
	b := newTruthBuilder()
	for i := range walked {
		f := &walked[i]
		data, err := w.readFile(f)
		if err != nil {
			return nil, err
		}
		v, err := fileValue(nil, f.path, data, nil)
		if err != nil {
			return nil, err
		}
		if err := b.add(f.path, v); err != nil {
			return nil, err
		}
	}
	return b.root, nil
}

// truthBuilder assembles structured truth from files in any order,
// remembering which file or directory introduced each key so that a
// collision names both.
type truthBuilder struct {
	root   map[string]any
	origin map[string]string // "dir\x00key" → the path that introduced it
}

func newTruthBuilder() *truthBuilder {
	return &truthBuilder{root: map[string]any{}, origin: map[string]string{}}
}

// add places the value v of the file at the normalized path p.
func (b *truthBuilder) add(p string, v any) error {
	segs := strings.Split(p, "/")
	obj := b.root
	for i, seg := range segs[:len(segs)-1] {
		dir := strings.Join(segs[:i+1], "/")
		id := strings.Join(segs[:i], "/") + "\x00" + seg
		if o, ok := b.origin[id]; ok && o != dir+"/" {
			return keyCollision(o, dir+"/", seg)
		}
		b.origin[id] = dir + "/"
		next, ok := obj[seg].(map[string]any)
		if !ok {
			next = map[string]any{}
			obj[seg] = next
		}
		obj = next
	}
	key, _ := fileKey(segs[len(segs)-1])
	id := strings.Join(segs[:len(segs)-1], "/") + "\x00" + key
	if o, ok := b.origin[id]; ok {
		return keyCollision(o, p, key)
	}
	b.origin[id] = p
	obj[key] = v
	return nil
}

// keyCollision reports two entries of one directory that give the same key
// in the structured truth. A directory is named with a trailing slash.
func keyCollision(a, b, key string) error {
	if a > b {
		a, b = b, a
	}
	return fmt.Errorf("%s and %s both give the key %q in the structured truth (a directory is an object keyed by entry name; .json and .yaml files drop their extension): rename one of them", a, b, key)
}

// maxYAMLNodes bounds the size of a YAML document after aliases are
// expanded, so a small file cannot expand into an enormous value.
const maxYAMLNodes = 1 << 22

// yamlValue converts one YAML document to the value model.
func yamlValue(data []byte) (any, error) {
	if !utf8.Valid(data) {
		return nil, errors.New("not valid YAML: the file is not valid UTF-8")
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil // an empty document is null
		}
		return nil, fmt.Errorf("not valid YAML: %w", err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, fmt.Errorf("not valid YAML: %w", err)
		}
		return nil, fmt.Errorf("line %d: a second YAML document; a world-model file holds one document", extra.Line)
	}
	c := yamlConverter{memo: map[*yaml.Node]yamlConverted{}, active: map[*yaml.Node]bool{}}
	v, _, err := c.value(&doc)
	return v, err
}

type yamlConverted struct {
	v    any
	size int
}

type yamlConverter struct {
	memo   map[*yaml.Node]yamlConverted // alias targets already converted
	active map[*yaml.Node]bool          // alias targets being converted (cycles)
}

// value converts n and returns its value and its expanded size in nodes.
func (c *yamlConverter) value(n *yaml.Node) (any, int, error) {
	switch n.Kind {
	case 0:
		return nil, 1, nil
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, 1, nil
		}
		return c.value(n.Content[0])
	case yaml.AliasNode:
		t := n.Alias
		if t == nil {
			return nil, 0, fmt.Errorf("line %d: alias *%s has no anchor", n.Line, n.Value)
		}
		if r, ok := c.memo[t]; ok {
			return r.v, r.size, nil
		}
		if c.active[t] {
			return nil, 0, fmt.Errorf("line %d: alias *%s refers to a value that contains it", n.Line, n.Value)
		}
		c.active[t] = true
		v, size, err := c.value(t)
		delete(c.active, t)
		if err != nil {
			return nil, 0, err
		}
		c.memo[t] = yamlConverted{v, size}
		return v, size, nil
	case yaml.SequenceNode:
		arr := make([]any, 0, len(n.Content))
		size := 1
		for _, e := range n.Content {
			v, s, err := c.value(e)
			if err != nil {
				return nil, 0, err
			}
			if size += s; size > maxYAMLNodes {
				return nil, 0, fmt.Errorf("line %d: aliases expand the document beyond %d values", n.Line, maxYAMLNodes)
			}
			arr = append(arr, v)
		}
		return arr, size, nil
	case yaml.MappingNode:
		return c.mapping(n)
	case yaml.ScalarNode:
		v, err := yamlScalar(n)
		return v, 1, err
	}
	return nil, 0, fmt.Errorf("line %d: unsupported YAML node", n.Line)
}

// mapping converts a mapping node, expanding merge keys: explicit keys win
// over merged ones, and earlier merge sources over later ones.
func (c *yamlConverter) mapping(n *yaml.Node) (any, int, error) {
	obj := make(map[string]any, len(n.Content)/2)
	size := 1
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, vn := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			merges = append(merges, vn)
			continue
		}
		key, err := yamlKey(k)
		if err != nil {
			return nil, 0, err
		}
		if _, dup := obj[key]; dup {
			return nil, 0, fmt.Errorf("line %d: key %q appears twice in one mapping", k.Line, key)
		}
		v, s, err := c.value(vn)
		if err != nil {
			return nil, 0, err
		}
		if size += s; size > maxYAMLNodes {
			return nil, 0, fmt.Errorf("line %d: aliases expand the document beyond %d values", n.Line, maxYAMLNodes)
		}
		obj[key] = v
	}
	for _, m := range merges {
		var sources []*yaml.Node
		src := m
		if src.Kind == yaml.AliasNode && src.Alias != nil && src.Alias.Kind == yaml.SequenceNode {
			src = src.Alias
		}
		if src.Kind == yaml.SequenceNode {
			sources = src.Content
		} else {
			sources = []*yaml.Node{m}
		}
		for _, s := range sources {
			v, vs, err := c.value(s)
			if err != nil {
				return nil, 0, err
			}
			mv, ok := v.(map[string]any)
			if !ok {
				return nil, 0, fmt.Errorf("line %d: a merge key (<<) must merge a mapping or a list of mappings", s.Line)
			}
			if size += vs; size > maxYAMLNodes {
				return nil, 0, fmt.Errorf("line %d: aliases expand the document beyond %d values", n.Line, maxYAMLNodes)
			}
			for k, x := range mv {
				if _, ok := obj[k]; !ok {
					obj[k] = x
				}
			}
		}
	}
	return obj, size, nil
}

// yamlKey returns the string a mapping key stands for; keys of any other
// type are an error.
func yamlKey(k *yaml.Node) (string, error) {
	n := k
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind != yaml.ScalarNode {
		return "", fmt.Errorf("line %d: a mapping key is a collection; structured truth allows only string keys", k.Line)
	}
	if tag := n.ShortTag(); tag != "!!str" {
		return "", fmt.Errorf("line %d: mapping key %q is a %s, not a string; structured truth allows only string keys (quote it)", k.Line, n.Value, strings.TrimPrefix(tag, "!!"))
	}
	return n.Value, nil
}

// yamlScalar converts a scalar node.
func yamlScalar(n *yaml.Node) (any, error) {
	if n.ShortTag() == "!!binary" {
		return strings.Join(strings.Fields(n.Value), ""), nil
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, fmt.Errorf("line %d: %w", n.Line, err)
	}
	switch x := v.(type) {
	case nil, bool:
		return x, nil
	case string:
		if !utf8.ValidString(x) {
			return nil, fmt.Errorf("line %d: a string escape gives invalid UTF-8", n.Line)
		}
		return x, nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("line %d: %s is not a finite number; structured truth holds only finite numbers (quote it for text)", n.Line, n.Value)
		}
		return x, nil
	case int:
		return float64(x), nil
	case int64:
		return float64(x), nil
	case uint64:
		return float64(x), nil
	case time.Time:
		return n.Value, nil
	}
	return n.Value, nil
}

// YAMLValue converts one YAML document to the value model exactly as a
// world-model's .yaml file is read (see ReadTruth): callers that keep YAML
// inside other formats read it the same way.
func YAMLValue(data []byte) (any, error) { return yamlValue(data) }
