package canon

import (
	"bufio"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
)

// canonicalGolden maps JSON input text to the canonical bytes JavaScript's
// JSON.stringify prints after sorting keys by UTF-16 code units (expected
// values checked with node v20).
var canonicalGolden = []struct {
	name, in, want string
}{
	{"null", `null`, `null`},
	{"true", `true`, `true`},
	{"false", ` false `, `false`},
	{"empty object", `{ }`, `{}`},
	{"empty array", `[ ]`, `[]`},
	{"whitespace removed", "{\n\t\"a\" : [ 1 , 2 ]\r\n}", `{"a":[1,2]}`},
	{"keys sorted", `{"b":1,"a":2,"A":3,"":4}`, `{"":4,"A":3,"a":2,"b":1}`},
	{"utf16 order astral before U+FFFF", `{"\uffff":1,"😀":2,"a":3}`, `{"a":3,"😀":2,"` + "\uffff" + `":1}`},
	{"utf16 order astral before U+E000", `{"\ue000":1,"\ud800\udc00":2,"\ud7ff":3}`, "{\"\ud7ff\":3,\"\U00010000\":2,\"\ue000\":1}"},
	{"utf16 prefix", `{"ab":1,"a":2,"a\u0000":3}`, `{"a":2,"a\u0000":3,"ab":1}`},
	{"nested", `{"z":{"y":[{"b":1,"a":[]}],"x":{}},"a":null}`, `{"a":null,"z":{"x":{},"y":[{"a":[],"b":1}]}}`},
	{"arrays keep order", `[3,1,2,[],[[]],{}]`, `[3,1,2,[],[[]],{}]`},
	{"1e21", `1e21`, `1e+21`},
	{"1e20", `100000000000000000000`, `100000000000000000000`},
	{"1e-7", `0.0000001`, `1e-7`},
	{"1.5e-7", `1.5e-7`, `1.5e-7`},
	{"0.000001", `0.000001`, `0.000001`},
	{"negative zero", `-0`, `0`},
	{"negative zero float", `-0.0e5`, `0`},
	{"smallest denormal", `5e-324`, `5e-324`},
	{"largest double", `1.7976931348623157e308`, `1.7976931348623157e+308`},
	{"2^53+1 rounds", `9007199254740993`, `9007199254740992`},
	{"big integer", `123456789012345678901`, `123456789012345680000`},
	{"123e-20", `123e-20`, `1.23e-18`},
	{"integer float", `1.0`, `1`},
	{"exponent upper", `2E+2`, `200`},
	{"tenth", `0.1`, `0.1`},
	{"negative", `-12.5`, `-12.5`},
	{"escape nul", `"\u0000"`, `"\u0000"`},
	{"escape 1f", `"\u001F"`, `"\u001f"`},
	{"short escapes", `"\b\f\n\r\t"`, `"\b\f\n\r\t"`},
	{"escaped quote and backslash", `"\"\\"`, `"\"\\"`},
	{"solidus unescaped", `"\/"`, `"/"`},
	{"DEL raw", `"\u007f"`, "\"\x7f\""},
	{"U+2028 raw", `"\u2028\u2029"`, "\"\u2028\u2029\""},
	{"script tag raw", `"</script>&<>"`, `"</script>&<>"`},
	{"escaped letters decoded", `"\u0041\u00e9"`, `"Aé"`},
	{"surrogate pair", `"\ud83d\ude00"`, `"😀"`},
	{"raw multibyte", `"é😀"`, `"é😀"`},
	{"escaped key", `{"\n":1}`, `{"\n":1}`},
}

