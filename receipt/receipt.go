package receipt

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/prose-store/prose/canon"
)

// Schema is the value of every receipt's schema key. A receipt with any
// other schema is refused rather than misread.
const Schema = "openprose.receipt"

// AtomicFacet is the fingerprint every receipt carries: the token of the
// node's whole material truth.
const AtomicFacet = "@atomic"

// Status says what a wake did.
type Status string

// The receipt statuses.
const (
	Rendered Status = "rendered" // a new world-model was published
	Skipped  Status = "skipped"  // nothing material moved; fingerprints copied
	Failed   Status = "failed"   // the render failed; nothing was published
)

// WakeSource says why a node woke.
type WakeSource string

// The wake sources.
const (
	WakeInput    WakeSource = "input"    // a producer's facet moved
	WakeSelf     WakeSource = "self"     // the node's own cadence
	WakeExternal WakeSource = "external" // outside input: a gateway, a publish by hand
)

// Receipt is one receipt, with exactly the reference key set. Field comments
// give the JSON key.
type Receipt struct {
	Schema              string            // schema: always Schema
	HashAlgorithm       canon.Algorithm   // hash_algorithm: of content_hash and prev
	ContentHash         string            // content_hash: token over every other key
	Node                string            // node
	ContractFingerprint string            // contract_fingerprint: opaque
	Wake                Wake              // wake
	InputFingerprints   []string          // input_fingerprints: opaque tokens, in edge order
	Fingerprints        map[string]string // fingerprints: facet → opaque token; holds AtomicFacet
	SemanticDiff        map[string]any    // semantic_diff: any JSON object, kept exactly
	Prev                *string           // prev: content_hash of the node's previous receipt; nil for the first
	Status              Status            // status
	Cost                Cost              // cost
	Sig                 map[string]any    // sig: any JSON object, kept exactly
}

// Wake is a receipt's wake key.
type Wake struct {
	Source WakeSource // source
	Refs   []string   // refs: tokens of the receipts that caused the wake
}

// Cost is a receipt's cost key.
type Cost struct {
	Provider      string     // provider
	Model         string     // model
	Tokens        Tokens     // tokens
	SurpriseCause WakeSource // surprise_cause: equals Wake.Source
}

// Tokens counts model tokens; both counts are integers ≥ 0.
type Tokens struct {
	Fresh  int64 // fresh
	Reused int64 // reused
}

// maxTokens is the largest count a receipt can carry: JavaScript's
// Number.MAX_SAFE_INTEGER, above which a double no longer holds every
// integer.
const maxTokens = 1<<53 - 1

// UnsignedSig returns the sig of a receipt nobody signed, as the reference
// writes it: prose has no signer yet.
func UnsignedSig() map[string]any {
	return map[string]any{"scheme": "none", "null_reason": "no-signer-adapter-configured"}
}

// The exact key sets, sorted.
var (
	receiptKeys = []string{"content_hash", "contract_fingerprint", "cost", "fingerprints", "hash_algorithm",
		"input_fingerprints", "node", "prev", "schema", "semantic_diff", "sig", "status", "wake"}
	wakeKeys   = []string{"refs", "source"}
	costKeys   = []string{"model", "provider", "surprise_cause", "tokens"}
	tokensKeys = []string{"fresh", "reused"}
)

// Parse reads one receipt from JSON. It is strict: the bytes must be
// canonically decodable JSON (see canon.Decode), the key set must be exactly
// the reference one at every level (a missing or unknown key is an error
// naming it), every value must have its type, token counts must be integers
// from 0 to 2^53-1, and schema must be Schema. Values are not otherwise
// judged here: see CheckBasic and CheckShape.
func Parse(data []byte) (*Receipt, error) {
	if r, ok := parseDirect(data); ok {
		return r, nil
	}
	v, err := canon.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("receipt: %w", err)
	}
	return FromValue(v)
}

