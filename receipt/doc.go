// Package receipt owns the receipt record: its exact key set, its canonical
// content hash, the shape rules for receipts prose writes, per-node chain
// verification, and reading the reference reactor's receipts.json ledgers.
//
// A receipt says what one wake of one node did (rendered, skipped or failed),
// which fingerprints it published, and which receipt of the same node came
// before it (prev). Its content_hash is the token, in its hash_algorithm, of
// the canonical JSON of every other key, so receipts form one hash chain per
// node.
//
// Two levels of checks exist because the reference corpus is looser than
// what prose writes: CheckBasic holds for every well-formed receipt,
// reference ledgers included; CheckShape adds the rules prose follows when it
// writes a receipt.
//
// The package never reads or writes a vault; the vault package stores
// receipts.
package receipt
