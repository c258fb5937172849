// Package canon owns the bytes that prose hashes: canonical JSON, hash
// algorithms and tokens, canonicalization specs, material reduction, truth
// digests, fingerprint maps and memo keys. It never touches the filesystem.
package canon
