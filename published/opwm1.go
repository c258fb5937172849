package published

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// FrameMagic opens every OPWM1 frame.
const FrameMagic = "OPWM1"

// File is one file of a world-model artifact: a normalized path (see
// NormalizePath) and its bytes.
type File struct {
	Path    string
	Content []byte
}

// EncodeFrame returns the reference OPWM1 frame of an artifact: the bytes
// "OPWM1", the file count as a little-endian uint32, then for each file in
// UTF-8 byte order of its path the path length (uint32 LE), the path, the
// content length (uint32 LE) and the content. The order of files does not
// matter; files is not modified. Paths must already be in normal form, each
// at most once, and every length must fit in 32 bits.
//
// The frame checks only what the format needs; case collisions between paths
// are for CheckCollisions.
func EncodeFrame(files []File) ([]byte, error) {
	sorted, size, err := sortFrameFiles(files)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.Grow(size)
	writeFrame(&buf, sorted)
	return buf.Bytes(), nil
}

// FrameAddress returns the reference version address of an artifact:
// "sha256:" and the lower-case hex SHA-256 of its OPWM1 frame. The empty
// artifact's address is
// sha256:e59ed80133c208bf8e8264c96c5bbe0d36aa073fb969671ec6b752bffb7b08e6.
func FrameAddress(files []File) (string, error) {
	sorted, _, err := sortFrameFiles(files)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	writeFrame(h, sorted)
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// DecodeFrame parses an OPWM1 frame. It is strict, so that a frame it accepts
// re-encodes to the same bytes: the magic must match, every length must fit
// in what is left, paths must be valid UTF-8 in normal form and in strictly
// increasing byte order, and nothing may follow the last file. Hostile input
// yields an error, never a panic, and allocations never exceed the length of
// b. The returned contents are copies; b may be reused.
func DecodeFrame(b []byte) ([]File, error) {
	if len(b) < len(FrameMagic)+4 || string(b[:len(FrameMagic)]) != FrameMagic {
		return nil, fmt.Errorf("OPWM1 frame: does not start with %q and a file count", FrameMagic)
	}
	off := len(FrameMagic)
	count := binary.LittleEndian.Uint32(b[off:])
	off += 4
	// Every file takes at least 8 bytes of lengths, which bounds the count
	// a hostile header can make us allocate for.
	if uint64(count) > uint64(len(b)-off)/8 {
		return nil, fmt.Errorf("OPWM1 frame: header claims %d files but only %d bytes follow", count, len(b)-off)
	}
	files := make([]File, 0, count)
	readChunk := func(i uint32, what string) ([]byte, error) {
		if len(b)-off < 4 {
			return nil, fmt.Errorf("OPWM1 frame: file %d: %s length cut off at byte %d", i, what, off)
		}
		n := binary.LittleEndian.Uint32(b[off:])
		off += 4
		if uint64(n) > uint64(len(b)-off) {
			return nil, fmt.Errorf("OPWM1 frame: file %d: %s length %d runs past the end (%d bytes left)", i, what, n, len(b)-off)
		}
		chunk := b[off : off+int(n)]
		off += int(n)
		return chunk, nil
	}
	for i := range count {
		p, err := readChunk(i, "path")
		if err != nil {
			return nil, err
		}
		path := string(p)
		if !utf8.ValidString(path) {
			return nil, fmt.Errorf("OPWM1 frame: file %d: path %q is not valid UTF-8", i, path)
		}
		if err := checkNormal(path); err != nil {
			return nil, fmt.Errorf("OPWM1 frame: file %d: %w", i, err)
		}
		if i > 0 && files[i-1].Path >= path {
			return nil, fmt.Errorf("OPWM1 frame: file %d: path %q does not sort after %q (paths must be unique and in UTF-8 byte order)", i, path, files[i-1].Path)
		}
		c, err := readChunk(i, "content")
		if err != nil {
			return nil, err
		}
		files = append(files, File{Path: path, Content: bytes.Clone(c)})
	}
	if off != len(b) {
		return nil, fmt.Errorf("OPWM1 frame: %d unexpected bytes after the last file", len(b)-off)
	}
	return files, nil
}

// checkNormal reports a path that is not already in normal form.
func checkNormal(p string) error {
	n, err := NormalizePath(p)
	if err != nil {
		return err
	}
	if n != p {
		return fmt.Errorf("path %q is not in normal form (want %q)", p, n)
	}
	return nil
}

// sortFrameFiles validates files and returns them in frame order, with the
// frame's size in bytes.
func sortFrameFiles(files []File) ([]File, int, error) {
	if uint64(len(files)) > math.MaxUint32 {
		return nil, 0, fmt.Errorf("OPWM1 frame: %d files do not fit a 32-bit count", len(files))
	}
	size := len(FrameMagic) + 4
	for _, f := range files {
		if err := checkNormal(f.Path); err != nil {
			return nil, 0, fmt.Errorf("OPWM1 frame: %w", err)
		}
		if uint64(len(f.Path)) > math.MaxUint32 || uint64(len(f.Content)) > math.MaxUint32 {
			return nil, 0, fmt.Errorf("OPWM1 frame: file %q: path or content does not fit a 32-bit length (%d content bytes)", f.Path, len(f.Content))
		}
		size += 8 + len(f.Path) + len(f.Content)
	}
	sorted := slices.Clone(files)
	slices.SortFunc(sorted, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	for i := 1; i < len(sorted); i++ {
		if sorted[i].Path == sorted[i-1].Path {
			return nil, 0, fmt.Errorf("OPWM1 frame: path %q appears twice", sorted[i].Path)
		}
	}
	return sorted, size, nil
}

// writeFrame writes the frame of files, already validated and sorted.
// Writes to a bytes.Buffer or a hash never fail, so errors are not returned.
func writeFrame(w io.Writer, files []File) {
	// One scratch buffer carries each file's lengths and path, so hashing a
	// frame allocates nothing per file.
	scratch := make([]byte, 0, 256)
	scratch = append(scratch, FrameMagic...)
	scratch = binary.LittleEndian.AppendUint32(scratch, uint32(len(files)))
	w.Write(scratch)
	for _, f := range files {
		scratch = binary.LittleEndian.AppendUint32(scratch[:0], uint32(len(f.Path)))
		scratch = append(scratch, f.Path...)
		scratch = binary.LittleEndian.AppendUint32(scratch, uint32(len(f.Content)))
		w.Write(scratch)
		w.Write(f.Content)
	}
}
