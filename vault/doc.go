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
// Crash safety. Every write goes through one function, Vault.land, which
// takes a prepared write (new objects, the branch and ledger ref moves, the
// working-tree changes) and makes it take effect in one order: objects are
// written (loose, or past 100 objects as one pack) and made durable together
// with both refs' lock files; the branch ref moves (its commit carries the
// receipt); the ledger ref moves; the working tree and the git index
// (held under git's index.lock since it was read) are brought along. Refs
// move by git's lock protocol: lock file, fsync, rename, directory fsync. A
// crash between the two ref moves is repaired by the next writer, which
// appends the branch commit's receipt to the ledger: repair only ever rolls
// forward and never removes a receipt. A ledger receipt whose commit is not
// on the branch can only come from a rewrite by hand, and is reported by
// fsck. The working tree and the git index are a view brought in step after
// each commit and repaired on the next command after a crash. A new kind of
// writer (one that commits files to a node, say) builds its trees and
// receipt with an objectBatch, reads the index with readIndexRepaired,
// checks hand edits with checkClean, and calls land; it never moves a ref
// itself. docs/vault-format.md states the same order.
//
// Concurrency. One writer at a time holds the file lock .prose/lock; readers
// never lock and only ever read refs that point at complete, durable objects.
// All go-git access inside one process goes through Vault.mu.
//
// The package never parses contracts and never decides what a world-model
// means; fingerprints come from package published.
package vault
