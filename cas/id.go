package cas

import (
	"encoding/hex"
	"fmt"
	"strings"
)

// ID names an object: the BLAKE3-256 hash of its content.
type ID [32]byte

// idPrefix starts the textual form of an ID.
const idPrefix = "blake3:"

// ParseID parses "blake3:<64 hex>" or a bare 64-digit hex hash. Hex digits
// may be upper or lower case.
func ParseID(s string) (ID, error) {
	var id ID
	h := strings.TrimPrefix(s, idPrefix)
	if len(h) != 2*len(id) {
		return ID{}, fmt.Errorf("parse object id %q: want %s followed by %d hex digits", s, idPrefix, 2*len(id))
	}
	if _, err := hex.Decode(id[:], []byte(h)); err != nil {
		return ID{}, fmt.Errorf("parse object id %q: not hex", s)
	}
	return id, nil
}

// String returns "blake3:<64 lowercase hex>".
func (id ID) String() string { return idPrefix + id.Hex() }

// Hex returns the 64 lowercase hex digits of the hash.
func (id ID) Hex() string { return hex.EncodeToString(id[:]) }

// MarshalText encodes the ID as its String form.
func (id ID) MarshalText() ([]byte, error) { return []byte(id.String()), nil }

// UnmarshalText accepts what ParseID accepts.
func (id *ID) UnmarshalText(b []byte) error {
	v, err := ParseID(string(b))
	if err != nil {
		return err
	}
	*id = v
	return nil
}
