package wiki

import (
	"bytes"
	"fmt"
	"sort"
)

// Splice returns file with its meta block and the contents of its slots
// replaced by p's, and everything else — the rendered shell — as the file
// has it. A slot the file has markers for and p does not hold is emptied.
// ok is false when p holds text for a slot the file has no markers for (a
// page of another template): the file cannot carry p. It is how a merge
// writes a merged page without the vault's templates; the next render
// (prose wiki rebuild, any write of the page) brings the shell up to date.
func Splice(file []byte, p *Page) (out []byte, ok bool, err error) {
	if _, err := Parse(file); err != nil {
		return nil, false, err
	}
	if bytes.IndexByte(file, '\r') >= 0 {
		file = bytes.ReplaceAll(bytes.ReplaceAll(file, []byte("\r\n"), []byte("\n")), []byte("\r"), []byte("\n"))
	}
	type span struct {
		start, end int
		with       []byte
	}
	var spans []span
	held := map[string]bool{}
	for off := 0; ; {
		i := bytes.Index(file[off:], []byte("<!--"))
		if i < 0 {
			break
		}
		at := off + i
		rest := file[at:]
		switch {
		case bytes.HasPrefix(rest, []byte(metaOpen)):
			end := bytes.Index(rest[len(metaOpen):], []byte(metaClose))
			meta, err := encodeMeta(p.Meta)
			if err != nil {
				return nil, false, err
			}
			stop := at + len(metaOpen) + end + len(metaClose)
			spans = append(spans, span{at, stop, meta})
			off = stop
		case bytes.HasPrefix(rest, []byte(slotPrefix)):
			idEnd := bytes.Index(rest[len(slotPrefix):], []byte(markerTail))
			id := string(rest[len(slotPrefix) : len(slotPrefix)+idEnd])
			start := at + len(slotPrefix) + idEnd + len(markerTail)
			closer := []byte(slotEnd + id + markerTail)
			end := bytes.Index(file[start:], closer)
			h, _ := p.Slot(id)
			held[id] = true
			spans = append(spans, span{start, start + end, []byte(h)})
			off = start + end + len(closer)
		default:
			end := bytes.Index(rest[4:], []byte("-->"))
			off = at + 4 + end + 3
		}
	}
	for _, s := range p.Slots {
		if s.HTML != "" && !held[s.ID] {
			return nil, false, nil
		}
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	var b bytes.Buffer
	last := 0
	for _, s := range spans {
		b.Write(file[last:s.start])
		b.Write(s.with)
		last = s.end
	}
	b.Write(file[last:])
	if _, err := Parse(b.Bytes()); err != nil {
		return nil, false, fmt.Errorf("splice: %w", err)
	}
	return b.Bytes(), true, nil
}
