package receipt

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/prose-store/prose/canon"
)

// referenceJSON is the first receipt of the reference press-desk replay,
// with its real content hash.
const referenceJSON = `{
 "content_hash": "sha256:0ad3791507f177fd0ebf2b5c75ede9d4db61966d0da43db3b134b6bbfec153ca",
 "contract_fingerprint": "contract:ingress.press-feed@ingress",
 "cost": {"model": "none", "provider": "none", "surprise_cause": "external", "tokens": {"fresh": 0, "reused": 0}},
 "fingerprints": {
  "@atomic": "sha256:494273f013ceedf794551f74decaedee3a8756d202fd002614cc4fb007b499aa",
  "email:blast1": "sha256:74234e98afe7498fb5daf1f36ac2d78acc339464f950703b8c019892f982b90b",
  "email:media1": "sha256:dee883ad2a0946f24aa0af5deec9d5f7f769cecfe6d7f89152c23e9e8b6272c1",
  "email:partner1": "sha256:755fda3c7b0365bc8e625f255dea70174a0d89939a43ffec49fe9f11d8d03b87",
  "email:partner2": "sha256:74234e98afe7498fb5daf1f36ac2d78acc339464f950703b8c019892f982b90b",
  "email:speak1": "sha256:74234e98afe7498fb5daf1f36ac2d78acc339464f950703b8c019892f982b90b"
 },
 "hash_algorithm": "sha256",
 "input_fingerprints": [],
 "node": "ingress.press-feed",
 "prev": null,
 "schema": "openprose.receipt",
 "semantic_diff": {},
 "sig": {"null_reason": "no-signer-adapter-configured", "scheme": "none"},
 "status": "rendered",
 "wake": {"refs": [], "source": "external"}
}`

// edit decodes referenceJSON, lets fn change the value, and re-encodes it.
func edit(t testing.TB, fn func(m map[string]any)) []byte {
	t.Helper()
	v, err := canon.Decode([]byte(referenceJSON))
	if err != nil {
		t.Fatal(err)
	}
	m := v.(map[string]any)
	fn(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sub(m map[string]any, key string) map[string]any { return m[key].(map[string]any) }

func TestParseReference(t *testing.T) {
	r, err := Parse([]byte(referenceJSON))
	if err != nil {
		t.Fatal(err)
	}
	if r.Node != "ingress.press-feed" || r.Status != Rendered || r.Wake.Source != WakeExternal || r.Prev != nil ||
		r.HashAlgorithm != canon.SHA256 || len(r.Fingerprints) != 6 || r.Sig["scheme"] != "none" {
		t.Fatalf("Parse read %+v", r)
	}
	h, err := r.ComputeContentHash()
	if err != nil || h != r.ContentHash {
		t.Fatalf("ComputeContentHash = %s, %v; want %s", h, err, r.ContentHash)
	}
	if err := r.CheckShape(); err != nil {
		t.Fatalf("CheckShape: %v", err)
	}
	orig, _ := canon.Decode([]byte(referenceJSON))
	want, _ := canon.Marshal(orig)
	got, err := r.Canonical()
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("Canonical =\n%s\nwant\n%s", got, want)
	}
}

func TestParseRejects(t *testing.T) {
	tests := []struct {
		name    string
		data    []byte
		wantErr string
	}{
		{"not JSON", []byte(`{`), "receipt:"},
		{"array", []byte(`[]`), "want a JSON object, found an array"},
		{"trailing data", []byte(referenceJSON + "{}"), "receipt:"},
		{"missing prev", edit(t, func(m map[string]any) { delete(m, "prev") }), `missing key "prev"`},
		{"missing sig", edit(t, func(m map[string]any) { delete(m, "sig") }), `missing key "sig"`},
		{"missing wake.refs", edit(t, func(m map[string]any) { delete(sub(m, "wake"), "refs") }), `missing key "wake.refs"`},
		{"missing cost.tokens.reused", edit(t, func(m map[string]any) { delete(sub(sub(m, "cost"), "tokens"), "reused") }), `missing key "cost.tokens.reused"`},
		{"unknown key", edit(t, func(m map[string]any) { m["timestamp"] = "now" }), `unknown key "timestamp"`},
		{"unknown nested key", edit(t, func(m map[string]any) { sub(m, "cost")["usd"] = 1.0 }), `unknown key "cost.usd"`},
		{"unknown tokens key", edit(t, func(m map[string]any) { sub(sub(m, "cost"), "tokens")["cached"] = 1.0 }), `unknown key "cost.tokens.cached"`},
		{"other schema", edit(t, func(m map[string]any) { m["schema"] = "openprose.receipt.v2" }), `schema "openprose.receipt.v2" is not "openprose.receipt"`},
		{"node not a string", edit(t, func(m map[string]any) { m["node"] = 3.0 }), "node must be a string, found a number"},
		{"prev a number", edit(t, func(m map[string]any) { m["prev"] = 1.0 }), "prev must be a string or null"},
		{"refs not strings", edit(t, func(m map[string]any) { sub(m, "wake")["refs"] = []any{1.0} }), "wake.refs[0] must be a string"},
		{"input_fingerprints null", edit(t, func(m map[string]any) { m["input_fingerprints"] = nil }), "input_fingerprints must be an array of strings, found null"},
		{"fingerprint not a string", edit(t, func(m map[string]any) { sub(m, "fingerprints")["x"] = true }), "fingerprints.x must be a string, found a boolean"},
		{"semantic_diff array", edit(t, func(m map[string]any) { m["semantic_diff"] = []any{} }), "semantic_diff must be an object"},
		{"sig null", edit(t, func(m map[string]any) { m["sig"] = nil }), "sig must be an object, found null"},
		{"fractional tokens", edit(t, func(m map[string]any) { sub(sub(m, "cost"), "tokens")["fresh"] = 1.5 }), "cost.tokens.fresh is 1.5; want an integer"},
		{"negative tokens", edit(t, func(m map[string]any) { sub(sub(m, "cost"), "tokens")["reused"] = -1.0 }), "cost.tokens.reused is -1"},
		{"huge tokens", []byte(strings.Replace(referenceJSON, `"fresh": 0`, `"fresh": 1e300`, 1)), "cost.tokens.fresh is 1e+300"},
		{"string tokens", edit(t, func(m map[string]any) { sub(sub(m, "cost"), "tokens")["fresh"] = "0" }), "cost.tokens.fresh must be an integer, found a string"},
		{"duplicate key", []byte(strings.Replace(referenceJSON, `"node":`, `"node": "x", "node":`, 1)), "receipt:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Parse(tt.data)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Parse = %+v, %v; want an error containing %q", r, err, tt.wantErr)
			}
		})
	}
}

