package schema

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// Each problem names the spot in the arguments it is about, with the
// JSON pointer escaped, and says what is wrong there once: a required
// property that is absent is "missing", not also a null of the wrong type.
func TestValidationProblemsNameTheSpot(t *testing.T) {
	s := MustCompile(toolSchema)
	nested := MustCompile(`{"type":"object","properties":{"a":{"type":["object","null"],"properties":{"b":{"anyOf":[{"type":"string"},{"$ref":"#/$defs/x"}]}}},"k":{"enum":["x","y"]}},"$defs":{"x":{"type":"integer"}}}`)
	cases := []struct {
		s          *Schema
		args, want string
	}{
		{s, `{}`, "at the top level: missing property 'path'"},
		{s, `{"path":"a","surprise":1}`, "at /surprise: the property is not allowed (the schema declares no such property)"},
		{s, `{"path":"a","counts":{"a/b~":1.5}}`, "at /counts/a~1b~0: got number, want integer"},
		{s, `{"path":3,"bare":{"b":1}}`, "at /bare/b: the property is not allowed (the schema declares no such property); at /path: got number, want string"},
		{s, `[1]`, "at the top level: got array, want object"},
		{nested, `{"a":{"b":1.5}}`, "at /a/b: got number, want integer; at /a/b: got number, want string; at /a/b: matches none of the anyOf schemas"},
		{nested, `{"k":"z"}`, "at /k: value must be one of x, y"},
	}
	for _, c := range cases {
		err := c.s.Validate([]byte(c.args))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %q", c.args, err, c.want)
		}
	}
	if err := nested.Validate([]byte(`{"a":{"b":3},"k":"y"}`)); err != nil {
		t.Errorf("valid arguments refused: %v", err)
	}
	if err := s.Validate([]byte(`{"path":"a"} {}`)); err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Errorf("trailing data accepted: %v", err)
	}
}

// A $ref that names no schema in the document is refused at compile
// time; one to an http(s) address is never fetched, even from a server
// that would answer.
func TestCompileRefusesOutsideRefs(t *testing.T) {
	var fetched atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetched.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"type":"string"}`))
	}))
	defer srv.Close()
	for _, ref := range []string{srv.URL + "/s.json", "https://example.invalid/s.json", "#/$defs/nope"} {
		_, err := Compile([]byte(`{"type":"object","properties":{"a":{"$ref":"` + ref + `"}}}`))
		if err == nil || !strings.Contains(err.Error(), ref) || !strings.Contains(err.Error(), "not fetched") {
			t.Errorf("$ref %s: %v", ref, err)
		}
	}
	if n := fetched.Load(); n != 0 {
		t.Errorf("compiling fetched a $ref %d times", n)
	}
}
