package published

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeebo/blake3"

	"github.com/prose-store/prose/canon"
)

func TestTruthMapping(t *testing.T) {
	bin := "\xff\xfe\x00binary"
	binSum := blake3.Sum256([]byte(bin))
	tests := []struct {
		name  string
		files map[string]string
		want  string   // canonical JSON of the truth
		err   []string // substrings of the error, when one is expected
	}{
		{name: "empty", files: map[string]string{}, want: `{}`},
		{name: "json", files: map[string]string{"a.json": `{"x": 1, "y": [true, null, "s"]}`},
			want: `{"a":{"x":1,"y":[true,null,"s"]}}`},
		{name: "json scalar", files: map[string]string{"n.json": `2.50`}, want: `{"n":2.5}`},
		{name: "yaml", files: map[string]string{"b.yaml": "x: 1\ny: [a, b]\nz:\n  w: null\n"},
			want: `{"b":{"x":1,"y":["a","b"],"z":{"w":null}}}`},
		{name: "yml", files: map[string]string{"c.yml": "- 1\n- two\n"}, want: `{"c":[1,"two"]}`},
		{name: "yaml timestamp keeps its text", files: map[string]string{"t.yaml": "d: 2024-01-02\ne: 2024-01-02T03:04:05Z\n"},
			want: `{"t":{"d":"2024-01-02","e":"2024-01-02T03:04:05Z"}}`},
		{name: "yaml numbers", files: map[string]string{"n.yaml": "a: 0x10\nb: 1e3\nc: -0.5\nd: 123456789012345678901234567890\n"},
			want: `{"n":{"a":16,"b":1000,"c":-0.5,"d":1.2345678901234568e+29}}`},
		{name: "yaml merge and alias", files: map[string]string{"m.yaml": "base: &b {x: 1, y: 2}\nd:\n  <<: *b\n  y: 3\nl: [*b]\n"},
			want: `{"m":{"base":{"x":1,"y":2},"d":{"x":1,"y":3},"l":[{"x":1,"y":2}]}}`},
		{name: "yaml quoted number key is a string", files: map[string]string{"k.yaml": "'1': a\n"}, want: `{"k":{"1":"a"}}`},
		{name: "yaml empty is null", files: map[string]string{"e.yaml": ""}, want: `{"e":null}`},
		{name: "text", files: map[string]string{"notes.md": "hello\n"}, want: `{"notes.md":"hello\n"}`},
		{name: "binary", files: map[string]string{"img.bin": bin},
			want: `{"img.bin":"` + canon.BLAKE3.TokenOf(binSum[:]) + `"}`},
		{name: "bare extension is text", files: map[string]string{".json": "{}"}, want: `{".json":"{}"}`},
		{name: "upper-case extension is text", files: map[string]string{"A.JSON": "1"}, want: `{"A.JSON":"1"}`},
		{name: "nested", files: map[string]string{"f/items.json": `[1]`, "f/g/h.txt": "x", "root.txt": "r"},
			want: `{"f":{"g":{"h.txt":"x"},"items":[1]},"root.txt":"r"}`},
		{name: "directory names keep their dots", files: map[string]string{"v1.json/a.json": `1`},
			want: `{"v1.json":{"a":1}}`},

		{name: "yaml integer key", files: map[string]string{"k.yaml": "1: a\n"}, err: []string{"k.yaml", "not a string"}},
		{name: "yaml null key", files: map[string]string{"k.yaml": "~: a\n"}, err: []string{"k.yaml", "not a string"}},
		{name: "yaml duplicate key", files: map[string]string{"k.yaml": "a: 1\na: 2\n"}, err: []string{"k.yaml", "twice"}},
		{name: "yaml two documents", files: map[string]string{"k.yaml": "a: 1\n---\nb: 2\n"}, err: []string{"k.yaml", "second YAML document"}},
		{name: "yaml infinity", files: map[string]string{"k.yaml": "a: .inf\n"}, err: []string{"k.yaml", "finite"}},
		{name: "yaml syntax", files: map[string]string{"k.yaml": "a: [\n"}, err: []string{"k.yaml", "not valid YAML"}},
		{name: "yaml recursive alias", files: map[string]string{"k.yaml": "a: &x [*x]\n"}, err: []string{"k.yaml"}},
		{name: "json syntax", files: map[string]string{"d/k.json": "{"}, err: []string{"d/k.json", "not valid JSON"}},
		{name: "json duplicate key", files: map[string]string{"k.json": `{"a":1,"a":2}`}, err: []string{"k.json"}},
		{name: "json and yaml collide", files: map[string]string{"a.json": "1", "a.yaml": "2"}, err: []string{"a.json", "a.yaml", `key "a"`}},
		{name: "json and text collide", files: map[string]string{"d/a.json": "1", "d/a": "2"}, err: []string{"d/a.json", "d/a", `key "a"`}},
		{name: "json and directory collide", files: map[string]string{"a.json": "1", "a/b.txt": "2"}, err: []string{"a.json", "a/", `key "a"`}},
		{name: "case collision", files: map[string]string{"Notes.md": "1", "notes.md": "2"}, err: []string{"Notes.md", "notes.md", "case"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string][]byte{}
			for p, c := range tc.files {
				files[p] = []byte(c)
			}
			got, err := TruthOfFiles(files)
			checkTruth(t, "TruthOfFiles", got, err, tc.want, tc.err)

			dir := t.TempDir()
			writeFiles(t, dir, tc.files)
			got, err = ReadTruth(dir)
			checkTruth(t, "ReadTruth", got, err, tc.want, tc.err)
		})
	}
}

