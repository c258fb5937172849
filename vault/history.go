package vault

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/prose-store/prose/internal/parallel"
	"github.com/prose-store/prose/receipt"
)

// Reading history is a walk down the ledger's first parents. Each ledger
// commit is one loose or packed git object, and reading thousands of them
// one by one through go-git costs tens of microseconds each; so readers keep
// a cache of the raw commit objects they have read, .prose/cache/history,
// and parse the receipts of a stretch of the walk in parallel.
//
// The cache is derived and never trusted: a record is used only when its
// bytes hash (as a git commit object) to the id it is filed under, so a
// damaged or edited cache can only cost a read from git, never change what
// a reader sees. It is append-only, written without fsync (losing it loses
// nothing), and holds commits by id, so a rewritten ledger simply misses.

// historyCacheFile is the cache of raw commit objects under .prose/.
const historyCacheFile = "cache/history"

// historyMagic opens the cache file; a file without it is ignored.
var historyMagic = []byte("prose history cache 1\n")

// Ledger commits are read in chunks before their receipts are parsed
// together: the first chunk is small, so `prose log -n 1` reads little, and
// they grow to a size that keeps every core busy.
const (
	firstHistoryChunk = 16
	maxHistoryChunk   = 256
)

// cacheAfter is how many commits a walk reads straight from git before it
// loads the cache: a short walk never pays for loading it. (A variable
// only so tests can move it.)
var cacheAfter = 64

// historyCache maps commit ids to raw commit bodies (what follows the git
// object header), as read from the cache file, plus what this reader adds.
type historyCache struct {
	path    string
	loaded  bool // recs holds the file, and what is read from git is added
	recs    map[plumbing.Hash][]byte
	pending []byte // records to append
}

// newHistoryCache is the cache of v, not loaded yet: it reads from git and
// records nothing until load.
func (v *Vault) newHistoryCache() *historyCache {
	return &historyCache{path: v.StatePath(filepath.FromSlash(historyCacheFile)), recs: map[plumbing.Hash][]byte{}}
}

// loadHistoryCache returns v's cache, loaded.
func (v *Vault) loadHistoryCache() *historyCache {
	c := v.newHistoryCache()
	c.load()
	return c
}

// load reads the cache file; from then on, commits read from git are added.
func (c *historyCache) load() {
	c.loaded = true
	data, err := os.ReadFile(c.path)
	if err != nil || !bytes.HasPrefix(data, historyMagic) {
		return
	}
	// Records: 20-byte id, 4-byte big-endian length, the body. A torn or
	// damaged tail ends the file as far as readers are concerned. Bodies
	// run to about 2 KB: size the map for that.
	c.recs = make(map[plumbing.Hash][]byte, len(data)/2048)
	for rest := data[len(historyMagic):]; len(rest) >= 24; {
		n := binary.BigEndian.Uint32(rest[20:24])
		if uint64(n) > uint64(len(rest)-24) {
			break
		}
		var h plumbing.Hash
		copy(h[:], rest[:20])
		c.recs[h] = rest[24 : 24+n]
		rest = rest[24+n:]
	}
}

// commitHash is the git object id of a commit with this body.
func commitHash(body []byte) plumbing.Hash {
	d := sha1.New()
	d.Write([]byte("commit " + strconv.Itoa(len(body)) + "\x00"))
	d.Write(body)
	var h plumbing.Hash
	copy(h[:], d.Sum(nil))
	return h
}

// rawCommit returns the body of commit h: from the cache when the cached
// bytes hash to h, else from git (and then it is added to the cache).
func (v *Vault) rawCommit(c *historyCache, h plumbing.Hash) ([]byte, error) {
	if body, ok := c.recs[h]; ok && commitHash(body) == h {
		return body, nil
	}
	return v.gitCommit(c, h)
}