// FromValue is Parse for a value already in canon's value model, such as
// one element of a decoded receipts.json array.
func FromValue(v any) (*Receipt, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("receipt: want a JSON object, found %s", kind(v))
	}
	if err := checkKeys(m, "", receiptKeys); err != nil {
		return nil, err
	}
	var r Receipt
	var err error
	str := func(m map[string]any, key, path string) string {
		if err != nil {
			return ""
		}
		s, ok := m[key].(string)
		if !ok {
			err = typeError(path, "a string", m[key])
		}
		return s
	}
	r.Schema = str(m, "schema", "schema")
	if err == nil && r.Schema != Schema {
		return nil, fmt.Errorf("receipt: schema %q is not %q (written by a newer or different tool; refusing to read it)", r.Schema, Schema)
	}
	r.HashAlgorithm = canon.Algorithm(str(m, "hash_algorithm", "hash_algorithm"))
	r.ContentHash = str(m, "content_hash", "content_hash")
	r.Node = str(m, "node", "node")
	r.ContractFingerprint = str(m, "contract_fingerprint", "contract_fingerprint")
	r.Status = Status(str(m, "status", "status"))
	if err != nil {
		return nil, err
	}

	wake, err := object(m["wake"], "wake", wakeKeys)
	if err != nil {
		return nil, err
	}
	r.Wake.Source = WakeSource(str(wake, "source", "wake.source"))
	if err != nil {
		return nil, err
	}
	if r.Wake.Refs, err = stringList(wake["refs"], "wake.refs"); err != nil {
		return nil, err
	}
	if r.InputFingerprints, err = stringList(m["input_fingerprints"], "input_fingerprints"); err != nil {
		return nil, err
	}

	fps, err := object(m["fingerprints"], "fingerprints", nil)
	if err != nil {
		return nil, err
	}
	r.Fingerprints = make(map[string]string, len(fps))
	for k, v := range fps {
		s, ok := v.(string)
		if !ok {
			return nil, typeError("fingerprints."+k, "a string", v)
		}
		r.Fingerprints[k] = s
	}

	if r.SemanticDiff, err = object(m["semantic_diff"], "semantic_diff", nil); err != nil {
		return nil, err
	}
	if r.Sig, err = object(m["sig"], "sig", nil); err != nil {
		return nil, err
	}

	switch p := m["prev"].(type) {
	case nil:
	case string:
		r.Prev = &p
	default:
		return nil, typeError("prev", "a string or null", p)
	}

	cost, err := object(m["cost"], "cost", costKeys)
	if err != nil {
		return nil, err
	}
	r.Cost.Provider = str(cost, "provider", "cost.provider")
	r.Cost.Model = str(cost, "model", "cost.model")
	r.Cost.SurpriseCause = WakeSource(str(cost, "surprise_cause", "cost.surprise_cause"))
	if err != nil {
		return nil, err
	}
	tokens, err := object(cost["tokens"], "cost.tokens", tokensKeys)
	if err != nil {
		return nil, err
	}
	if r.Cost.Tokens.Fresh, err = count(tokens["fresh"], "cost.tokens.fresh"); err != nil {
		return nil, err
	}
	if r.Cost.Tokens.Reused, err = count(tokens["reused"], "cost.tokens.reused"); err != nil {
		return nil, err
	}
	return &r, nil
}

// ToValue returns the receipt in canon's value model, with every key. Its
// canonical JSON equals that of the object the receipt was parsed from. The
// SemanticDiff and Sig maps are shared, not copied. Nil slices and maps
// become empty arrays and objects.
func (r *Receipt) ToValue() map[string]any {
	var prev any
	if r.Prev != nil {
		prev = *r.Prev
	}
	fps := make(map[string]any, len(r.Fingerprints))
	for k, v := range r.Fingerprints {
		fps[k] = v
	}
	return map[string]any{
		"schema":               r.Schema,
		"hash_algorithm":       string(r.HashAlgorithm),
		"content_hash":         r.ContentHash,
		"node":                 r.Node,
		"contract_fingerprint": r.ContractFingerprint,
		"wake": map[string]any{
			"source": string(r.Wake.Source),
			"refs":   anySlice(r.Wake.Refs),
		},
		"input_fingerprints": anySlice(r.InputFingerprints),
		"fingerprints":       fps,
		"semantic_diff":      orEmpty(r.SemanticDiff),
		"prev":               prev,
		"status":             string(r.Status),
		"cost": map[string]any{
			"provider":       r.Cost.Provider,
			"model":          r.Cost.Model,
			"surprise_cause": string(r.Cost.SurpriseCause),
			"tokens": map[string]any{
				"fresh":  float64(r.Cost.Tokens.Fresh),
				"reused": float64(r.Cost.Tokens.Reused),
			},
		},
		"sig": orEmpty(r.Sig),
	}
}

// Canonical returns the canonical JSON of the whole receipt, content_hash
// included.
func (r *Receipt) Canonical() ([]byte, error) {
	b, err := r.appendCanonical(make([]byte, 0, 1024), true)
	if err != nil {
		return nil, fmt.Errorf("receipt of node %q: %w", r.Node, err)
	}
	return b, nil
}

// ComputeContentHash returns the token, in the receipt's hash_algorithm, of
// the canonical JSON of every key but content_hash. It does not look at the
// recorded ContentHash.
func (r *Receipt) ComputeContentHash() (string, error) {
	a, err := r.algorithm()
	if err != nil {
		return "", err
	}
	b, err := r.appendCanonical(make([]byte, 0, 1024), false)
	if err != nil {
		return "", fmt.Errorf("receipt of node %q: %w", r.Node, err)
	}
	return a.Token(b), nil
}

