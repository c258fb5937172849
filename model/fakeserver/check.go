package fakeserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// CheckStrict reports the first place where a schema sent strict breaks
// the strict rules independently of how it was produced: every object
// node closed with every property required, recursively through
// properties, items, anyOf and $defs.
func CheckStrict(node any, ptr string) error {
	m, ok := node.(map[string]any)
	if !ok {
		return nil
	}
	isObj := m["type"] == "object"
	if ts, ok := m["type"].([]any); ok && slices.Contains(ts, any("object")) {
		isObj = true
	}
	if isObj {
		if m["additionalProperties"] != false {
			return fmt.Errorf("%s: object not closed (additionalProperties %v)", ptr, m["additionalProperties"])
		}
		props, _ := m["properties"].(map[string]any)
		req, _ := m["required"].([]any)
		if props == nil {
			return fmt.Errorf("%s: strict object without properties", ptr)
		}
		if len(req) != len(props) {
			return fmt.Errorf("%s: %d properties but %d required", ptr, len(props), len(req))
		}
		for _, r := range req {
			if _, ok := props[r.(string)]; !ok {
				return fmt.Errorf("%s: required %v is no property", ptr, r)
			}
		}
	}
	for _, k := range []string{"properties", "$defs"} {
		if sub, ok := m[k].(map[string]any); ok {
			for name, v := range sub {
				if err := CheckStrict(v, ptr+"/"+k+"/"+name); err != nil {
					return err
				}
			}
		}
	}
	if err := CheckStrict(m["items"], ptr+"/items"); err != nil {
		return err
	}
	if a, ok := m["anyOf"].([]any); ok {
		for i, v := range a {
			if err := CheckStrict(v, fmt.Sprintf("%s/anyOf/%d", ptr, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// Lookup follows a slash-separated path of keys and indexes into a decoded
// JSON document; it returns nil where nothing is.
func Lookup(doc any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := doc.(map[string]any)
			doc = m[k]
		case int:
			a, _ := doc.([]any)
			if k >= len(a) {
				return nil
			}
			doc = a[k]
		}
	}
	return doc
}

// Golden compares body, re-indented with sorted keys, with
// testdata/NAME; with update (the test package's -update flag) it
// rewrites the file.
func Golden(t testing.TB, update bool, name string, body []byte) {
	t.Helper()
	var doc any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("%s: body is not JSON: %v\n%s", name, err, body)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	_ = enc.Encode(doc)
	path := filepath.Join("testdata", name)
	if update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(want, b.Bytes()) {
		t.Fatalf("%s differs from the golden file (run go test -update after checking the change)\n got:\n%s", path, b.Bytes())
	}
}
