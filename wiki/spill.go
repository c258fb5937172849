package wiki

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"sync/atomic"

	"github.com/prose-store/prose/internal/testknob"
)

// spillAbove is how many bytes of written pages (their slots' HTML and
// meta) a Tx holds in memory. Past it, the pages written since the last
// spill go to the Tx's spill file, an unnamed file under the vault's
// .prose/tmp, in the exact form encodePage writes, and each is read back
// when the Tx reads it again (its commit renders it): a Tx that writes
// thousands of pages, as an ingest does, holds a bounded part of them.
const spillAbove = 4 << 20

// spilled is where a page the Tx wrote lies in its spill file, with what
// the Tx reads of every written page without reading the page back: its
// links and the bytes its slots hold.
type spilled struct {
	off   int64
	n     int
	slots int
	links *linkRec
}

// spillFile is a Tx's spill file: records appended, never rewritten (a
// page written again is held in memory until the next spill).
type spillFile struct {
	f   *os.File
	end int64
}

func (tx *Tx) spillLimit() int { return testknob.SpillBytes(spillAbove) }

// spilledPages counts the pages Txs spilled, for the tests.
var spilledPages atomic.Int64

// hold records p, written at rel, as held in memory, and spills the pages
// held once they pass the limit.
func (tx *Tx) hold(rel string, p *Page) {
	if old, ok := tx.pages[rel]; ok && old != nil {
		tx.heldBytes -= pageBytes(old)
	}
	delete(tx.spilled, rel)
	tx.pages[rel] = p
	if p == nil {
		return
	}
	tx.heldBytes += pageBytes(p)
	if tx.noSpill {
		return
	}
	tx.hot = append(tx.hot, rel)
	if tx.heldBytes > tx.spillLimit() {
		if err := tx.spill(); err != nil {
			// A spill file that cannot be written (a full disk) costs
			// memory, not the Tx: the pages stay where they are.
			tx.noSpill, tx.hot = true, nil
		}
	}
}

// spill writes the pages written since the last spill into the spill file
// and lets them go. A page whose meta holds a value outside the value
// model stays in memory.
func (tx *Tx) spill() error {
	hot := tx.hot
	tx.hot = nil
	buf := tx.spillBuf
	defer func() { tx.spillBuf = buf }()
	for _, rel := range hot {
		p, ok := tx.pages[rel]
		if !ok || p == nil {
			continue
		}
		var err error
		if buf, err = appendPage(buf[:0], p); err != nil {
			continue
		}
		at, err := tx.spillWrite(buf)
		if err != nil {
			return err
		}
		if tx.spilled == nil {
			tx.spilled = map[string]spilled{}
		}
		n := pageBytes(p)
		tx.spilled[rel] = spilled{off: at, n: len(buf), slots: slotBytes(p), links: pageLinks(rel, p)}
		delete(tx.pages, rel)
		tx.heldBytes -= n
		spilledPages.Add(1)
	}
	return nil
}

func (tx *Tx) spillWrite(b []byte) (int64, error) {
	if tx.spillTo == nil {
		dir := tx.w.v.StatePath("tmp")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return 0, fmt.Errorf("wiki: spill the written pages: %w", err)
		}
		f, err := os.CreateTemp(dir, "wiki-tx-*")
		if err != nil {
			return 0, fmt.Errorf("wiki: spill the written pages: %w", err)
		}
		// Unnamed from the start: nothing is left behind, whatever ends
		// the process.
		if err := os.Remove(f.Name()); err != nil {
			f.Close()
			return 0, fmt.Errorf("wiki: spill the written pages: %w", err)
		}
		tx.spillTo = &spillFile{f: f}
	}
	s := tx.spillTo
	at := s.end
	if _, err := s.f.WriteAt(b, at); err != nil {
		return 0, fmt.Errorf("wiki: spill the written pages: %w", err)
	}
	s.end += int64(len(b))
	return at, nil
}

// respill writes p, read back from the spill file and changed in what
// its links do not depend on (its updated date), there again; held in
// memory when the spill file fails it.
func (tx *Tx) respill(rel string, p *Page) {
	s := tx.spilled[rel]
	b, err := appendPage(tx.spillBuf[:0], p)
	if err != nil {
		tx.hold(rel, p)
		return
	}
	tx.spillBuf = b
	at, err := tx.spillWrite(b)
	if err != nil {
		tx.noSpill, tx.hot = true, nil
		tx.hold(rel, p)
		return
	}
	s.off, s.n = at, len(b)
	tx.spilled[rel] = s
}

// unspill reads back the page spilled as s.
func (tx *Tx) unspill(rel string, s spilled) (*Page, error) {
	if tx.spillTo == nil {
		return nil, fmt.Errorf("wiki: read back the written page %s: the transaction is over", rel)
	}
	if cap(tx.spillBuf) < s.n {
		tx.spillBuf = make([]byte, s.n)
	}
	b := tx.spillBuf[:s.n]
	if _, err := tx.spillTo.f.ReadAt(b, s.off); err != nil {
		return nil, fmt.Errorf("wiki: read back the written page %s: %w", rel, err)
	}
	p, err := decodePage(b)
	if err != nil {
		return nil, fmt.Errorf("wiki: read back the written page %s: %w", rel, err)
	}
	return p, nil
}

// closeSpill removes the spill file (it has no name: closing it frees it)
// once the Tx is committed or discarded.
func (tx *Tx) closeSpill() {
	if tx.spillTo != nil {
		tx.spillTo.f.Close()
		tx.spillTo = nil
	}
	tx.hot, tx.noSpill = nil, true
}