// appendCanonical appends the receipt's canonical JSON — the bytes
// canon.Marshal(r.ToValue()) gives, without building that value — with or
// without content_hash. The keys are written in canonical order, which for
// these ASCII names is byte order.
func (r *Receipt) appendCanonical(dst []byte, withHash bool) ([]byte, error) {
	var err error
	str := func(key, v string) {
		if err == nil {
			dst = append(append(dst, key...), ':')
			dst, err = canon.AppendMarshal(dst, v)
		}
	}
	val := func(key string, v any) {
		if err == nil {
			dst = append(append(dst, key...), ':')
			dst, err = canon.AppendMarshal(dst, v)
		}
	}
	dst = append(dst, '{')
	if withHash {
		str(`"content_hash"`, r.ContentHash)
		dst = append(dst, ',')
	}
	str(`"contract_fingerprint"`, r.ContractFingerprint)
	dst = append(dst, `,"cost":{`...)
	str(`"model"`, r.Cost.Model)
	dst = append(dst, ',')
	str(`"provider"`, r.Cost.Provider)
	dst = append(dst, ',')
	str(`"surprise_cause"`, string(r.Cost.SurpriseCause))
	dst = append(dst, `,"tokens":{`...)
	val(`"fresh"`, float64(r.Cost.Tokens.Fresh))
	dst = append(dst, ',')
	val(`"reused"`, float64(r.Cost.Tokens.Reused))
	dst = append(dst, "}},"...)
	val(`"fingerprints"`, r.Fingerprints)
	dst = append(dst, ',')
	str(`"hash_algorithm"`, string(r.HashAlgorithm))
	dst = append(dst, ',')
	val(`"input_fingerprints"`, r.InputFingerprints)
	dst = append(dst, ',')
	str(`"node"`, r.Node)
	dst = append(dst, ',')
	if r.Prev != nil {
		str(`"prev"`, *r.Prev)
	} else {
		dst = append(dst, `"prev":null`...)
	}
	dst = append(dst, ',')
	str(`"schema"`, r.Schema)
	dst = append(dst, ',')
	val(`"semantic_diff"`, orEmpty(r.SemanticDiff))
	dst = append(dst, ',')
	val(`"sig"`, orEmpty(r.Sig))
	dst = append(dst, ',')
	str(`"status"`, string(r.Status))
	dst = append(dst, `,"wake":{`...)
	val(`"refs"`, r.Wake.Refs)
	dst = append(dst, ',')
	str(`"source"`, string(r.Wake.Source))
	dst = append(dst, "}}"...)
	return dst, err
}

// Seal sets ContentHash to ComputeContentHash. Seal a receipt after its last
// change and before anything refers to it.
func (r *Receipt) Seal() error {
	h, err := r.ComputeContentHash()
	if err != nil {
		return err
	}
	r.ContentHash = h
	return nil
}

// algorithm returns the receipt's hash algorithm. Unlike canon.ParseAlgorithm
// it refuses the empty name: a receipt always says which hash it uses.
func (r *Receipt) algorithm() (canon.Algorithm, error) {
	if r.HashAlgorithm == "" {
		return "", fmt.Errorf("receipt of node %q: hash_algorithm is empty (want \"blake3\" or \"sha256\")", r.Node)
	}
	a, err := canon.ParseAlgorithm(string(r.HashAlgorithm))
	if err != nil {
		return "", fmt.Errorf("receipt of node %q: %w", r.Node, err)
	}
	return a, nil
}

// checkKeys reports the first missing key, then the first unknown key, of
// object m against the exact sorted key set want. path names m in messages
// ("" for the receipt itself).
func checkKeys(m map[string]any, path string, want []string) error {
	for _, k := range want {
		if _, ok := m[k]; !ok {
			return fmt.Errorf("receipt: missing key %q", join(path, k))
		}
	}
	if len(m) == len(want) {
		return nil
	}
	var unknown []string
	for k := range m {
		if _, found := slices.BinarySearch(want, k); !found {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	where := "a receipt"
	if path != "" {
		where = path
	}
	return fmt.Errorf("receipt: unknown key %q (%s has exactly the keys %s)", join(path, unknown[0]), where, strings.Join(want, ", "))
}

// object returns v as an object, checking its key set when keys is not nil.
func object(v any, path string, keys []string) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, typeError(path, "an object", v)
	}
	if keys != nil {
		if err := checkKeys(m, path, keys); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// stringList returns v as an array of strings.
func stringList(v any, path string) ([]string, error) {
	a, ok := v.([]any)
	if !ok {
		return nil, typeError(path, "an array of strings", v)
	}
	out := make([]string, len(a))
	for i, e := range a {
		s, ok := e.(string)
		if !ok {
			return nil, typeError(fmt.Sprintf("%s[%d]", path, i), "a string", e)
		}
		out[i] = s
	}
	return out, nil
}

// count returns v as a token count: an integer from 0 to 2^53-1.
func count(v any, path string) (int64, error) {
	f, ok := v.(float64)
	if !ok {
		return 0, typeError(path, "an integer", v)
	}
	if f != math.Trunc(f) || f < 0 || f > maxTokens {
		return 0, fmt.Errorf("receipt: %s is %v; want an integer from 0 to 2^53-1", path, f)
	}
	return int64(f), nil
}

func typeError(path, want string, got any) error {
	return fmt.Errorf("receipt: %s must be %s, found %s", path, want, kind(got))
}

// kind names the JSON type of a value-model value.
func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("a Go %T", v)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func anySlice(s []string) []any {
	out := make([]any, len(s))
	for i, e := range s {
		out[i] = e
	}
	return out
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}
