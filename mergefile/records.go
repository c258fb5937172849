package mergefile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// The files beside the wiki are sets of records, each with a key: the
// review queue's items by id, the catalog's sources and duplicates by
// name, the page tables' lines by page path. They merge record by
// record: a record one side left as the base had takes the other side's,
// one side added is kept, one side removed (and the other left alone)
// goes, and a record both sides changed differently is decided by the
// file's rule — never a conflict, so that two ingests always combine.

// recordSet is the records of one side in their order; nil when the
// side has no such file.
type recordSet struct {
	keys []string
	recs map[string][]byte
}

func (s *recordSet) get(k string) ([]byte, bool) {
	if s == nil {
		return nil, false
	}
	r, ok := s.recs[k]
	return r, ok
}

// mergeSets merges three record sets; both decides a record both sides
// changed differently (o, t present or absent). Keys come in ours'
// order, then those only theirs holds in theirs' order.
func mergeSets(b, o, t *recordSet, both func(k string, o, t []byte, ook, tok bool) ([]byte, bool)) *recordSet {
	out := &recordSet{recs: map[string][]byte{}}
	seen := map[string]bool{}
	var keys []string
	for _, s := range []*recordSet{o, t, b} {
		if s == nil {
			continue
		}
		for _, k := range s.keys {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	for _, k := range keys {
		bv, bok := b.get(k)
		ov, ook := o.get(k)
		tv, tok := t.get(k)
		var v []byte
		var ok bool
		switch {
		case ook == tok && bytes.Equal(ov, tv), tok == bok && bytes.Equal(tv, bv):
			v, ok = ov, ook
		case ook == bok && bytes.Equal(ov, bv):
			v, ok = tv, tok
		case !ook || !tok:
			// Removed on one side, changed on the other: the change
			// stays (a union never drops what a side still holds).
			v, ok = ov, ook
			if !ook {
				v, ok = tv, tok
			}
		default:
			v, ok = both(k, ov, tv, ook, tok)
		}
		if ok {
			out.keys = append(out.keys, k)
			out.recs[k] = v
		}
	}
	return out
}

// first is the deterministic choice between two records both sides
// changed differently: the one whose bytes sort first, so both vaults
// of a pull and a pull the other way reach the same file.
func first(o, t []byte) []byte {
	if bytes.Compare(t, o) < 0 {
		return t
	}
	return o
}

// fileError is a side of a record file that cannot be read: a conflict
// of the whole file, settled only by a side.
func fileConflict(p string, err error, ours []byte, choose Chooser, theirs []byte) Result {
	c := Conflict{Path: p, Kind: "record", Detail: fmt.Sprintf("a side is not valid (%v)", err)}
	switch choose(c) {
	case Ours:
		return whole(ours)
	case Theirs:
		return whole(theirs)
	}
	r := whole(ours)
	r.Conflicts = []Conflict{c}
	return r
}

// --- review/queue.json ---------------------------------------------------

// readQueue reads a review queue: its items by id, in order, and its
// other top-level keys.
func readQueue(data []byte) (*recordSet, *recordSet, error) {
	if data == nil {
		return nil, nil, nil
	}
	top, err := readObject(data)
	if err != nil {
		return nil, nil, err
	}
	items := &recordSet{recs: map[string][]byte{}}
	if raw, ok := top.get("items"); ok {
		var list []json.RawMessage
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, nil, fmt.Errorf("items: %w", err)
		}
		for i, it := range list {
			var head struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal(it, &head); err != nil || head.ID == "" {
				return nil, nil, fmt.Errorf("item %d has no id", i+1)
			}
			if _, dup := items.recs[head.ID]; !dup {
				items.keys = append(items.keys, head.ID)
			}
			items.recs[head.ID] = compact(it)
		}
	}
	delete(top.recs, "items")
	top.keys = without(top.keys, "items")
	return items, top, nil
}

// closed reports whether a review item was resolved or closed.
func closed(item []byte) bool {
	var it struct {
		Resolved string `json:"resolved"`
		Closed   string `json:"closed"`
	}
	_ = json.Unmarshal(item, &it)
	return it.Resolved != "" || it.Closed != ""
}

func mergeReview(p string, base, ours, theirs []byte, choose Chooser) (Result, error) {
	bi, bt, err := readQueue(base)
	if err != nil {
		bi, bt = nil, nil // an unreadable base: every item is new
	}
	oi, ot, err := readQueue(ours)
	if err != nil {
		return fileConflict(p, err, ours, choose, theirs), nil
	}
	ti, tt, err := readQueue(theirs)
	if err != nil {
		return fileConflict(p, err, ours, choose, theirs), nil
	}
	items := mergeSets(bi, oi, ti, func(_ string, o, t []byte, _, _ bool) ([]byte, bool) {
		// An item resolved on one side is resolved.
		switch oc, tc := closed(o), closed(t); {
		case oc && !tc:
			return o, true
		case tc && !oc:
			return t, true
		}
		return first(o, t), true
	})
	top := mergeSets(bt, ot, tt, func(_ string, o, t []byte, _, _ bool) ([]byte, bool) { return first(o, t), true })
	list := make([]json.RawMessage, 0, len(items.keys))
	for _, k := range items.keys {
		list = append(list, items.recs[k])
	}
	raw, err := json.Marshal(list)
	if err != nil {
		return Result{}, err
	}
	top.keys = append([]string{"items"}, top.keys...)
	top.recs["items"] = raw
	out, err := writeObject(top, false)
	if err != nil {
		return Result{}, err
	}
	return Result{Merged: out, Handled: true}, nil
}

// --- sources/index.json --------------------------------------------------

// The catalog's maps of records (by source id or name); its other keys
// (version) are values.
var catalogMaps = []string{"sources", "duplicates"}

func mergeCatalog(p string, base, ours, theirs []byte, choose Chooser) (Result, error) {
	read := func(data []byte) (*recordSet, map[string]*recordSet, error) {
		if data == nil {
			return nil, nil, nil
		}
		top, err := readObject(data)
		if err != nil {
			return nil, nil, err
		}
		maps := map[string]*recordSet{}
		for _, k := range catalogMaps {
			raw, ok := top.get(k)
			if !ok || string(raw) == "null" {
				continue
			}
			s, err := readObject(raw)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", k, err)
			}
			maps[k] = s
		}
		return top, maps, nil
	}
	bt, bm, err := read(base)
	if err != nil {
		bt, bm = nil, nil
	}
	ot, om, err := read(ours)
	if err != nil {
		return fileConflict(p, err, ours, choose, theirs), nil
	}
	tt, tm, err := read(theirs)
	if err != nil {
		return fileConflict(p, err, ours, choose, theirs), nil
	}
	top := mergeSets(bt, ot, tt, func(k string, o, t []byte, _, _ bool) ([]byte, bool) {
		if k == "version" {
			return last(o, t), true // the newer format
		}
		return first(o, t), true
	})
	for _, k := range catalogMaps {
		// A source both sides recorded differently (one text under two
		// names, or memo keys of two runs): the record whose bytes sort
		// first, on both vaults alike; the next ingest of the source
		// writes its record again.
		s := mergeSets(bm[k], om[k], tm[k], func(_ string, o, t []byte, _, _ bool) ([]byte, bool) { return first(o, t), true })
		if len(s.keys) == 0 && om[k] == nil && tm[k] == nil {
			continue
		}
		sort.Strings(s.keys) // as the catalog writes its maps
		raw, err := writeObject(s, true)
		if err != nil {
			return Result{}, err
		}
		if _, ok := top.recs[k]; !ok {
			top.keys = append(top.keys, k)
		}
		top.recs[k] = raw
	}
	out, err := writeObject(top, false)
	if err != nil {
		return Result{}, err
	}
	return Result{Merged: out, Handled: true}, nil
}

