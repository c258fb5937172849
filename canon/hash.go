package canon

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"strings"

	"github.com/zeebo/blake3"
)

// Algorithm names a hash function used for tokens and digests. The zero
// value means BLAKE3, the default.
type Algorithm string

// The supported algorithms. Both produce 32-byte sums.
const (
	BLAKE3 Algorithm = "blake3"
	SHA256 Algorithm = "sha256"
)

// Size is the length in bytes of a sum of every supported algorithm.
const Size = 32

// ParseAlgorithm returns the Algorithm named s: "blake3" or "sha256". The
// empty string means the default, BLAKE3. Names are case-sensitive.
func ParseAlgorithm(s string) (Algorithm, error) {
	switch Algorithm(s) {
	case "", BLAKE3:
		return BLAKE3, nil
	case SHA256:
		return SHA256, nil
	}
	return "", fmt.Errorf("canon: unknown hash algorithm %q (use \"blake3\" or \"sha256\")", s)
}

// String returns the algorithm's name as it prefixes a token.
func (a Algorithm) String() string {
	if a == "" {
		return string(BLAKE3)
	}
	return string(a)
}

// New returns a new hash.Hash computing the algorithm. Like crypto.Hash.New
// it panics for an algorithm that is not supported, and so do Token,
// DigestValue, DigestObject and MemoKey: obtain an Algorithm from
// ParseAlgorithm or the constants, never by converting unchecked input.
func (a Algorithm) New() hash.Hash {
	switch a {
	case "", BLAKE3:
		return blake3.New()
	case SHA256:
		return sha256.New()
	}
	panic(fmt.Sprintf("canon: unknown hash algorithm %q", string(a)))
}

// sum returns the algorithm's 32-byte sum of data.
func (a Algorithm) sum(data []byte) [Size]byte {
	switch a {
	case "", BLAKE3:
		return blake3.Sum256(data)
	case SHA256:
		return sha256.Sum256(data)
	}
	panic(fmt.Sprintf("canon: unknown hash algorithm %q", string(a)))
}

// Token returns the token of data: the algorithm's name, a colon and the
// sum in lowercase hex, as in "blake3:<64 hex digits>".
func (a Algorithm) Token(data []byte) string {
	s := a.sum(data)
	return a.TokenOf(s[:])
}

// TokenOf formats an already computed sum as a token.
func (a Algorithm) TokenOf(sum []byte) string {
	name := a.String()
	b := make([]byte, 0, len(name)+1+2*len(sum))
	b = append(b, name...)
	b = append(b, ':')
	b = hex.AppendEncode(b, sum)
	return string(b)
}

// ParseToken splits a token such as "sha256:<64 hex digits>" into its
// algorithm and sum. The hex must be lowercase and exactly 64 digits long.
func ParseToken(tok string) (Algorithm, []byte, error) {
	a, err := CheckToken(tok)
	if err != nil {
		return "", nil, err
	}
	_, digits, _ := strings.Cut(tok, ":")
	sum, _ := hex.DecodeString(digits)
	return a, sum, nil
}

// CheckToken is ParseToken without decoding the sum: it returns the
// token's algorithm, or why tok is not a token.
func CheckToken(tok string) (Algorithm, error) {
	name, digits, ok := strings.Cut(tok, ":")
	if !ok {
		return "", fmt.Errorf("canon: token %s has no algorithm prefix (want \"blake3:<64 hex digits>\")", quoteForError(tok))
	}
	if name == "" {
		return "", fmt.Errorf("canon: token %s has an empty algorithm name", quoteForError(tok))
	}
	a, err := ParseAlgorithm(name)
	if err != nil {
		return "", fmt.Errorf("canon: token %s: unknown hash algorithm %s (use \"blake3\" or \"sha256\")", quoteForError(tok), quoteForError(name))
	}
	if len(digits) != 2*Size {
		return "", fmt.Errorf("canon: token %s: want %d hex digits after the colon, have %d", quoteForError(tok), 2*Size, len(digits))
	}
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return "", fmt.Errorf("canon: token %s: %q at position %d is not a lowercase hex digit", quoteForError(tok), c, len(name)+1+i)
		}
	}
	return a, nil
}
