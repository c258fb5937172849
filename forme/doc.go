// Package forme reads OpenProse Contract Markdown (*.prose.md), checks it,
// wires responsibilities into a DAG and builds the compiled manifest.
//
// forme owns parsing, diagnostics, wiring, the manifest bytes and
// responsibility ids. It never writes a vault, never runs, installs or
// contacts a declared skill or tool (presence checks only), and never calls a
// model: every wiring decision is deterministic and recorded.
//
// # Use
//
//	p, err := forme.LoadProject([]string{"src"}, forme.Options{Hash: canon.BLAKE3})
//	if err != nil { … }                // a path that does not exist
//	m, diags := forme.Compile(p)       // also p.Diagnostics()
//	for _, d := range diags { fmt.Println(d) } // file:line:col: severity: code: message
//	if !forme.HasErrors(diags) {
//		data, _ := m.JSON()            // write dist/manifest.next.json
//	}
//	dot, _ := forme.RenderGraph(m, "dot") // works with errors too
//
// ParseSources builds a project from bytes; ParseFile parses one file.
// NewID, IDGenerator, AddMissingID and InsertID mint and insert
// responsibility ids (UUIDv7 as 26 uppercase Crockford base32 characters).
// Options.Env, SkillRoots and MCPServers let callers and tests control the
// host lookups; nothing reads the real HOME or PATH when Env is set.
//
// # Reading a file
//
// Frontmatter (YAML) gives name, kind, id and subject. Sections (###) before
// the first ## belong to the file entry; each ## opens an inline node whose
// kind is read from its sections. Section headings match case-insensitively;
// "### Continuity: external-driven" carries its value in the heading; a
// repeated heading is read together with the first. #### under ### Maintains
// is a facet, under ### Requires a facet-need, elsewhere prose. Unknown
// sections are kept as documentation; retired kinds and sections are read
// as their replacements with a warning. Contract items are bullets in the
// style "- `name`: description" (also "- `name` (note): …", typed caller
// inputs "- `x`: run — …" and "run[]", and "- each x has: …"
// postconditions).
//
// # Wiring
//
// Nodes are responsibilities and gateways. Each ### Requires need is wired
// by the first rule that matches (see docs/diagnostics.md §Wiring): an
// explicit producer.facet; the need's name equal to a facet; facet names
// mentioned, restricted to the producer the need names; a named producer's
// only facet or @atomic; normalized names. Several producers without a
// declared fan-in ("all …", "every …", "(fan-in)") are an ambiguity error,
// none is an unsatisfied error: Forme never guesses. A gateway's ### Emits
// draws gateway → target at @atomic. Edges are sorted by (subscriber,
// producer, facet); a cycle is an error naming it.
//
// # Manifest
//
// Manifest is ir-v0's compile-phase IR ({kind, version: 2, sources, topology,
// canonicalizers, postconditions, contract_fingerprints, diagnostics}) with
// documented additions that readers ignoring unknown keys accept:
//
//   - diagnostics carry code, line and column beside severity, message and
//     sourcePath;
//   - canonicalizers carry spec, the node's canonicalization spec in
//     canon.Spec's JSON shape, lowered from the material/immaterial prose of
//     ### Maintains (top-level fields at the root, a facet's fields under the
//     facet's subtree, each facet covering its own subtree);
//   - postconditions carry conditions, the text of each postcondition;
//   - ids maps each node to its id (its name when it has none);
//   - wiring records, per need, the rule that decided and the producers;
//   - requirements lists declared skills and tools and who needs them;
//   - patterns, instances (expanded pattern instances: slots bound, config
//     defaults filled, nested instances named <parent>.<slot>) and tests;
//   - ingress: each gateway's routes (### Receives "POST /path"), schedule
//     (### Schedule, cron and time zone when written as items) and the
//     nodes its ### Emits wakes.
//
// Contract fingerprints hash ContractImage with the vault's algorithm.
// Output is deterministic: the same sources give the same bytes whatever
// the file order, scheduling or working directory (Diagnostic.File is the
// path as the caller gave it, but messages name other files by their
// root-relative path, as the manifest does).
package forme
