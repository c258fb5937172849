package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"reflect"
	"strings"

	"github.com/prose-store/prose/cas"
	"github.com/prose-store/prose/internal/lock"
	"github.com/prose-store/prose/vault"
	"github.com/prose-store/prose/wiki"
)

// jsonError is the document `--json` prints on stdout when a command fails
// before printing its own: {"ok": false, "error": {code, message, hint}}.
// The sentence stays on stderr as without --json.
type jsonError struct {
	OK    bool `json:"ok"`
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Hint    string `json:"hint"`
	} `json:"error"`
}

// errorCodes name the errors a script may want to tell apart; every other
// failure is "failed" (exit 1) or "usage" (exit 2).
var errorCodes = []struct {
	err  error
	code string
}{
	{vault.ErrNotVault, "not_a_vault"},
	{vault.ErrEmptySource, "empty_source"},
	{vault.ErrBaseMoved, "vault_moved"},
	{vault.ErrRefMoved, "vault_moved"},
	{vault.ErrHandEdits, "hand_edits"},
	{wiki.ErrHandEdits, "hand_edits"},
	{wiki.ErrNotFound, "not_found"},
	{wiki.ErrAmbiguous, "ambiguous"},
	{wiki.ErrExists, "exists"},
	{wiki.ErrUnsafe, "unsafe_path"},
	{cas.ErrNotFound, "not_found"},
	{cas.ErrCorrupt, "corrupt"},
	{lock.ErrLocked, "locked"},
	{context.Canceled, "interrupted"},
}

// errorCode is the code of err in the --json error document.
func errorCode(err error, exit int) string {
	for _, c := range errorCodes {
		if errors.Is(err, c.err) {
			return c.code
		}
	}
	if exit == 2 {
		return "usage"
	}
	return "failed"
}

// hintVerbs start the part of a message that says what to do.
var hintVerbs = []string{"run ", "use ", "see ", "write ", "pass ", "add ", "give ", "try ", "commit ", "set ", "fix ", "leave ", "remove ", "delete ", "edit ", "move ", "choose ", "check ", "name ", "rename ", "install ", "wait ", "re-run ", "rerun ", "make ", "put ", "start ", "call "}

// errorHint is the part of msg that says what to do, or "".
func errorHint(msg string) string {
	best := ""
	for _, sep := range []string{" (see ", "; ", ": ", " — ", ". "} {
		for i := strings.Index(msg, sep); i >= 0; {
			rest := msg[i+len(sep):]
			if sep == " (see " {
				rest = "see " + strings.TrimSuffix(strings.TrimSpace(rest), ")")
			}
			low := strings.ToLower(rest)
			for _, v := range hintVerbs {
				if strings.HasPrefix(low, v) && len(rest) > len(best) {
					best = rest
				}
			}
			j := strings.Index(msg[i+len(sep):], sep)
			if j < 0 {
				break
			}
			i += len(sep) + j
		}
	}
	return strings.TrimSuffix(strings.TrimSpace(best), ".")
}

// writeJSONError prints the --json error document of a failed command.
func writeJSONError(w io.Writer, err error, exit int, msg string) {
	var doc jsonError
	doc.Error.Code = errorCode(err, exit)
	doc.Error.Message = msg
	doc.Error.Hint = errorHint(msg)
	_ = encodeJSON(w, doc)
}

// jsonRequested reports whether the command line, its global flags
// hoisted to the front, asks for --json.
func jsonRequested(args []string) bool {
	for i := 1; i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "--"; i++ {
		switch args[i] {
		case "--json", "--json=true", "-json":
			return true
		case "--vault", "--lock-timeout", "--model", "--record":
			i++
		}
	}
	return false
}

// sameDestination reports whether a and b write to the same file (one
// terminal for both, or 2>&1 into one file).
func sameDestination(a, b io.Writer) bool {
	unwrap := func(w io.Writer) *os.File {
		for {
			if r, ok := w.(interface{ Raw() io.Writer }); ok {
				w = r.Raw()
				continue
			}
			f, _ := w.(*os.File)
			return f
		}
	}
	fa, fb := unwrap(a), unwrap(b)
	if fa == nil || fb == nil {
		return false
	}
	sa, err1 := fa.Stat()
	sb, err2 := fb.Stat()
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// countingWriter tells whether anything was written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

// Raw is the writer underneath, for the terminal checks.
func (c *countingWriter) Raw() io.Writer { return c.w }

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[interface{ MarshalText() ([]byte, error) }]()
)

// emptyLists returns v with every nil slice and map it holds made empty, so
// a list with nothing in it is printed as [] (and a map as {}), never null.
// Values that marshal themselves and byte slices are left as they are.
func emptyLists(v any) any {
	if v == nil {
		return v
	}
	rv := reflect.ValueOf(v)
	cp := reflect.New(rv.Type()).Elem()
	cp.Set(rv)
	fillLists(cp, 0)
	return cp.Interface()
}

func marshalsItself(t reflect.Type) bool {
	return t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler) ||
		t.Implements(textMarshaler) || reflect.PointerTo(t).Implements(textMarshaler)
}

// fillLists makes the nil slices and maps under the settable v empty,
// copying what it changes below pointers, maps and interfaces so the
// caller's values are never modified.
func fillLists(v reflect.Value, depth int) {
	if depth > 64 || marshalsItself(v.Type()) {
		return
	}
	switch v.Kind() {
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		if v.IsNil() {
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
			return
		}
		cp := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		reflect.Copy(cp, v)
		for i := range cp.Len() {
			fillLists(cp.Index(i), depth+1)
		}
		v.Set(cp)
	case reflect.Array:
		for i := range v.Len() {
			fillLists(v.Index(i), depth+1)
		}
	case reflect.Map:
		if v.IsNil() {
			v.Set(reflect.MakeMap(v.Type()))
			return
		}
		cp := reflect.MakeMapWithSize(v.Type(), v.Len())
		it := v.MapRange()
		for it.Next() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(it.Value())
			fillLists(e, depth+1)
			cp.SetMapIndex(it.Key(), e)
		}
		v.Set(cp)
	case reflect.Pointer:
		if v.IsNil() {
			return
		}
		e := reflect.New(v.Type().Elem())
		e.Elem().Set(v.Elem())
		fillLists(e.Elem(), depth+1)
		v.Set(e)
	case reflect.Interface:
		if v.IsNil() {
			return
		}
		e := reflect.New(v.Elem().Type()).Elem()
		e.Set(v.Elem())
		fillLists(e, depth+1)
		v.Set(e)
	case reflect.Struct:
		t := v.Type()
		for i := range v.NumField() {
			if f := t.Field(i); f.IsExported() && f.Tag.Get("json") != "-" {
				fillLists(v.Field(i), depth+1)
			}
		}
	}
}
