// Package durable makes file writes crash-safe.
//
// A write never modifies its target in place. The new content goes to a
// temporary file named ".tmp-<base>-<random>" in the target's directory (or,
// with CreateTemp, in a directory of the caller's choice on the same file
// system, the target being named at commit). The file is written, fsynced
// and closed, then renamed over the target; finally the directory is fsynced
// so the rename itself survives a power loss. After a crash at any instant
// the target holds either its old content or its new content, never a mix,
// and at worst a temporary file is left behind, which CleanTemps removes. On
// Linux a large write also starts writeback every 8 MiB (sync_file_range), so
// the final fsync has little left to do.
//
// The package owns the mechanics of durability and nothing else: it never
// decides what is written, where, or when.
//
// # Fault injection
//
// Tests in other packages simulate failures (a full disk, an I/O error, a
// crash between two steps) with SetFault. The installed function is consulted
// before each step of every write — StepWrite, StepFsync, StepRename,
// StepDirSync — and when it returns an error the write stops there and
// returns that error. A failure before the rename leaves the target untouched
// and removes the temporary file; a failure at StepDirSync happens after the
// rename, so the target already holds the new content but its durability is
// not guaranteed, exactly as after a real directory-fsync failure.
//
// The hook is process-wide; tests that install one must not run in parallel
// with other tests that write through this package.
package durable
