package forme

import (
	"encoding/hex"
	"strings"

	"github.com/zeebo/blake3"
)

// Hasher turns bytes into a fingerprint token such as "blake3:<64 hex>".
// canon.Algorithm satisfies it; Options.Hash takes the vault's algorithm.
type Hasher interface {
	Token(data []byte) string
}

// blake3Hasher is the default until a vault says otherwise.
type blake3Hasher struct{}

func (blake3Hasher) Token(data []byte) string {
	sum := blake3.Sum256(data)
	return "blake3:" + hex.EncodeToString(sum[:])
}

// ContractImage is the text a contract fingerprint hashes:
//
//	id:…\nname:…\nkind:…\nrequires:…\nmaintains:…\ncontinuity:…\nexecution:…
//
// Each section value is the trimmed body of the section (#### lines
// included; repeated sections joined by a blank line; a value written in the
// heading, as in "### Continuity: external-driven", comes first). Absent
// sections are empty. A responsibility without ### Maintains that still has
// a retired ### Ensures or ### Criteria hashes those in its place.
func ContractImage(c *Contract) string {
	maintains := c.body("maintains")
	if maintains == "" && !c.has("maintains") {
		var legacy []string
		for _, k := range []string{"ensures", "criteria"} {
			if b := c.body(k); b != "" {
				legacy = append(legacy, b)
			}
		}
		maintains = strings.Join(legacy, "\n\n")
	}
	var b strings.Builder
	b.WriteString("id:" + c.EffectiveID())
	b.WriteString("\nname:" + c.Name)
	b.WriteString("\nkind:" + string(c.Kind))
	b.WriteString("\nrequires:" + c.body("requires"))
	b.WriteString("\nmaintains:" + maintains)
	b.WriteString("\ncontinuity:" + c.body("continuity"))
	b.WriteString("\nexecution:" + c.body("execution"))
	return b.String()
}

// ContractFingerprint hashes a contract's image with h.
func ContractFingerprint(h Hasher, c *Contract) string {
	return h.Token([]byte(ContractImage(c)))
}
