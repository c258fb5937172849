package receipt

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestRedactSecrets(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain message: upstream 503", "plain message: upstream 503"},
		{"401 Unauthorized: invalid key sk-proj-AbC123xyz_-987", "401 Unauthorized: invalid key [REDACTED]"},
		{"anthropic sk-ant-api03-abcdefghijkl rejected", "anthropic [REDACTED] rejected"},
		{"Authorization: Bearer eyJhbGciOi.J9.xyz", "Authorization: Bearer [REDACTED]"},
		{"bearer abcdefghij", "bearer [REDACTED]"},
		{"GET https://u:hunter22@example.com/x failed", "GET https://u:[REDACTED]@example.com/x failed"},
		{"api_key=abc123&x=1", "api_key=[REDACTED]&x=1"},
		{"ACCESS_TOKEN: xyz, then", "ACCESS_TOKEN: [REDACTED], then"},
		{`{"client_secret": "s3cr3t value", "n": 1}`, `{"client_secret": [REDACTED], "n": 1}`},
		{"password='p w' user=bob", "password=[REDACTED] user=bob"},
		{"DB_PASSWD=x", "DB_PASSWD=[REDACTED]"},
		{"token ghp_abcdefghijklmnopqrstuvwxyz0123", "token [REDACTED]"},
		{"aws AKIAABCDEFGHIJKLMNOP here", "aws [REDACTED] here"},
		{"slack xoxb-1234567890-abc", "slack [REDACTED]"},
		{"no key here; tokens used: 3", "no key here; tokens used: 3"},
		{"max_tokens: 3", "max_tokens: [REDACTED]"},
		{"monkey business", "monkey business"},
		// Text after a quoted value is part of it: one pass redacts it all.
		{`key="a"b rest`, "key=[REDACTED] rest"},
		// A value that looks like a name: both are redacted in one pass.
		{`key= "api_key": "s3cr3tvalue"`, "key= [REDACTED] [REDACTED]"},
		// A password holding @ runs to the last @ of the authority.
		{"https://u:p@ss@host/x", "https://u:[REDACTED]@host/x"},
		{`token="unterminated secret`, "token=[REDACTED]"},
		// A private key block is redacted whole, not only its algorithm.
		{"key -----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY----- end", "key [REDACTED] end"},
		{"-----BEGIN PRIVATE KEY-----MIIEvQIBADANBg-----END PRIVATE KEY-----", "[REDACTED]"},
	}
	for _, tt := range tests {
		got := RedactSecrets(tt.in)
		if got != tt.want {
			t.Errorf("RedactSecrets(%q) = %q; want %q", tt.in, got, tt.want)
		}
		if again := RedactSecrets(got); again != got {
			t.Errorf("RedactSecrets not idempotent on %q: %q", got, again)
		}
	}
}

func TestRedactSecretsEnv(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "local-server-key-123")
	if got := RedactSecrets("sent local-server-key-123 to server"); got != "sent [REDACTED] to server" {
		t.Fatalf("RedactSecrets = %q", got)
	}
}

func TestFailureReason(t *testing.T) {
	long := strings.Repeat("word ", 200)
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"empty", errors.New(""), ""},
		{"plain", errors.New("render: upstream 503"), "render: upstream 503"},
		{"first line", errors.New("render failed\ngoroutine 1 [running]:\nmain.main()"), "render failed"},
		{"carriage return", errors.New("a\r\nb"), "a"},
		{"tabs and controls", errors.New("a\tb\x00c"), "a b c"},
		{"invalid UTF-8", errors.New("bad \xff byte"), "bad \uFFFD byte"},
		{"secret", errors.New("openai: 401 for key sk-abcdefghijklmnop"), "openai: 401 for key [REDACTED]"},
		{"wrapped secret", errors.Join(errors.New("call model: Bearer abcdefghijklmn"), errors.New("second line")), "call model: Bearer [REDACTED]"},
		{"long", errors.New(long), strings.TrimSpace(long[:499]) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := FailureReason(tt.err)
			if got != tt.want {
				t.Fatalf("FailureReason = %q; want %q", got, tt.want)
			}
		})
	}
}

// TestFailureReasonCutsRedacted checks that cutting a long message never
// leaves a half-redacted value.
func TestFailureReasonCutsRedacted(t *testing.T) {
	for pad := 480; pad < 500; pad++ {
		msg := strings.Repeat("x", pad) + " token=" + strings.Repeat("s", 30) + " tail"
		got := FailureReason(errors.New(msg))
		if n := utf8.RuneCountInString(got); n > MaxFailureReason {
			t.Fatalf("pad %d: %d characters", pad, n)
		}
		if RedactSecrets(got) != got || strings.Contains(got, "sss") {
			t.Fatalf("pad %d: %q is not fully redacted", pad, got)
		}
	}
}