// last is the larger of two JSON numbers (or the later bytes).
func last(o, t []byte) []byte {
	var a, b float64
	if json.Unmarshal(o, &a) == nil && json.Unmarshal(t, &b) == nil {
		if b > a {
			return t
		}
		return o
	}
	if bytes.Compare(t, o) > 0 {
		return t
	}
	return o
}

// --- sources/pages/*.tsv -------------------------------------------------

// The columns of a page table line (ingest's catalog.go).
const (
	colPath = iota
	colTitle
	colTemplate
	colSources
	colOrigin
)

func readTable(data []byte) (header []string, s *recordSet) {
	if data == nil {
		return nil, nil
	}
	s = &recordSet{recs: map[string][]byte{}}
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" {
			continue
		}
		if line[0] == '#' {
			header = append(header, line)
			continue
		}
		k, _, _ := strings.Cut(line, "\t")
		if _, dup := s.recs[k]; !dup {
			s.keys = append(s.keys, k)
		}
		s.recs[k] = []byte(line)
	}
	return header, s
}

func mergePageTable(p string, base, ours, theirs []byte, _ Chooser) (Result, error) {
	_, bs := readTable(base)
	oh, os := readTable(ours)
	th, ts := readTable(theirs)
	s := mergeSets(bs, os, ts, func(k string, o, t []byte, _, _ bool) ([]byte, bool) {
		// A page both sides described differently: its sources are the
		// union, each other column three ways, and where both changed
		// one, the value that sorts first (the page itself merges by its
		// own rules; the next ingest writes its line again from it).
		bl, _ := bs.get(k)
		bf, of, tf := strings.Split(string(bl), "\t"), strings.Split(string(o), "\t"), strings.Split(string(t), "\t")
		n := max(len(of), len(tf))
		out := make([]string, n)
		col := func(f []string, i int) string {
			if i < len(f) {
				return f[i]
			}
			return ""
		}
		for i := range n {
			b, x, y := col(bf, i), col(of, i), col(tf, i)
			switch {
			case i == colSources:
				out[i] = unionCSV(b, x, y)
			case x == y || y == b:
				out[i] = x
			case x == b:
				out[i] = y
			default:
				out[i] = min(x, y)
			}
		}
		return []byte(strings.Join(out, "\t")), true
	})
	header := oh
	if header == nil {
		header = th
	}
	sort.Strings(s.keys)
	var b strings.Builder
	for _, h := range header {
		b.WriteString(h + "\n")
	}
	for _, k := range s.keys {
		b.Write(s.recs[k])
		b.WriteByte('\n')
	}
	return Result{Merged: []byte(b.String()), Handled: true}, nil
}

