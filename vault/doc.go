// Package vault is the git-backed home of published world-models.
//
// A vault is an ordinary, non-bare git repository. The branch (main by
// default) holds the state people review: every rendered receipt is a commit
// whose tree carries the node's new world-model under published/<node>/ and
// whose message carries the receipt. Every receipt, rendered or not, is also
// appended to the ledger ref (refs/prose/ledger), a first-parent chain of
// commits whose tree maps each node to its last receipt, so the last receipt
// of a node is one tree lookup and skipped receipts never clutter the branch.
// docs/vault-format.md is the on-disk contract.
//
// Crash safety. Objects are written as loose git objects and fsynced before a
// ref moves; refs move by temp file, fsync, rename and directory fsync. The
// branch ref moves before the ledger ref; a crash between the two is repaired
// by the next writer, which appends the missing receipt to the ledger. The
// working tree and the git index are a view brought in step after each commit
// and repaired on the next command after a crash.
//
// Concurrency. One writer at a time holds the file lock .prose/lock; readers
// never lock and only ever read refs that point at complete, durable objects.
// All go-git access inside one process goes through Vault.mu.
//
// The package never parses contracts and never decides what a world-model
// means; fingerprints come from package published.
package vault