func FuzzRedactSecrets(f *testing.F) {
	for _, s := range []string{"api_key=abc", "Bearer abcdefghij", "https://a:b@c", "sk-abcdefgh1234", `"token": "x"`, "token=[REDACTED]]", `key="a"b`, `key= "api_key": "x"`, "x://u:p@s@h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		once := RedactSecrets(s)
		if twice := RedactSecrets(once); twice != once {
			t.Fatalf("not idempotent: %q → %q → %q", s, once, twice)
		}
		reason := FailureReason(errors.New(s))
		if utf8.RuneCountInString(reason) > MaxFailureReason || strings.ContainsAny(reason, "\r\n") || !utf8.ValidString(reason) {
			t.Fatalf("FailureReason(%q) = %q breaks the shape rules", s, reason)
		}
		if RedactSecrets(reason) != reason {
			t.Fatalf("FailureReason(%q) = %q is not redacted", s, reason)
		}
	})
}

// FuzzRedactLeavesNoSecret puts a secret in each shape RedactSecrets knows
// between arbitrary text, and checks no part of it survives: not the
// secret, not its first or last half.
func FuzzRedactLeavesNoSecret(f *testing.F) {
	f.Add("", "", uint8(0), "Zq9XwV3kPm7T")
	f.Add(`key=`, `"`, uint8(3), "Zq9XwV3kPm7T")
	f.Add("https://u:", "@h", uint8(4), "abcdEFGH1234")
	forms := []string{"token=%s", `"api_key": "%s"`, "Authorization: Bearer %s", "password='%s'", "https://user:%s@host/x", "sk-%s", "client_secret: %s", "-----BEGIN EC PRIVATE KEY-----\n%s\n-----END EC PRIVATE KEY-----"}
	f.Fuzz(func(t *testing.T, prefix, suffix string, form uint8, secret string) {
		if len(secret) < 12 || strings.Trim(secret, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") != "" {
			return
		}
		half := len(secret) / 2
		s := prefix + " " + fmt.Sprintf(forms[int(form)%len(forms)], secret) + " " + suffix
		got := RedactSecrets(s)
		for _, part := range []string{secret[:half], secret[half:]} {
			if strings.Contains(prefix+suffix, part) || strings.Contains(Redacted, part) {
				return
			}
			if strings.Contains(got, part) {
				t.Fatalf("RedactSecrets(%q) = %q leaves %q of the secret", s, got, part)
			}
		}
	})
}

func TestRedactText(t *testing.T) {
	pem := "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----"
	tests := []struct {
		in, want string
		n        int
	}{
		{"Primary key: the column that identifies a row.", "Primary key: the column that identifies a row.", 0},
		{"API key: the string a provider issues to you", "API key: the string a provider issues to you", 0},
		{"export OPENAI_API_KEY=sk-proj-AbC123xyz_-987", "export OPENAI_API_KEY=[REDACTED]", 1},
		{"api_token = 9f8e7d6c5b4a3f2e1d0c", "api_token = [REDACTED]", 1},
		{"key:\n" + pem + "\nafter", "key:\n[REDACTED]\nafter", 1},
		{"two: ghp_abcdefghijklmnopqrstuvwxyz0123 and AKIAABCDEFGHIJKLMNOP", "two: [REDACTED] and [REDACTED]", 2},
		{"max_tokens: 3", "max_tokens: 3", 0},
		// A scoped name (C++, aptitude's options) is no name: value pair.
		{"set Aptitude::UI::Keybindings::Search to /", "set Aptitude::UI::Keybindings::Search to /", 0},
		{"Keybindings::ReallyQuit9x8y7z", "Keybindings::ReallyQuit9x8y7z", 0},
		{"Authorization: Bearer abcdefgh12345", "Authorization: Bearer [REDACTED]", 1},
		// What follows a quoted value's closing quote stays, and a second
		// pass does not read it as a new value.
		{`api_key="abc12345"x9`, "api_key=[REDACTED]x9", 1},
		// A name spelled with the Kelvin sign or the long s is a name on
		// any line, not only on the line after another name.
		{"\u212Aey=zz99zz99zz", "\u212Aey=[REDACTED]", 1},
		{"key=\"ab\nc12345\"\n\u017Fecret=zz99zz99zz", "key=[REDACTED]\n\u017Fecret=[REDACTED]", 2},
	}
	for _, tt := range tests {
		got, n := RedactText(tt.in)
		if got != tt.want || n != tt.n {
			t.Errorf("RedactText(%q) = %q, %d; want %q, %d", tt.in, got, n, tt.want, tt.n)
		}
		if again, n2 := RedactText(got); again != got || n2 != 0 {
			t.Errorf("RedactText not idempotent on %q: %q, %d", got, again, n2)
		}
	}
	if got := RedactSecrets("Primary key: the column"); got == "Primary key: the column" {
		t.Errorf("RedactSecrets keeps erring toward redaction for messages: %q", got)
	}
}