// pageBytes is what a page held in memory is counted as: the bytes of its
// slots and meta strings.
func pageBytes(p *Page) int {
	n := slotBytes(p)
	for k, v := range p.Meta {
		n += len(k) + valueBytes(v)
	}
	return n
}

func slotBytes(p *Page) int {
	n := 0
	for _, s := range p.Slots {
		n += len(s.ID) + len(s.HTML)
	}
	return n
}

func valueBytes(v any) int {
	switch x := v.(type) {
	case string:
		return len(x)
	case []any:
		n := 0
		for _, e := range x {
			n += 8 + valueBytes(e)
		}
		return n
	case map[string]any:
		n := 0
		for k, e := range x {
			n += len(k) + valueBytes(e)
		}
		return n
	}
	return 8
}

// The tags of encodePage's values.
const (
	tagNil byte = iota
	tagFalse
	tagTrue
	tagString
	tagFloat
	tagNilList
	tagList
	tagNilMap
	tagMap
)

// errSpillValue is a meta value the spill form has no tag for.
var errSpillValue = errors.New("a meta value outside the value model")

// appendPage appends the spill form of p to b: its meta (a map, nil
// or not, of values of the value model) and its slots (nil or not), each
// string as its length and bytes, so decodePage gives back an equal page.
func appendPage(b []byte, p *Page) ([]byte, error) {
	var err error
	if p.Meta == nil {
		b = append(b, tagNilMap)
	} else if b, err = appendValue(b, map[string]any(p.Meta)); err != nil {
		return nil, err
	}
	if p.Slots == nil {
		return append(b, tagNilList), nil
	}
	b = append(b, tagList)
	b = binary.AppendUvarint(b, uint64(len(p.Slots)))
	for _, s := range p.Slots {
		b = appendString(b, s.ID)
		b = appendString(b, s.HTML)
	}
	return b, nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendValue(b []byte, v any) ([]byte, error) {
	var err error
	switch x := v.(type) {
	case nil:
		return append(b, tagNil), nil
	case bool:
		if x {
			return append(b, tagTrue), nil
		}
		return append(b, tagFalse), nil
	case string:
		return appendString(append(b, tagString), x), nil
	case float64:
		return binary.LittleEndian.AppendUint64(append(b, tagFloat), math.Float64bits(x)), nil
	case []any:
		if x == nil {
			return append(b, tagNilList), nil
		}
		b = binary.AppendUvarint(append(b, tagList), uint64(len(x)))
		for _, e := range x {
			if b, err = appendValue(b, e); err != nil {
				return nil, err
			}
		}
		return b, nil
	case map[string]any:
		if x == nil {
			return append(b, tagNilMap), nil
		}
		b = binary.AppendUvarint(append(b, tagMap), uint64(len(x)))
		for k, e := range x {
			b = appendString(b, k)
			if b, err = appendValue(b, e); err != nil {
				return nil, err
			}
		}
		return b, nil
	}
	return nil, fmt.Errorf("%w: %T", errSpillValue, v)
}

// decodePage reads the spill form appendPage wrote.
func decodePage(b []byte) (*Page, error) {
	d := &spillDecoder{b: b}
	m := d.value()
	p := &Page{}
	if x, ok := m.(map[string]any); ok {
		p.Meta = Meta(x) // nil when the page's meta was
	} else {
		d.fail()
	}
	switch d.byte() {
	case tagNilList:
	case tagList:
		n := d.count()
		p.Slots = make([]Slot, 0, n)
		for i := 0; i < n && d.err == nil; i++ {
			p.Slots = append(p.Slots, Slot{ID: d.string(), HTML: d.string()})
		}
	default:
		d.fail()
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail()
	}
	if d.err != nil {
		return nil, d.err
	}
	return p, nil
}

type spillDecoder struct {
	b   []byte
	err error
}

func (d *spillDecoder) fail() {
	if d.err == nil {
		d.err = errors.New("the spill record is damaged")
	}
	d.b = nil
}

func (d *spillDecoder) byte() byte {
	if len(d.b) == 0 {
		d.fail()
		return 0xff
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *spillDecoder) count() int {
	n, k := binary.Uvarint(d.b)
	if k <= 0 || n > uint64(len(d.b)) {
		d.fail()
		return 0
	}
	d.b = d.b[k:]
	return int(n)
}

func (d *spillDecoder) string() string {
	n := d.count()
	if n > len(d.b) {
		d.fail()
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func (d *spillDecoder) value() any {
	switch d.byte() {
	case tagNil:
		return nil
	case tagFalse:
		return false
	case tagTrue:
		return true
	case tagString:
		return d.string()
	case tagFloat:
		if len(d.b) < 8 {
			d.fail()
			return nil
		}
		f := math.Float64frombits(binary.LittleEndian.Uint64(d.b))
		d.b = d.b[8:]
		return f
	case tagNilList:
		return []any(nil)
	case tagList:
		n := d.count()
		out := make([]any, 0, n)
		for i := 0; i < n && d.err == nil; i++ {
			out = append(out, d.value())
		}
		return out
	case tagNilMap:
		return map[string]any(nil)
	case tagMap:
		n := d.count()
		out := make(map[string]any, n)
		for i := 0; i < n && d.err == nil; i++ {
			k := d.string()
			out[k] = d.value()
		}
		return out
	}
	d.fail()
	return nil
}
