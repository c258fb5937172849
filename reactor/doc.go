// Package reactor is the OpenProse runtime over the vault: the dumb
// reconciler that keeps world-models current.
//
// A Graph holds the mounted nodes (responsibilities and gateways) and the
// edges Forme wired between them. A Reconciler drains wakes over it:
//
//   - the memo key is exactly (contract_fingerprint, input_fingerprints in
//     edge order), each input being the producer's last receipt token for
//     the edge's facet, else its @atomic token, else ColdStart;
//   - a wake whose memo key equals the node's last receipt (and that
//     receipt did not fail) records a skipped receipt and spawns nothing;
//   - otherwise the node's Renderer runs against a copy of its inputs and
//     a directory seeded with its current world-model; the output is
//     published through the vault's one write path (vault.Publish), which
//     decides rendered (a branch commit) or skipped (output unchanged);
//   - a rendered receipt wakes each subscriber of a moved facet once;
//   - wakes drain by height (0 without producers, else 1 + the highest
//     producer), ties by id, so a diamond join renders once, against
//     settled inputs;
//   - a failure (an error, a non-zero exit, an __error.md, a timeout,
//     edited inputs, an empty output where the node had state) publishes
//     nothing, keeps the prior truth, records a failed receipt with its
//     redacted reason, and wakes nobody;
//   - a wake that arrives while its node renders coalesces: the latest is
//     kept and the memo path runs once more after the render;
//   - nodes downstream of a wake that no producer propagated to are
//     reported pruned, with why;
//   - a self-driven node is due when its cadence has passed since its last
//     receipt (Now is injectable), and a lapsed valid_until in its
//     world-model makes it render even when its memo key is unmoved.
//
// Every render, skip and failure is a receipt in the vault (Store). See
// docs/runtime.md.
package reactor
