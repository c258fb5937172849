package wiki

import (
	"io"
	"math/rand"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// checkWriteToken: writeToken writes every token of in as Token.String,
// the way Sanitize wrote them before.
func checkWriteToken(t *testing.T, in string) {
	t.Helper()
	z := html.NewTokenizer(strings.NewReader(in))
	for {
		if z.Next() == html.ErrorToken {
			if z.Err() != io.EOF {
				t.Fatalf("%q: %v", in, z.Err())
			}
			return
		}
		tok := z.Token()
		var b strings.Builder
		writeToken(&b, &tok)
		if got, want := b.String(), tok.String(); got != want {
			t.Fatalf("writeToken of %q's token = %q, want %q", in, got, want)
		}
	}
}

func TestWriteTokenAsString(t *testing.T) {
	parts := []string{"<p>", "</p>", "<a href=\"x?a=1&b='2'\">", "<img src=x alt='a\"b'/>", "<br/>", "<A HREF=y>", "</A>", "text", " & ", "<", ">", "\"", "'", "\r", "&amp;", "&lt;", "é", "<!-- c -->", "<!DOCTYPE html>", "<td colspan=2 class=\"k\">", "<x:y a:b=c>", "\x00", "<p a b c>"}
	r := rand.New(rand.NewSource(10))
	for n := 0; n < 20000; n++ {
		var sb strings.Builder
		for k := r.Intn(10); k > 0; k-- {
			sb.WriteString(parts[r.Intn(len(parts))])
		}
		checkWriteToken(t, sb.String())
	}
}

func FuzzWriteTokenAsString(f *testing.F) {
	f.Add(`<p class="a">x &amp; y<br/><a href='z'>q</a></p>`)
	f.Fuzz(func(t *testing.T, in string) { checkWriteToken(t, in) })
}
