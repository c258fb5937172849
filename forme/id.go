package forme

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Responsibility ids are UUIDv7 values (48-bit Unix milliseconds, version 7,
// 74 random bits, RFC 9562 variant) written as 26 characters of uppercase
// Crockford base32, most significant bits first. 26 characters hold 130 bits,
// so the first character carries the top 3 bits of a 2-bit zero pad plus the
// value and is always 0–7. Because the timestamp leads, ids sort by time.

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

var crockfordIndex = func() [256]int8 {
	var t [256]int8
	for i := range t {
		t[i] = -1
	}
	for i := 0; i < len(crockford); i++ {
		t[crockford[i]] = int8(i)
	}
	return t
}()

// IDLen is the length of a canonical id.
const IDLen = 26

// EncodeID writes 16 bytes as 26 uppercase Crockford base32 characters.
func EncodeID(u [16]byte) string {
	hi := binary.BigEndian.Uint64(u[:8])
	lo := binary.BigEndian.Uint64(u[8:])
	var out [IDLen]byte
	// 130 bits: treat the value as hi:lo with two leading zero bits.
	for i := IDLen - 1; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out[:])
}

// DecodeID parses a canonical 26-character id (uppercase Crockford base32).
// It does not check the UUID version; IsCanonicalID does.
func DecodeID(s string) ([16]byte, error) {
	var u [16]byte
	if len(s) != IDLen {
		return u, fmt.Errorf("id %q has %d characters, want %d", s, len(s), IDLen)
	}
	var hi, lo uint64
	for i := 0; i < IDLen; i++ {
		v := crockfordIndex[s[i]]
		if v < 0 {
			return u, fmt.Errorf("id %q: %q is not an uppercase Crockford base32 character", s, s[i])
		}
		if i == 0 && v > 7 {
			return u, fmt.Errorf("id %q overflows 128 bits (first character must be 0-7)", s)
		}
		hi = hi<<5 | lo>>59
		lo = lo<<5 | uint64(v)
	}
	binary.BigEndian.PutUint64(u[:8], hi)
	binary.BigEndian.PutUint64(u[8:], lo)
	return u, nil
}

// IsCanonicalID reports whether s is a 26-character uppercase Crockford
// base32 UUIDv7 (version 7, RFC 9562 variant).
func IsCanonicalID(s string) bool {
	u, err := DecodeID(s)
	if err != nil {
		return false
	}
	return u[6]>>4 == 7 && u[8]>>6 == 2
}

// IDTime returns the timestamp embedded in a canonical id.
func IDTime(s string) (time.Time, error) {
	u, err := DecodeID(s)
	if err != nil {
		return time.Time{}, err
	}
	ms := int64(binary.BigEndian.Uint64(append([]byte{0, 0}, u[:6]...)))
	return time.UnixMilli(ms).UTC(), nil
}

// NewID mints a UUIDv7 id for the given time from 10 bytes of r (use
// crypto/rand.Reader outside tests).
func NewID(now time.Time, r io.Reader) (string, error) {
	var u [16]byte
	ms := now.UnixMilli()
	if ms < 0 || ms >= 1<<48 {
		return "", fmt.Errorf("time %s is outside the UUIDv7 range", now.UTC().Format(time.RFC3339))
	}
	var ts [8]byte
	binary.BigEndian.PutUint64(ts[:], uint64(ms))
	copy(u[:6], ts[2:])
	if _, err := io.ReadFull(r, u[6:]); err != nil {
		return "", fmt.Errorf("read randomness for an id: %w", err)
	}
	u[6] = 0x70 | u[6]&0x0f
	u[8] = 0x80 | u[8]&0x3f
	return EncodeID(u), nil
}

// IDGenerator mints ids that are unique and strictly increasing even when
// several are minted in the same millisecond or the clock steps back: the
// next id is then the previous one plus one in its random bits (moving to
// the next millisecond when those run out).
type IDGenerator struct {
	Now  func() time.Time // nil: time.Now
	Rand io.Reader        // nil: crypto/rand

	mu   sync.Mutex
	last [16]byte
	have bool
}

