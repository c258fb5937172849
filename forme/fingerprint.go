package forme

import (
	"strings"

	"github.com/prose-store/prose/canon"
)

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

// ContractFingerprint hashes a contract's image with the vault's algorithm,
// as a token such as "blake3:<64 hex>".
func ContractFingerprint(a canon.Algorithm, c *Contract) string {
	return a.Token([]byte(ContractImage(c)))
}