func checkTruth(t *testing.T, what string, got any, err error, want string, wantErr []string) {
	t.Helper()
	if wantErr != nil {
		if err == nil {
			t.Fatalf("%s: no error, want one mentioning %q", what, wantErr)
		}
		for _, s := range wantErr {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s: error %q does not mention %q", what, err, s)
			}
		}
		return
	}
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	b, err := canon.Marshal(got)
	if err != nil {
		t.Fatalf("%s: marshal: %v", what, err)
	}
	if string(b) != want {
		t.Errorf("%s:\n got %s\nwant %s", what, b, want)
	}
}

func TestTruthPaths(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  string
		err   []string
		is    error
	}{
		{
			name: "symlink inside is followed",
			setup: func(t *testing.T, dir string) {
				writeFiles(t, dir, map[string]string{"data/a.json": `{"k":1}`})
				symlink(t, "../data/a.json", filepath.Join(dir, "view", "b.json"))
			},
			want: `{"data":{"a":{"k":1}},"view":{"b":{"k":1}}}`,
		},
		{
			name: "absolute symlink inside is followed",
			setup: func(t *testing.T, dir string) {
				writeFiles(t, dir, map[string]string{"data/a.txt": "A"})
				symlink(t, filepath.Join(dir, "data", "a.txt"), filepath.Join(dir, "b.txt"))
			},
			want: `{"b.txt":"A","data":{"a.txt":"A"}}`,
		},
		{
			name: "symlink out is refused",
			setup: func(t *testing.T, dir string) {
				out := t.TempDir()
				writeFiles(t, out, map[string]string{"secret.txt": "s"})
				writeFiles(t, dir, map[string]string{"a.txt": "a"})
				symlink(t, filepath.Join(out, "secret.txt"), filepath.Join(dir, "leak.txt"))
			},
			err: []string{"leak.txt", "secret.txt", "leaves the node directory"},
			is:  ErrLinkOutside,
		},
		{
			name: "relative symlink out is refused",
			setup: func(t *testing.T, dir string) {
				writeFiles(t, dir, map[string]string{"a.txt": "a"})
				symlink(t, "../../etc/passwd", filepath.Join(dir, "d", "leak.txt"))
			},
			err: []string{"leak.txt"},
		},
		{
			name: "symlink to a directory is refused",
			setup: func(t *testing.T, dir string) {
				writeFiles(t, dir, map[string]string{"d/a.txt": "a"})
				symlink(t, "d", filepath.Join(dir, "e"))
			},
			err: []string{"points to a directory"},
		},
		{
			name: "dangling symlink is refused",
			setup: func(t *testing.T, dir string) {
				symlink(t, "nowhere", filepath.Join(dir, "e"))
			},
			err: []string{"cannot be resolved"},
		},
		{
			name: "socket is refused",
			setup: func(t *testing.T, dir string) {
				l, err := net.Listen("unix", filepath.Join(dir, "sock"))
				if err != nil {
					t.Skip("no unix sockets:", err)
				}
				t.Cleanup(func() { l.Close() })
			},
			err: []string{"sock", "is a socket"},
		},
		{
			name: "backslash in a name is refused",
			setup: func(t *testing.T, dir string) {
				writeFiles(t, dir, map[string]string{`a\b.txt`: "x"})
			},
			err: []string{`a\\b.txt`, "backslash"},
		},
		{
			name: "case collision in a subdirectory",
			setup: func(t *testing.T, dir string) {
				writeFiles(t, dir, map[string]string{"d/Readme.md": "1", "d/README.md": "2"})
			},
			err: []string{"Readme.md", "README.md", "case"},
		},
		{
			name: "empty directories are ignored",
			setup: func(t *testing.T, dir string) {
				writeFiles(t, dir, map[string]string{"a.txt": "a"})
				os.MkdirAll(filepath.Join(dir, "empty", "deeper"), 0o755)
			},
			want: `{"a.txt":"a"}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.setup(t, dir)
			got, err := ReadTruth(dir)
			checkTruth(t, "ReadTruth", got, err, tc.want, tc.err)
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("ReadTruth error %v is not %v", err, tc.is)
			}
			_, err = Scan(dir, Options{})
			if tc.err == nil {
				if err != nil {
					t.Fatalf("Scan: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Scan: no error, want one mentioning %q", tc.err)
			}
			for _, s := range tc.err {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("Scan: error %q does not mention %q", err, s)
				}
			}
		})
	}
}

func FuzzYAMLValue(f *testing.F) {
	for _, s := range []string{"a: 1", "- [x, {y: z}]", "a: &x 1\nb: *x", "<<: {a: 1}", "1: 2", "!!binary aGk=", "a: .nan"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := yamlValue(data)
		if err != nil {
			return
		}
		if _, err := canon.Marshal(v); err != nil {
			t.Fatalf("yamlValue(%q) gave a value canonical JSON rejects: %v", data, err)
		}
	})
}