// Next mints the next id.
func (g *IDGenerator) Next() (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := time.Now
	if g.Now != nil {
		now = g.Now
	}
	r := io.Reader(rand.Reader)
	if g.Rand != nil {
		r = g.Rand
	}
	s, err := NewID(now(), r)
	if err != nil {
		return "", err
	}
	u, _ := DecodeID(s)
	if g.have && bytes.Compare(u[:], g.last[:]) <= 0 {
		u = g.last
		if !incrementRandom(&u) {
			// every random value of this millisecond is used: borrow the next one
			var ts [8]byte
			copy(ts[2:], u[:6])
			ms := binary.BigEndian.Uint64(ts[:]) + 1
			if ms >= 1<<48 {
				return "", errors.New("id space is exhausted")
			}
			binary.BigEndian.PutUint64(ts[:], ms)
			copy(u[:6], ts[2:])
			u[6], u[7] = 0x70, 0
			binary.BigEndian.PutUint64(u[8:], 2<<62)
		}
	}
	g.last, g.have = u, true
	return EncodeID(u), nil
}

// incrementRandom adds one to the 74 random bits, keeping version and variant.
func incrementRandom(u *[16]byte) bool {
	// rand_b: the low 62 bits of bytes 8..15
	b := binary.BigEndian.Uint64(u[8:]) & (1<<62 - 1)
	if b+1 < 1<<62 {
		binary.BigEndian.PutUint64(u[8:], 2<<62|(b+1))
		return true
	}
	// carry into rand_a: the low 12 bits of bytes 6..7
	a := uint16(u[6]&0x0f)<<8 | uint16(u[7])
	if a == 0xfff {
		return false
	}
	a++
	u[6] = 0x70 | byte(a>>8)
	u[7] = byte(a)
	binary.BigEndian.PutUint64(u[8:], 2<<62)
	return true
}

// AddMissingID adds `id: <new id>` to the frontmatter of a kind:
// responsibility source that has none (or an empty one), minting the id with
// the current time and crypto/rand. It reports whether it changed src.
func AddMissingID(src []byte) ([]byte, bool, error) {
	id, err := NewID(time.Now(), rand.Reader)
	if err != nil {
		return nil, false, err
	}
	return InsertID(src, id)
}

// InsertID adds `id: <id>` to the frontmatter of a kind: responsibility
// source that has no id, after the kind line, keeping the file's line
// endings. A source that already has an id, or is not a responsibility, is
// returned unchanged. A source without readable frontmatter is an error.
func InsertID(src []byte, id string) ([]byte, bool, error) {
	f := ParseFile("source", src)
	if !f.hasFM {
		return src, false, errors.New("no frontmatter: add a `---` block with `name:` and `kind: responsibility` first")
	}
	for _, d := range f.Diagnostics {
		if d.Code == CodeFrontmatterInvalid {
			return src, false, fmt.Errorf("the frontmatter is invalid (%s): fix it first", d.Message)
		}
	}
	if !strings.EqualFold(f.Frontmatter["kind"], string(KindResponsibility)) {
		return src, false, nil
	}
	if f.Frontmatter["id"] != "" {
		return src, false, nil
	}
	nl := "\n"
	if bytes.Contains(src, []byte("\r\n")) {
		nl = "\r\n"
	}
	line := "id: " + id + nl
	// Replace an empty `id:` line, else insert after the kind line.
	lines := splitLinesKeep(src)
	end := 0 // index of the closing --- line
	for i := 1; i < len(lines); i++ {
		t := strings.TrimRight(string(lines[i]), " \t\r\n")
		if t == "---" || t == "..." {
			end = i
			break
		}
	}
	at, replace := -1, false
	for i := 1; i < end; i++ {
		t := string(lines[i])
		switch {
		case strings.HasPrefix(t, "id:"):
			at, replace = i, true
		case strings.HasPrefix(t, "kind:") && at < 0:
			at = i + 1
		}
	}
	if at < 0 {
		at = end
	}
	var out bytes.Buffer
	for i, l := range lines {
		if i == at {
			out.WriteString(line)
			if replace {
				continue
			}
		}
		out.Write(l)
	}
	return out.Bytes(), true, nil
}

func splitLinesKeep(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			out = append(out, b)
			break
		}
		out = append(out, b[:i+1])
		b = b[i+1:]
	}
	return out
}
