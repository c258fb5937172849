// Package canon owns the bytes that prose hashes and the rules that decide
// them: canonical JSON, the structured-truth value model, hash algorithms and
// tokens, canonicalization specs, material reduction, truth digests,
// fingerprint maps and memo keys.
//
// canon is pure computation. It never touches the filesystem, the network,
// the clock or the environment: callers read files and hand canon bytes or
// values. That keeps every token reproducible from its inputs alone.
//
// # The value model
//
// Structured truth is a tree of plain Go values, exactly what JSON can say:
// nil, bool, float64, string, []any and map[string]any. Numbers are IEEE
// doubles, as in JavaScript. Decode produces this model from JSON bytes.
// Marshal, Reduce and DigestValue also accept the Go integer types,
// float32, json.Number, []string and map[string]string as conveniences and
// treat them as the equivalent model values.
//
// # Canonical JSON
//
// Marshal prints what JavaScript's JSON.stringify prints for the same value
// after sorting every object's keys, so tokens match the reference reactor's:
//
//   - Object keys are sorted by UTF-16 code units, not bytes or code points:
//     U+1F600 sorts before U+FFFF because its leading surrogate, 0xD83D, is
//     below 0xFFFF (see CompareKeys). Arrays keep their order. There is no
//     whitespace.
//   - Strings escape only '"', '\' and the controls below U+0020: \b \f \n \r
//     \t in short form, the others as \u00xx in lowercase hex. '<', '>', '&',
//     '/', DEL and U+2028/U+2029 are written raw. (encoding/json escapes some
//     of these, which is why canon has its own encoder.)
//   - Numbers print as Number.prototype.toString does: the shortest digits
//     that read back as the same double; plain notation for magnitudes in
//     [1e-6, 1e21), so integers have no ".0" and 1e20 prints as
//     100000000000000000000; exponent notation otherwise, with an explicit
//     sign (1e+21, 1e-7, 1.5e-7). -0 prints as 0.
//   - NaN, infinities, strings that are not valid UTF-8 and (therefore) lone
//     surrogates are errors, never silently replaced.
//
// Decode is strict: one JSON value and nothing after it but whitespace,
// valid UTF-8 only, no \u escape of a lone surrogate, no duplicate keys in an
// object, no number beyond the double range (JSON.parse would make it
// Infinity). Numbers round to the nearest double exactly as JSON.parse rounds
// them, so "9007199254740993" decodes to 9007199254740992.
//
// # Tokens
//
// A token names a hash: the algorithm, a colon and 64 lowercase hex digits,
// as in "blake3:af13…". BLAKE3 is the default (the zero Algorithm means
// BLAKE3); SHA-256 exists to verify reference artifacts. Fingerprint tokens
// are opaque to everything but canon: compare them only for equality.
//
// # Paths
//
// A Path addresses a value in structured truth by the object keys that lead
// to it. Its text form is dotted, "meta.title"; inside a key, "\." is a
// literal dot and "\\" a backslash, so the file "notes.md" in the directory
// "docs" is "docs.notes\.md". The empty string is the root. Array elements
// have no segment of their own: an element sits at its array's path, and the
// keys of an object inside an array continue that path ("items.id" is the
// id of every record in the items array).
//
// # Canonicalization specs
//
// A Spec (ParseSpec reads the reference JSON or YAML shape) lists rules, one
// per path, and the node's facets. ParseSpec refuses unknown keys, a field
// without "material", two rules for one path, a collection other than
// "ordered" or "set", a quantum that is not positive, a path that does not
// parse, and a facet that is named "@atomic", declared twice or has no paths. Spec.Reduce turns structured truth into
// material truth by these rules:
//
//   - Materiality. The nearest rule decides whether a value is material: the
//     rule for its exact path, else the rule of its longest ancestor path,
//     else default_material (true when absent). A nil *Spec makes everything
//     material. The root is always kept, whatever the rules say (the reference
//     drops it under default_material:false, so every truth there has the same
//     fingerprint; canon does not copy that bug).
//   - Descending. An immaterial object is still searched: a rule below it may
//     make a descendant material (with default_material:false, the fields
//     rules mark material are exactly what is kept). Immaterial scalars,
//     booleans and nulls are dropped.
//   - Dropped records. An object that had children, all of them dropped, is
//     dropped too, unless the nearest rule for its own path is a rule (not the
//     default) that marks it material; then it is kept as {}. An object that
//     was empty to begin with is kept when material. Spec.Materiality exposes
//     the rule decision so callers that assemble truth from many files can
//     apply the same rule to directories.
//   - Arrays. Elements are reduced at the array's path; dropped elements leave
//     the array. A material array is kept even when it ends up empty; an
//     immaterial array is kept only when some element was kept (a material
//     field inside its records).
//   - Text. Every kept string is put in Unicode NFC. Then, per the nearest
//     rule that has a text setting (rules without one inherit from their
//     ancestors): with case_insensitive, the string is case folded (full
//     Unicode folding, so "STRASSE" and "straße" compare equal; NFC again
//     afterwards); with collapse_whitespace (default true, and the behaviour
//     for strings no text rule covers), each run of whitespace becomes one
//     space and the ends are trimmed. Whitespace is JavaScript's \s: tab, LF,
//     VT, FF, CR, space, U+00A0, U+1680, U+2000–U+200A, U+2028, U+2029,
//     U+202F, U+205F, U+3000 and U+FEFF. Object keys are never normalized:
//     they are addresses.
//   - Numbers. Per the nearest rule with a number setting (inherited like
//     text), a number is rounded to the nearest multiple of quantum, halves
//     away from zero. When 1/quantum is a whole number the multiple is
//     computed by division, so a quantum of 0.1 yields 0.3, not
//     0.30000000000000004. -0 becomes 0.
//   - Collections. "set" applies to arrays exactly at the rule's path (and so
//     to arrays nested directly in them, which share the path), not to arrays
//     further down: a set of records does not turn an ordered list inside
//     each record into a set. A set's reduced elements are sorted by their
//     canonical JSON bytes; duplicates are kept, so ["a","a"] and ["a"] stay
//     different. "ordered", the default, keeps the order.
//
// Spec.Hash identifies a spec for caches: equal hashes mean every truth
// reduces and fingerprints alike.
//
// # Digests and fingerprints
//
// A truth digest is a Merkle digest (DigestValue): an object hashes "o" and,
// for each key in UTF-16 order, uvarint(len(key)), the key and the child's
// digest; any other value hashes "v" and its canonical JSON. A directory and
// a JSON object are both objects, so the same truth digests alike however it
// is split into files, and a change to one file re-hashes only it and its
// ancestors (DigestObject combines already computed child digests).
//
// Fingerprints maps "@atomic" to the token of the digest of the whole reduced
// truth, and each declared facet to the token of the digest of Project of the
// reduced truth onto the facet's paths. ColdStart is the single token for
// "nothing published yet"; it is not a digest, so it differs from the token
// of an empty material truth. MemoKey hashes the canonical JSON of a render's
// contract fingerprint and its input fingerprints in edge order.
package canon
