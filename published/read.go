package published

import (
	"context"
	"crypto/sha1"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"syscall"
	"unicode/utf8"

	"github.com/zeebo/blake3"

	"github.com/prose-store/prose/canon"
)

// Memory stays bounded whatever a world-model holds (docs/limits.md):
//
//   - a file that becomes a blake3 token (not valid UTF-8) is streamed
//     through the hashes in chunks, whatever its size;
//   - a file whose content the structured truth holds (JSON and YAML
//     values, text) is read whole and parsed, so its size is bounded:
//     MaxJSONFile, MaxYAMLFile, MaxTextFile. A larger one is refused with a
//     *SizeError naming the file and the limit. The limits keep the worst
//     case (a file of nothing but empty objects, YAML nodes or NUL bytes,
//     which parse to many times their size) under 256 MB of memory;
//   - a file larger than bigFile is read and fingerprinted alone: no other
//     file is being parsed meanwhile.
const (
	// MaxJSONFile is the largest JSON file a scan parses.
	MaxJSONFile = 2 << 20
	// MaxYAMLFile is the largest YAML file a scan parses.
	MaxYAMLFile = 1 << 20
	// MaxTextFile is the largest text (valid UTF-8) file a scan holds as
	// a string in the structured truth. Binary files have no limit.
	MaxTextFile = 4 << 20
	// bigFile is the size above which a file is read in chunks and
	// parsed by one worker at a time.
	bigFile = 1 << 20
	// chunkSize is the read size when streaming.
	chunkSize = 1 << 20
)

// SizeError reports a file too large for the structured truth to hold.
type SizeError struct {
	Path  string // the file, as the scan names it
	Kind  string // "JSON", "YAML" or "text"
	Size  int64  // bytes, or the bytes read so far when the file grew
	Limit int64
}

// Error names the file, its size and the limit, and what to do.
func (e *SizeError) Error() string {
	return fmt.Sprintf("%s: this %s file holds %s, more than the %s limit for %s files (the structured truth holds its content whole; see docs/limits.md): split it into smaller files, or write it as binary data, which has no limit",
		e.Path, e.Kind, mib(e.Size), mib(e.Limit), e.Kind)
}