// gitCommit reads the body of commit h from git and adds it to the cache.
func (v *Vault) gitCommit(c *historyCache, h plumbing.Hash) ([]byte, error) {
	var body []byte
	err := v.read(func() error {
		obj, err := v.storage.EncodedObject(plumbing.CommitObject, h)
		if err != nil {
			return err
		}
		r, err := obj.Reader()
		if err != nil {
			return err
		}
		defer r.Close()
		body, err = io.ReadAll(r)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", h, err)
	}
	if !c.loaded {
		return body, nil
	}
	c.recs[h] = body
	var hdr [24]byte
	copy(hdr[:20], h[:])
	binary.BigEndian.PutUint32(hdr[20:], uint32(len(body)))
	c.pending = append(append(c.pending, hdr[:]...), body...)
	return body, nil
}

// flush appends what this reader read from git to the cache file, in one
// write. Failing to write a cache is not an error: the next reader reads git.
func (c *historyCache) flush() {
	if len(c.pending) == 0 {
		return
	}
	_ = os.MkdirAll(filepath.Dir(c.path), 0o755)
	f, err := os.OpenFile(c.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err == nil {
		_, err = f.Write(append(append([]byte{}, historyMagic...), c.pending...))
	} else if errors.Is(err, fs.ErrExist) {
		if f, err = os.OpenFile(c.path, os.O_WRONLY|os.O_APPEND, 0o644); err == nil {
			_, err = f.Write(c.pending)
		}
	}
	if f != nil {
		f.Close()
	}
	c.pending = nil
}

// ledgerCommit is what reading history needs from one commit.
type ledgerCommit struct {
	id     plumbing.Hash
	body   []byte
	cached bool // body came from the history cache, not yet checked against id
	// headerErr is why the body's header did not parse.
	headerErr error
	hash      string // the receipt's recomputed content hash (walks asked for it)
	hashErr   error
	shapeErr  error // CheckShape's verdict (walks asked for hashes)
	parents   []plumbing.Hash
	committer []byte // the committer line
	when      time.Time
	msg       []byte // shares the commit body
	rec       *receipt.Receipt
	ok        bool // the message carries a receipt
	err       error
}

// parseCommitBody reads the parents, committer time and message of a raw
// git commit body.
func parseCommitBody(id plumbing.Hash, body []byte) (ledgerCommit, error) {
	lc := ledgerCommit{id: id}
	rest := body
	for {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			return lc, fmt.Errorf("commit %s: truncated header", id)
		}
		line := rest[:i]
		rest = rest[i+1:]
		if len(line) == 0 {
			break
		}
		switch {
		case bytes.HasPrefix(line, []byte("parent ")):
			h, ok := parseHex(line[len("parent "):])
			if !ok {
				return lc, fmt.Errorf("commit %s: bad parent line", id)
			}
			lc.parents = append(lc.parents, h)
		case bytes.HasPrefix(line, []byte("committer ")):
			lc.committer = line // its time is read with the receipt
		}
	}
	lc.msg = rest
	return lc, nil
}

func parseHex(b []byte) (plumbing.Hash, bool) {
	var h plumbing.Hash
	if len(b) != 40 {
		return h, false
	}
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return h, false // git writes ids in lowercase
		}
	}
	_, err := hex.Decode(h[:], b)
	return h, err == nil
}

// signatureTime reads the "<unix seconds> <±hhmm>" ending a git signature
// line.
func signatureTime(line []byte) time.Time {
	end := bytes.LastIndexByte(line, '>')
	if end < 0 {
		return time.Time{}
	}
	fields := bytes.Fields(line[end+1:])
	if len(fields) < 1 {
		return time.Time{}
	}
	sec, err := strconv.ParseInt(string(fields[0]), 10, 64)
	if err != nil {
		return time.Time{}
	}
	t := time.Unix(sec, 0)
	if len(fields) > 1 && len(fields[1]) == 5 {
		tz := string(fields[1])
		hh, err1 := strconv.Atoi(tz[1:3])
		mm, err2 := strconv.Atoi(tz[3:5])
		if err1 == nil && err2 == nil {
			off := hh*3600 + mm*60
			if tz[0] == '-' {
				off = -off
			}
			t = t.In(time.FixedZone(tz, off))
		}
	}
	return t
}

// walkLedger calls fn for every receipt on the ledger from tip down its
// first parents, newest first. fn's error stops the walk and is returned.
func (v *Vault) walkLedger(tip plumbing.Hash, fn func(Record) error) error {
	cache := v.newHistoryCache()
	defer cache.flush()
	return v.walkLedgerWith(cache, tip, false, fn)
}