func TestCanonicalGolden(t *testing.T) {
	for _, tc := range canonicalGolden {
		t.Run(tc.name, func(t *testing.T) {
			v, err := Decode([]byte(tc.in))
			if err != nil {
				t.Fatalf("Decode(%q): %v", tc.in, err)
			}
			got, err := Marshal(v)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if string(got) != tc.want {
				t.Errorf("canonical(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestDecodeRejects(t *testing.T) {
	for _, tc := range []struct {
		name, in, wantErr string
	}{
		{"empty", ``, "end of input"},
		{"only space", `  `, "end of input"},
		{"trailing data", `{} {}`, "after the JSON value"},
		{"trailing comma", `[1,]`, "expected a value"},
		{"trailing comma object", `{"a":1,}`, "expected a string object key"},
		{"invalid utf8", "\"\xff\"", "invalid UTF-8"},
		{"invalid utf8 outside string", "[1]\xc3", "invalid UTF-8"},
		{"encoded surrogate", "\"\xed\xa0\x80\"", "invalid UTF-8"},
		{"lone high surrogate", `"\ud800"`, "lone surrogate \\ud800"},
		{"lone high surrogate then text", `"\ud800abc"`, "lone surrogate"},
		{"lone low surrogate", `"\udc00"`, "lone surrogate \\udc00"},
		{"high then high", `"\ud800\ud800"`, "not a low surrogate"},
		{"duplicate key", `{"a":1,"b":2,"a":3}`, `duplicate object key "a"`},
		{"duplicate key via escape", `{"a":1,"\u0061":2}`, `duplicate object key "a"`},
		{"NaN", `NaN`, "expected a value"},
		{"Infinity", `Infinity`, "expected a value"},
		{"overflow", `1e400`, "out of range"},
		{"negative overflow", `-1e309`, "out of range"},
		{"leading zero", `01`, "leading zero"},
		{"plus sign", `+1`, "expected a value"},
		{"bare dot", `1.`, "invalid number"},
		{"bare exponent", `1e`, "invalid number"},
		{"raw control char", "\"a\nb\"", "control character 0x0a"},
		{"bad escape", `"\x"`, `invalid escape \x`},
		{"short unicode escape", `"\u12"`, "escape"},
		{"unterminated string", `"abc`, "inside a string"},
		{"single quotes", `'a'`, "expected a value"},
		{"bom", "\ufeff{}", "expected a value"},
		{"bad literal", `tru`, `expected "true"`},
		{"missing colon", `{"a" 1}`, "expected ':'"},
		{"unquoted key", `{a:1}`, "expected a string object key"},
		{"unclosed array", `[1`, "expected ',' or ']'"},
		{"too deep", strings.Repeat("[", maxDepth+2) + strings.Repeat("]", maxDepth+2), "nested more than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := Decode([]byte(tc.in))
			if err == nil {
				t.Fatalf("Decode(%q) = %v, want an error containing %q", tc.in, v, tc.wantErr)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Decode(%q) error %q, want it to contain %q", tc.in, err, tc.wantErr)
			}
		})
	}
}

func TestDecodeErrorPosition(t *testing.T) {
	_, err := Decode([]byte("{\n  \"a\": 1,\n  \"a\": 2\n}"))
	se, ok := err.(*SyntaxError)
	if !ok {
		t.Fatalf("error %v is %T, want *SyntaxError", err, err)
	}
	if se.Line != 3 || se.Column != 3 {
		t.Errorf("position line %d column %d, want line 3 column 3", se.Line, se.Column)
	}
}

func TestMarshalGoTypes(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   any
		want string
	}{
		{"int", 42, `42`},
		{"int64 above 2^53", int64(1<<53 + 1), `9007199254740992`},
		{"uint64 max", uint64(math.MaxUint64), `18446744073709552000`},
		{"int8", int8(-3), `-3`},
		{"float32", float32(0.5), `0.5`},
		{"json.Number", json.Number("1e21"), `1e+21`},
		{"string slice", []string{"b", "a"}, `["b","a"]`},
		{"string map", map[string]string{"b": "1", "a": "<"}, `{"a":"<","b":"1"}`},
		{"nil slice", []any(nil), `[]`},
		{"nil map", map[string]any(nil), `{}`},
		{"nested go types", map[string]any{"n": []any{1, uint8(2), "x"}}, `{"n":[1,2,"x"]}`},
		{"negative zero", math.Copysign(0, -1), `0`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Marshal(tc.in)
			if err != nil {
				t.Fatalf("Marshal(%#v): %v", tc.in, err)
			}
			if string(got) != tc.want {
				t.Errorf("Marshal(%#v) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
}

func TestMarshalRejects(t *testing.T) {
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	for _, tc := range []struct {
		name    string
		in      any
		wantErr string
	}{
		{"NaN", math.NaN(), "NaN"},
		{"+Inf", math.Inf(1), "infinity"},
		{"-Inf in array", []any{math.Inf(-1)}, "infinity"},
		{"invalid utf8 string", "a\xffb", "not valid UTF-8"},
		{"invalid utf8 key", map[string]any{"\xc3": 1}, "not valid UTF-8"},
		{"encoded surrogate", "\xed\xa0\x80", "not valid UTF-8"},
		{"bad json.Number", json.Number("01"), "not a valid JSON number"},
		{"unsupported type", struct{}{}, "cannot encode a value of Go type struct {}"},
		{"unsupported nested", map[string]any{"a": []int{1}}, "Go type []int"},
		{"cyclic", cyclic, "nested more than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Marshal(tc.in)
			if err == nil {
				t.Fatalf("Marshal = %s, want an error containing %q", got, tc.wantErr)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Marshal error %q, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

func TestAppendMarshalKeepsPrefix(t *testing.T) {
	dst := []byte("prefix:")
	out, err := AppendMarshal(dst, map[string]any{"a": []any{"x", math.NaN()}})
	if err == nil {
		t.Fatal("want an error for NaN")
	}
	if string(out) != "prefix:" {
		t.Errorf("on error AppendMarshal returned %q, want the original prefix", out)
	}
	out, err = AppendMarshal(dst, []any{1.5})
	if err != nil || string(out) != "prefix:[1.5]" {
		t.Errorf("AppendMarshal = %q, %v", out, err)
	}
}

func TestCompareKeys(t *testing.T) {
	ordered := []string{"", "A", "a", "a\x00", "ab", "é", "\ud7ff", "😀", "\U0010ffff", "\ue000", "\uffff"}
	for i, a := range ordered {
		for j, b := range ordered {
			want := 0
			switch {
			case i < j:
				want = -1
			case i > j:
				want = 1
			}
			if got := CompareKeys(a, b); got != want {
				t.Errorf("CompareKeys(%q, %q) = %d, want %d", a, b, got, want)
			}
		}
	}
}

// TestNumbersAgainstJavaScript checks number formatting and parsing against
// outputs node v20 produced (testdata/numbers.golden, from gen_numbers.js).
func TestNumbersAgainstJavaScript(t *testing.T) {
	f, err := os.Open("testdata/numbers.golden")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 3 {
			t.Fatalf("bad golden line %q", sc.Text())
		}
		n++
		switch fields[0] {
		case "format":
			bits, err := strconv.ParseUint(fields[1], 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			x := math.Float64frombits(bits)
			got, err := Marshal(x)
			if err != nil {
				t.Errorf("Marshal(%v): %v", x, err)
				continue
			}
			if string(got) != fields[2] {
				t.Errorf("Marshal(%v [%s]) = %s, JavaScript prints %s", x, fields[1], got, fields[2])
			}
			// What JavaScript printed must parse back to the same double.
			v, err := Decode([]byte(fields[2]))
			if err != nil {
				t.Errorf("Decode(%s): %v", fields[2], err)
			} else if y := v.(float64); y != x && !(x == 0 && y == 0) {
				t.Errorf("Decode(%s) = %v, want %v", fields[2], y, x)
			}
		case "parse":
			want, err := strconv.ParseUint(fields[2], 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			v, err := Decode([]byte(fields[1]))
			if math.IsInf(math.Float64frombits(want), 0) {
				// JSON.parse overflows to Infinity, which canon refuses.
				if err == nil {
					t.Errorf("Decode(%s) = %v, want an out-of-range error", fields[1], v)
				}
				continue
			}
			if err != nil {
				t.Errorf("Decode(%s): %v", fields[1], err)
				continue
			}
			if got := math.Float64bits(v.(float64)); got != want {
				t.Errorf("Decode(%s) = %016x, JavaScript parses %016x", fields[1], got, want)
			}
		default:
			t.Fatalf("bad golden line %q", sc.Text())
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 5000 {
		t.Fatalf("only %d golden numbers, want the full file", n)
	}
}

// TestCompareKeysMatchesUTF16 checks CompareKeys against a direct
// comparison of UTF-16 code units on random strings.
func TestCompareKeysMatchesUTF16(t *testing.T) {
	pool := []rune{'a', 'b', 0, 0x7f, 0xe9, 0x7ff, 0x800, 0xd7ff, 0xe000, 0xfffd, 0xffff, 0x10000, 0x1f600, 0x10ffff}
	rng := rand.New(rand.NewPCG(3, 4))
	gen := func() string {
		r := make([]rune, rng.IntN(4))
		for i := range r {
			r[i] = pool[rng.IntN(len(pool))]
		}
		return string(r)
	}
	for i := 0; i < 20000; i++ {
		a, b := gen(), gen()
		want := slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
		if got := CompareKeys(a, b); got != want {
			t.Fatalf("CompareKeys(%q, %q) = %d, want %d", a, b, got, want)
		}
	}
}