func FuzzRedactText(f *testing.F) {
	f.Add("api_key=abc123def456 and -----BEGIN RSA PRIVATE KEY-----\nx\n-----END RSA PRIVATE KEY-----")
	f.Add("Term: meaning of the term")
	f.Fuzz(func(t *testing.T, s string) {
		got, _ := RedactText(s)
		if again, n := RedactText(got); again != got || n != 0 {
			t.Fatalf("not idempotent: %q -> %q -> %q (%d)", s, got, again, n)
		}
	})
}

// BenchmarkRedactText redacts a 1 MB document of ordinary prose with a
// few named secrets in it: what `prose ingest` does to every source.
func BenchmarkRedactText(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < 1<<20; i++ {
		sb.WriteString("The deploy guide explains how the canary stage rolls out, line ")
		sb.WriteString(strings.Repeat("x", i%7))
		sb.WriteString(".\n")
		if i%500 == 0 {
			sb.WriteString("api_key = \"sk-abcdefghijklmnopqrstuvwx0123\"\n")
		}
	}
	doc := sb.String()
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		RedactText(doc)
	}
}

// checkWordsMatchWholeText: each pattern RedactText searches only in the
// words that hold its hint finds in s what a search of the whole of s
// finds; it returns how many patterns matched.
func checkWordsMatchWholeText(t *testing.T, s string) int {
	t.Helper()
	matched := 0
	for _, p := range secretPatterns() {
		if !p.words {
			continue
		}
		calls := 0
		replace := func(m string) string { calls++; return "[" + m + "]" }
		want := p.re.ReplaceAllStringFunc(s, replace)
		wantCalls := calls
		calls = 0
		got := replaceInSpans(s, hintWords(asciiLower(s), p.hints), p.re, replace)
		if got != want || calls != wantCalls {
			t.Fatalf("%s on %.200q: the search by words found %d matches, the whole text %d:\n%.300s", p.re, s, calls, wantCalls, got)
		}
		if calls > 0 {
			matched++
		}
	}
	return matched
}

func FuzzRedactWordsMatchWholeText(f *testing.F) {
	f.Add("see https://user:hunter2secret@example.com/ and disk-sk-abcdefgh12345678\tghp_abcdefghijklmnopqrstuvwxyz0123")
	f.Add("x.https://u:p4ss@h ſcheme://v:w0rdpass99@h AKIAABCDEFGHIJKLMNOP,AIzaSyA1234567890abcdefghijklmnopqrstuv xoxb-1234567890-ab")
	f.Fuzz(func(t *testing.T, s string) { checkWordsMatchWholeText(t, s) })
}