func mib(n int64) string {
	if n >= 1<<20 {
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// loaded is a file read by a scan: its hashes, and its structured-truth
// value.
type loaded struct {
	size  int64
	sum   [32]byte
	oid   [20]byte
	value any
	text  bool // value is the file's text (not a token of binary content)
}

// load reads the file f of the walk and computes its hashes and value. The
// file is opened inside the root (never through a symlink leaving it),
// without blocking (a file swapped for a named pipe is refused, never
// waited on), and read in chunks between which ctx is checked. It retries
// once when the file changes size while being read, then gives up.
func (w *walker) load(ctx context.Context, f *walkedFile) (loaded, error) {
	for attempt := 0; ; attempt++ {
		l, err := w.loadOnce(ctx, f)
		if !errors.Is(err, errChanged) || attempt > 0 {
			return l, err
		}
	}
}

var errChanged = errors.New("changed while it was being read; publish again once the render has finished writing")

// parseGate lets a file larger than bigFile be read and fingerprinted
// alone, and smaller ones side by side: memory then holds one large parse
// or a few small ones, never several large ones.
var parseGate sync.RWMutex

// admit waits until a file of size bytes may be parsed and returns the
// function that ends its turn.
func admit(size int64) (done func()) {
	if size > bigFile {
		parseGate.Lock()
		if size <= MaxTextFile && heapInUse() > heapSlack {
			// A large parse is about to start, and the previous one's
			// values are garbage now (this turn is exclusive): collect
			// them first, so two large parses never add up in memory.
			runtime.GC()
		}
		return parseGate.Unlock
	}
	parseGate.RLock()
	return parseGate.RUnlock
}

func (w *walker) loadOnce(ctx context.Context, f *walkedFile) (loaded, error) {
	var l loaded
	w.openRoot.Do(func() { w.fsRoot, w.fsErr = os.OpenRoot(w.root) })
	if w.fsErr != nil {
		return l, w.fsErr
	}
	p := f.path
	if f.link {
		p = f.target
	}
	name := w.abs(f.path)
	file, err := w.fsRoot.OpenFile(filepath.FromSlash(p), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return l, fmt.Errorf("read %s: %w", name, err)
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return l, fmt.Errorf("read %s: %w", name, err)
	}
	if !fi.Mode().IsRegular() {
		return l, fmt.Errorf("%s is no longer a regular file; a world-model holds only regular files, directories and symlinks to files inside the node", name)
	}
	return readValue(ctx, file, name, f.path, fi.Size(), w.view)
}

// ReadValue returns the structured-truth value of the world-model file at
// path p (a slash path; its name decides how the content is read) whose
// content, size bytes, r gives, under the same limits as Scan: JSON beyond
// MaxJSONFile, YAML beyond MaxYAMLFile and text beyond MaxTextFile are a
// *SizeError; binary content of any size is streamed into its blake3 token.
// It stops when ctx is done.
func ReadValue(ctx context.Context, p string, r io.Reader, size int64) (any, error) {
	return ReadValueView(ctx, p, r, size, nil)
}

// ReadValueView is ReadValue through a node's view (nil: the default rule).
func ReadValueView(ctx context.Context, p string, r io.Reader, size int64, view View) (any, error) {
	defer admit(size)()
	l, err := readValue(ctx, r, p, p, size, view)
	if errors.Is(err, errChanged) {
		return nil, fmt.Errorf("%s: the content does not hold the %d bytes announced", p, size)
	}
	return l.value, err
}

// CheckSize returns a *SizeError when data, the content of the world-model
// file at slash path p, is larger than a scan reads for its kind (JSON
// beyond MaxJSONFile, YAML beyond MaxYAMLFile, text beyond MaxTextFile;
// binary content has no limit): what a write commits must scan again.
func CheckSize(p string, data []byte) error {
	size := int64(len(data))
	switch _, kind := fileKey(path.Base(p)); {
	case kind == kindJSON && size > MaxJSONFile:
		return &SizeError{Path: p, Kind: "JSON", Size: size, Limit: MaxJSONFile}
	case kind == kindYAML && size > MaxYAMLFile:
		return &SizeError{Path: p, Kind: "YAML", Size: size, Limit: MaxYAMLFile}
	case kind == kindText && size > MaxTextFile && utf8.Valid(data):
		return &SizeError{Path: p, Kind: "text", Size: size, Limit: MaxTextFile}
	}
	return nil
}

// readValue reads the content of the file at slash path p (named name in
// messages) from r, which must hold size bytes, through the node's view
// when there is one (nil: the default rule).
func readValue(ctx context.Context, r io.Reader, name, p string, size int64, view View) (loaded, error) {
	var l loaded
	_, kind := fileKey(path.Base(p))
	switch kind {
	case kindJSON:
		if size > MaxJSONFile {
			return l, &SizeError{Path: name, Kind: "JSON", Size: size, Limit: MaxJSONFile}
		}
	case kindYAML:
		if size > MaxYAMLFile {
			return l, &SizeError{Path: name, Kind: "YAML", Size: size, Limit: MaxYAMLFile}
		}
	}
	if size <= bigFile || kind != kindText {
		// Read whole: small, or parsed anyway (and bounded above).
		data := make([]byte, size)
		n, err := io.ReadFull(r, data)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
			return l, fmt.Errorf("read %s: %w", name, err)
		}
		if n < len(data) || moreData(r) {
			return l, fmt.Errorf("%s %w", name, errChanged)
		}
		l.size = size
		l.sum = blake3.Sum256(data)
		l.oid = gitBlobID(data)
		if l.value, err = fileValue(view, p, data, &l.sum); err != nil {
			return l, err
		}
		return l, nil
	}
	l, err := stream(ctx, r, name, size)
	if err != nil || view == nil {
		return l, err
	}
	if s, ok := l.value.(string); ok && l.text {
		v, claimed, err := view.Value(p, []byte(s))
		if err != nil {
			return l, fmt.Errorf("%s: %w", name, err)
		}
		if claimed {
			l.value = v
		}
	}
	return l, nil
}

// heapSlack is the heap size below which admit does not collect before a
// large parse: what is there is too little to matter.
const heapSlack = 32 << 20

// heapInUse is the memory the heap's objects take now, garbage included.
func heapInUse() uint64 {
	m := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(m)
	if m[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return m[0].Value.Uint64()
}

// moreData reports whether r has bytes left.
func moreData(r io.Reader) bool {
	var b [1]byte
	n, _ := r.Read(b[:])
	return n > 0
}

// stream reads a large text or binary file in chunks: the hashes see every
// byte, a UTF-8 check decides text from binary, and the bytes are kept only
// while the file may still be text within MaxTextFile.
func stream(ctx context.Context, file io.Reader, name string, size int64) (loaded, error) {
	var l loaded
	b3 := blake3.New()
	sha := sha1.New()
	sha.Write(gitBlobHeader(size))
	hs := io.MultiWriter(b3, sha)
	var keep []byte // the content while it may be text within the limit
	if size <= MaxTextFile {
		keep = make([]byte, 0, size)
	}
	u := utf8Stream{valid: true}
	buf := make([]byte, chunkSize)
	var total int64
	for {
		if err := ctx.Err(); err != nil {
			return l, err
		}
		n, err := file.Read(buf)
		if n > 0 {
			chunk := buf[:n]
			total += int64(n)
			if total > size {
				return l, fmt.Errorf("%s %w", name, errChanged)
			}
			hs.Write(chunk)
			u.write(chunk)
			if keep != nil && u.valid {
				keep = append(keep, chunk...)
			} else {
				keep = nil
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return l, fmt.Errorf("read %s: %w", name, err)
		}
	}
	if total != size {
		return l, fmt.Errorf("%s %w", name, errChanged)
	}
	l.size = size
	b3.Sum(l.sum[:0])
	sha.Sum(l.oid[:0])
	if u.close() {
		if keep == nil {
			return l, &SizeError{Path: name, Kind: "text", Size: size, Limit: MaxTextFile}
		}
		l.value, l.text = string(keep), true
		return l, nil
	}
	l.value = canon.BLAKE3.TokenOf(l.sum[:])
	return l, nil
}

// gitBlobHeader is the header git hashes before a blob's content.
func gitBlobHeader(size int64) []byte {
	return append(strconv.AppendInt([]byte("blob "), size, 10), 0)
}

// utf8Stream checks that a byte stream written in chunks is valid UTF-8,
// carrying a rune cut by a chunk boundary over to the next chunk.
type utf8Stream struct {
	valid bool
	carry [utf8.UTFMax]byte
	nc    int
}

func (u *utf8Stream) write(p []byte) {
	if !u.valid {
		return
	}
	if u.nc > 0 {
		// Complete the cut rune with the first bytes of p.
		need := min(utf8.UTFMax-u.nc, len(p))
		var tmp [2 * utf8.UTFMax]byte
		t := append(append(tmp[:0], u.carry[:u.nc]...), p[:need]...)
		if !utf8.FullRune(t) {
			u.nc = copy(u.carry[:], t)
			return
		}
		r, size := utf8.DecodeRune(t)
		if r == utf8.RuneError && size <= 1 {
			u.valid = false
			return
		}
		p = p[size-u.nc:]
		u.nc = 0
	}
	// Hold back a rune the chunk cuts short.
	end := len(p)
	for i := len(p) - 1; i >= 0 && i >= len(p)-utf8.UTFMax; i-- {
		if utf8.RuneStart(p[i]) {
			if !utf8.FullRune(p[i:]) {
				end = i
			}
			break
		}
	}
	if !utf8.Valid(p[:end]) {
		u.valid = false
		return
	}
	u.nc = copy(u.carry[:], p[end:])
}

// close reports whether the whole stream was valid UTF-8.
func (u *utf8Stream) close() bool {
	return u.valid && u.nc == 0
}