// unionCSV merges three comma-separated lists as sets (unionList).
func unionCSV(b, o, t string) string {
	list := func(s string) []any {
		var out []any
		for _, x := range strings.Split(s, ",") {
			if x != "" {
				out = append(out, x)
			}
		}
		return out
	}
	u, _ := unionList(list(b), list(o), list(t))
	var out []string
	for _, x := range u.([]any) {
		out = append(out, x.(string))
	}
	return strings.Join(out, ",")
}

// --- JSON objects in order ----------------------------------------------

// readObject reads a JSON object's members in their order, each value as
// compact bytes.
func readObject(data []byte) (*recordSet, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("not a JSON object")
	}
	s := &recordSet{recs: map[string][]byte{}}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		if _, dup := s.recs[k]; !dup {
			s.keys = append(s.keys, k)
		}
		s.recs[k] = compact(raw)
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("data after the JSON object")
	}
	return s, nil
}

// writeObject writes members in order as a JSON object, indented by two
// spaces and ending in a newline as prose writes these files (inner: no
// newline, for a member of another object).
func writeObject(s *recordSet, inner bool) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range s.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(s.recs[k])
	}
	b.WriteByte('}')
	if inner {
		return b.Bytes(), nil
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

func compact(raw []byte) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw
	}
	return b.Bytes()
}

func without(l []string, x string) []string {
	out := l[:0:0]
	for _, y := range l {
		if y != x {
			out = append(out, y)
		}
	}
	return out
}