// TestRedactTextLinesMatchWholeText: a pattern RedactText searches only in
// the words that hold its hint finds what a search of the whole text does,
// on the repository's HTML and Markdown sources and on URLs with passwords
// at the start and end of lines, among many URLs without one.
func TestRedactTextLinesMatchWholeText(t *testing.T) {
	texts := []string{
		"https://user:hunter2secret@example.com/\nsee http://example.org/a\r\nftp://anon:pa55word@ftp.example.net",
		strings.Repeat("<a href=\"https://example.com/x\">x</a>\n", 200) + "git clone https://bob:s3cr3t-t0ken@git.example.com/r.git\n" + strings.Repeat("text\n", 50) + "svn+ssh://alice:pw12345678@host",
		"no url here\nbut a \u212aelvin://u:p4ssword123@h and ſcheme://v:w0rdpass99@h\n",
		// Provider keys on lines of their own, at a line's start and end,
		// beside "disk-" and "task-" that hold the hint and no key.
		"disk-space is low\nsk-abcdefgh12345678\ntask-list: OPENAI sk-proj_ABCDEFGH-1234 end\nxsk-notakey123456\n" +
			"ghp_abcdefghijklmnopqrstuvwxyz0123 and github_pat_ABCDEFGHIJKLMNOPQRSTUV_12\nxoxb-1234567890-abcdef\n" +
			"AKIAABCDEFGHIJKLMNOP\nAKIAABCDEFGHIJKLMNOPQ is longer\nkey=AIzaSyA1234567890abcdefghijklmnopqrstuv\n",
	}
	for _, dir := range []string{"../fixtures/sources", "../docs"} {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".html") || strings.HasSuffix(p, ".md")) {
				if b, err := os.ReadFile(p); err == nil {
					texts = append(texts, string(b))
				}
			}
			return nil
		})
	}
	if len(texts) < 10 {
		t.Fatalf("found only %d texts", len(texts))
	}
	// The texts again as one line each (blanks for line ends), as a
	// text of a single paragraph is.
	for _, s := range texts[:len(texts):len(texts)] {
		texts = append(texts, strings.ReplaceAll(s, "\n", " "))
	}
	checked := 0
	for _, s := range texts {
		checked += checkWordsMatchWholeText(t, s)
	}
	if checked < 2 {
		t.Fatalf("only %d texts held a match: the test checks nothing", checked)
	}
	got, n := RedactText(texts[1])
	if n != 2 || strings.Contains(got, "s3cr3t") || strings.Contains(got, "pw12345678") {
		t.Errorf("RedactText redacted %d passwords:\n%s", n, got[len(got)-400:])
	}
}

// TestHintSetAsHasHint: the hints one reading finds are those hasHint
// finds, a search per hint, for every pattern's hints and the named
// values'.
func TestHintSetAsHasHint(t *testing.T) {
	h := docHints()
	lists := [][]string{namedHints}
	for _, p := range secretPatterns() {
		if p.in&inDocuments != 0 && len(p.hints) > 0 {
			lists = append(lists, p.hints)
		}
	}
	parts := []string{"a", " ", "\n", "-", "_", ":", "/", "k", "s", "\u212A", "\u017F", "\u212Aey", "\u017Fk-", "ey", "sk", "gh", "p_", "github", "_pat", "xo", "x", "akia", "aiz", "a", "bearer", "toke", "n", "secret", "passw", "credential", "private key", "-----", "://", "é"}
	for _, x := range h.hints {
		parts = append(parts, x)
	}
	r := rand.New(rand.NewSource(4))
	for n := 0; n < 50000; n++ {
		var sb strings.Builder
		for k := r.Intn(10); k > 0; k-- {
			sb.WriteString(parts[r.Intn(len(parts))])
		}
		lower := asciiLower(sb.String())
		held := h.held(lower)
		for _, hints := range lists {
			if got, want := held&h.mask(hints) != 0, hasHint(lower, hints); got != want {
				t.Fatalf("%q holds one of %q: %v, want %v", lower, hints, got, want)
			}
		}
	}
}

// hintLinesBefore is hintLines as it was before it read a line once for
// all hints: hasHint on each line. The reference hintLines must match.
func hintLinesBefore(s string, hints []string) [][2]int {
	var out [][2]int
	for start := 0; start < len(s); {
		end := strings.IndexByte(s[start:], '\n')
		if end < 0 {
			end = len(s)
		} else {
			end += start + 1
		}
		if hasHint(s[start:end], hints) {
			stop := end
			if next := strings.IndexByte(s[end:], '\n'); next >= 0 {
				stop = end + next + 1
			} else {
				stop = len(s)
			}
			if len(out) > 0 && out[len(out)-1][1] >= start {
				out[len(out)-1][1] = max(out[len(out)-1][1], stop)
			} else {
				out = append(out, [2]int{start, stop})
			}
		}
		start = end
	}
	return out
}

func TestHintLinesAsByLine(t *testing.T) {
	parts := []string{"a", " ", "\n", "\n\n", "k", "ey", "key", "tok", "en", "token", "secret", "passw", "credential", "cred", "\u212Aey", "\u017Fecret", "é", "x"}
	r := rand.New(rand.NewSource(9))
	for n := 0; n < 50000; n++ {
		var sb strings.Builder
		for k := r.Intn(16); k > 0; k-- {
			sb.WriteString(parts[r.Intn(len(parts))])
		}
		s := sb.String()
		if got, want := hintLines(s, namedHints), hintLinesBefore(s, namedHints); !slices.Equal(got, want) {
			t.Fatalf("hintLines(%q) = %v, want %v", s, got, want)
		}
	}
}