// TestParseKeepsValues checks that arbitrary semantic_diff and sig values
// and canonical number forms survive Parse and ToValue exactly.
func TestParseKeepsValues(t *testing.T) {
	data := edit(t, func(m map[string]any) {
		m["semantic_diff"] = map[string]any{"summary": "a<b>&\u2028", "n": 1e21, "x": []any{nil, true, 0.1, map[string]any{}}, "😀": "", "\uffff": ""}
		m["sig"] = map[string]any{"scheme": "ed25519", "value": "abc", "nested": map[string]any{"k": []any{}}}
		sub(sub(m, "cost"), "tokens")["reused"] = 9007199254740991.0
	})
	r, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	orig, _ := canon.Decode(data)
	want, _ := canon.Marshal(orig)
	got, err := r.Canonical()
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("Canonical =\n%s\nwant\n%s", got, want)
	}
	if r.Cost.Tokens.Reused != 1<<53-1 {
		t.Fatalf("reused = %d", r.Cost.Tokens.Reused)
	}
}

func TestSeal(t *testing.T) {
	r := newReceipt("n", nil, Rendered)
	if err := r.Seal(); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.ContentHash, "blake3:") {
		t.Fatalf("ContentHash = %q", r.ContentHash)
	}
	// The content hash does not cover itself: sealing twice is stable.
	h := r.ContentHash
	if err := r.Seal(); err != nil || r.ContentHash != h {
		t.Fatalf("second Seal moved the hash: %s → %s (%v)", h, r.ContentHash, err)
	}
	// A sealed receipt survives a trip through its canonical bytes.
	b, err := r.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := back.ComputeContentHash(); got != h {
		t.Fatalf("parsed canonical bytes hash to %s; want %s", got, h)
	}
	for _, alg := range []canon.Algorithm{"", "md5"} {
		r.HashAlgorithm = alg
		if err := r.Seal(); err == nil {
			t.Errorf("Seal with hash_algorithm %q succeeded", alg)
		}
	}
}