// walkLedgerWith is walkLedger reading through cache, which the caller
// flushes: for a caller that reads more commits after the walk. With
// hashes, each record also carries its receipt's recomputed content hash,
// computed on every core with the parsing.
func (v *Vault) walkLedgerWith(cache *historyCache, tip plumbing.Hash, hashes bool, fn func(Record) error) error {
	h := tip
	read, chunk := 0, firstHistoryChunk
	// walk reads the next batch of commits from h down first parents (none
	// when it fails: the records before the failure are delivered first).
	// Each commit names the next, so this part runs on one core; it
	// overlaps with the parsing of the batch before it, on every core.
	walk := func() ([]ledgerCommit, error) {
		if read >= cacheAfter && !cache.loaded {
			cache.load()
		}
		batch := make([]ledgerCommit, 0, chunk)
		for len(batch) < chunk && !h.IsZero() {
			// A cached body is trusted for the walk now and checked
			// against its id when the batch is parsed: a body that
			// fails the check ends the batch there, and the walk reads
			// that commit again from git.
			body, cached := cache.recs[h]
			if !cached {
				var err error
				if body, err = v.gitCommit(cache, h); err != nil {
					return nil, err
				}
			}
			lc, err := parseCommitBody(h, body)
			if err != nil && !cached {
				return nil, err
			}
			lc.body, lc.cached, lc.headerErr = body, cached, err
			batch = append(batch, lc)
			read++
			h = plumbing.ZeroHash
			if err != nil {
				break // a damaged cache record: checked below
			}
			if len(lc.parents) > 0 {
				h = lc.parents[0]
			}
		}
		chunk = min(2*chunk, maxHistoryChunk)
		return batch, nil
	}
	// parse checks and parses a batch on every core, in the background.
	parse := func(batch []ledgerCommit) (bad []bool, done chan struct{}) {
		bad, done = make([]bool, len(batch)), make(chan struct{})
		go func() {
			defer close(done)
			parallel.For(len(batch), func(i int) {
				lc := &batch[i]
				if lc.cached && commitHash(lc.body) != lc.id {
					bad[i] = true
					return
				}
				lc.when = signatureTime(lc.committer)
				lc.rec, lc.ok, lc.err = parseReceiptBytes(lc.msg)
				if hashes && lc.rec != nil {
					lc.hash, lc.hashErr = lc.rec.ComputeContentHash()
					lc.shapeErr = lc.rec.CheckShape()
				}
			})
		}()
		return bad, done
	}
	batch, walkErr := walk()
	for len(batch) > 0 {
		bad, done := parse(batch)
		var next []ledgerCommit
		var nextErr error
		if walkErr == nil {
			next, nextErr = walk()
		}
		<-done
		if i := slices.Index(bad, true); i >= 0 {
			// The walk went on from a damaged cache record: drop what
			// it read after it and read that commit from git.
			delete(cache.recs, batch[i].id)
			h = batch[i].id
			batch = batch[:i]
			next, nextErr = nil, nil
		}
		for _, lc := range batch {
			if lc.headerErr != nil {
				return lc.headerErr // the commit in git is damaged
			}
			if lc.err != nil {
				return fmt.Errorf("ledger commit %s: %w", lc.id, lc.err)
			}
			if !lc.ok && isLedgerMerge(lc.parents, lc.msg) {
				// A merged ledger is a graph: walk the rest as one.
				return v.walkLedgerDAG(cache, lc.id, hashes, fn)
			}
			if !lc.ok && len(lc.parents) == 0 {
				return nil // the ledger's root
			}
			if !lc.ok {
				return fmt.Errorf("ledger commit %s carries no receipt; the ledger ref was moved by hand", lc.id)
			}
			rec := Record{Receipt: lc.rec, Ledger: lc.id, When: lc.when, message: lc.msg, hash: lc.hash, hashErr: lc.hashErr, shapeErr: lc.shapeErr}
			if len(lc.parents) > 1 {
				rec.Commit = lc.parents[1]
			}
			if err := fn(rec); err != nil {
				return err
			}
		}
		if next == nil && nextErr == nil && !h.IsZero() {
			next, nextErr = walk() // after a damaged record
		}
		batch, walkErr = next, nextErr
	}
	return walkErr
}
