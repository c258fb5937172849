package receipt

import (
	"strings"
	"testing"
)

// namedSeeds are texts around every choice of namedValue: names holding a
// word or only its start ("passw"), quotes after the name, blanks and
// line ends around the separator, quoted values closed and not, values
// starting with ':', a match right after a quoted value, the Kelvin sign
// and the long s, upper case.
var namedSeeds = []string{
	"", "key", "key=", "key=x", "api_key=abc123def456", "API_KEY = \"sk-abc 123\"", "my.token: 'a\nb'", "secret:\"unclosed",
	"passw=abc", "passwd=abc", "password :  x,y", "credentials\t=\n value;rest", "key::x", "key: :x", "key=:x", "key=\"a\"token=b",
	"key='a'x='b' secret=c", "xkey=1 ykeyz = 2", "key\"=v", "key' : v", "key \" = v", "-.key_=v}", "monkey business: none",
	"keyboard=qwerty12", "\u212Aey=value1", "\u017Fecret=value2", "no hint here", "key=\"\"", "key=''", "key=\"a'b\"", "key =",
	"tokens, keys; secrets & passwords", "the key is: Primary key: the column", "a=b key=c\nd key=\"e\nf\" g", strings.Repeat("key=\"", 30),
	strings.Repeat("key ", 50) + "= v", "KEY=V TOKEN=W", "k=v key", "key=v\"w", "key= }v", "key=&v", "key=v&w",
}

func checkNamed(t *testing.T, s string) {
	t.Helper()
	calls := 0
	replace := func(m string) string { calls++; return "[" + m + "]" }
	want := namedValue().ReplaceAllStringFunc(s, replace)
	wantCalls := calls
	calls = 0
	got := namedReplaceAll(s, replace)
	if got != want || calls != wantCalls {
		t.Fatalf("%q: the scan gives %q (%d calls), the expression %q (%d)", s, got, calls, want, wantCalls)
	}
}

// TestNamedReplaceAllMatchesTheExpression: the scan replaces what
// namedValue's ReplaceAllStringFunc replaces, on every seed and on the
// repository's documents, line by line and as one line.
func TestNamedReplaceAllMatchesTheExpression(t *testing.T) {
	matched := 0
	for _, s := range namedSeeds {
		checkNamed(t, s)
		if namedValue().MatchString(s) {
			matched++
		}
	}
	if matched < 20 {
		t.Fatalf("only %d seeds hold a named value", matched)
	}
	for _, s := range []string{strings.Repeat("The key is the column that names a row. ", 500) + "api_key=abc123def456 end"} {
		checkNamed(t, s)
		checkNamed(t, strings.ReplaceAll(s, ". ", ".\n"))
	}
}

func FuzzNamedReplaceAll(f *testing.F) {
	for _, s := range namedSeeds {
		f.Add(s)
	}
	f.Fuzz(checkNamed)
}