// TestToValueNilFields checks that a receipt built in code with nil slices
// and maps has the same canonical bytes as one with empty ones.
func TestToValueNilFields(t *testing.T) {
	a := &Receipt{Schema: Schema, HashAlgorithm: canon.BLAKE3, Node: "n"}
	b := &Receipt{Schema: Schema, HashAlgorithm: canon.BLAKE3, Node: "n", Wake: Wake{Refs: []string{}},
		InputFingerprints: []string{}, Fingerprints: map[string]string{}, SemanticDiff: map[string]any{}, Sig: map[string]any{}}
	ca, err1 := a.Canonical()
	cb, err2 := b.Canonical()
	if err1 != nil || err2 != nil || !bytes.Equal(ca, cb) {
		t.Fatalf("nil fields encode as\n%s\nempty ones as\n%s", ca, cb)
	}
	if _, err := Parse(ca); err != nil {
		t.Fatalf("Parse of a receipt built in code: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(referenceJSON))
	f.Add(edit(f, func(m map[string]any) { m["prev"] = "sha256:00"; m["semantic_diff"] = map[string]any{"a": []any{1.5}} }))
	f.Add([]byte(`{}`))
	f.Add([]byte(`[1,2]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Parse(data)
		if err != nil {
			return
		}
		b, err := r.Canonical()
		if err != nil {
			t.Fatalf("parsed receipt does not encode: %v", err)
		}
		orig, err := canon.Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := canon.Marshal(orig); !bytes.Equal(b, want) {
			t.Fatalf("canonical bytes differ from the input's:\n%s\n%s", b, want)
		}
		again, err := Parse(b)
		if err != nil {
			t.Fatalf("canonical bytes do not parse: %v", err)
		}
		b2, err := again.Canonical()
		if err != nil || !bytes.Equal(b, b2) {
			t.Fatalf("canonical round trip unstable:\n%s\n%s", b, b2)
		}
		h1, err1 := r.ComputeContentHash()
		h2, err2 := again.ComputeContentHash()
		if h1 != h2 || (err1 == nil) != (err2 == nil) {
			t.Fatalf("content hash moved across the round trip: %s %v / %s %v", h1, err1, h2, err2)
		}
		_ = r.CheckShape()
		_ = VerifyChains([]*Receipt{r, again})
	})
}

// TestCanonicalWithoutTheValueTree: the direct encoder writes the bytes the
// generic one writes for ToValue, with and without content_hash, for
// receipts built in code with empty, nil and awkward fields.
func TestCanonicalWithoutTheValueTree(t *testing.T) {
	prev := "blake3:" + strings.Repeat("cd", 32)
	cases := []*Receipt{
		{},
		newReceipt("n", nil, Rendered),
		newReceipt("ünïcode \"quoted\" \u2028 <tag> \\", nil, Skipped),
		{Node: "x", Prev: &prev, Fingerprints: map[string]string{"b": "1", "a": "2", "é": "3", "\U0001F600": "4", "ￚ": "5"},
			SemanticDiff: map[string]any{"z": []any{1.5, "s", nil, true}, "a": map[string]any{"k": 1e21}},
			Sig:          map[string]any{}, InputFingerprints: []string{}, Wake: Wake{Refs: nil},
			Cost: Cost{Tokens: Tokens{Fresh: 9007199254740991, Reused: 0}}},
	}
	for i, r := range cases {
		for _, withHash := range []bool{true, false} {
			v := r.ToValue()
			if !withHash {
				delete(v, "content_hash")
			}
			want, err := canon.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			got, err := r.appendCanonical(nil, withHash)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("case %d (content_hash %v): %v\n got %s\nwant %s", i, withHash, err, got, want)
			}
		}
	}
}

// FuzzParseDirect: the direct reader Parse tries first accepts only what
// the general reader (Decode, then FromValue) accepts, and gives the same
// receipt.
func FuzzParseDirect(f *testing.F) {
	r := newReceipt("n", nil, Rendered)
	r.SemanticDiff = map[string]any{"moved": []any{"@atomic"}, "files": 3.0, "deep": map[string]any{"a": []any{nil, true}}}
	if err := r.Seal(); err != nil {
		f.Fatal(err)
	}
	data, _ := r.Canonical()
	f.Add(data)
	v, _ := canon.Decode(data)
	pretty, _ := json.MarshalIndent(v, "", "  ")
	f.Add(pretty)
	f.Add([]byte(strings.Replace(string(data), `"fresh":0`, `"fresh":1.5`, 1)))
	f.Add([]byte(strings.Replace(string(data), `"node":"n"`, `"node":"n","node":"m"`, 1)))
	f.Add([]byte(strings.Replace(string(data), `"prev":null`, `"prev":"blake3:00"`, 1)))
	f.Fuzz(func(t *testing.T, data []byte) {
		direct, ok := parseDirect(data)
		v, err := canon.Decode(data)
		var general *Receipt
		if err == nil {
			general, err = FromValue(v)
		}
		if !ok {
			return // Parse reads it again the general way
		}
		if err != nil {
			t.Fatalf("the direct reader accepted what the general one refuses (%v): %q", err, data)
		}
		if !reflect.DeepEqual(direct, general) {
			t.Fatalf("the readers disagree on %q:\ndirect  %#v\ngeneral %#v", data, direct, general)
		}
	})
}
