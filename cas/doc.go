// Package cas is prose's content-addressed object store: immutable blobs
// named by the BLAKE3 hash of their content, kept under a vault's .prose
// directory.
//
// # What it owns
//
// The objects directory and everything in it: writing objects durably,
// reading them back with verification, listing, re-hashing (Verify) and
// garbage collection (GC).
//
// # What it never does
//
// It never knows what an object means. Reachability comes from the caller
// (the roots and the children function given to GC). It never modifies an
// object in place, and reads never take locks.
//
// # On-disk format
//
//	<root>/objects/<2 hex>/<62 hex>   one object: exactly its content, mode 0444
//	<root>/objects/tmp/.tmp-put-*     objects being written; leftovers of a crash
//	<root>/lock                       the vault's writer lock (see LockPath)
//	<root>/cas.lock                   shared by every Put, exclusive for GC
//
// An object's name is the lowercase hex BLAKE3-256 hash of its content, split
// after two digits as git does; the ID's textual form is "blake3:<64 hex>".
// There is no header, compression or index: an object file can be checked
// with any BLAKE3 tool (b3sum).
//
// # Concurrency and crashes
//
// Put writes to a temporary file while hashing, fsyncs it, renames it into
// place and fsyncs the shard directory (see internal/durable), so readers
// never see a partial object and a crash leaves either the whole object or
// nothing but a temporary file, which Open removes once it is old. Two
// writers of the same content in any processes both succeed and leave one
// object. Get re-hashes what it reads and reports ErrCorrupt at the end of a
// damaged object.
//
// GC deletes every object not reachable from its roots. Every Put holds a
// shared lock on cas.lock from before it looks for an existing copy until
// its object is in place, and GC holds it exclusively for its whole run, so
// an acknowledged Put of an object a root names always survives: the Put
// finished before GC marked, or waited until GC had swept. GC also holds
// the writer lock at LockPath for its whole run, and a writer whose new
// objects are not yet named by any root — the vault is one — holds the same
// lock (internal/lock) from its first Put until the new objects are
// reachable from a root.
package cas
