package source

import (
	"errors"
	"fmt"

	"github.com/prose-store/prose/canon"
)

// ErrChanged is the error of Reread for a source whose bytes are no
// longer those it was read from.
var ErrChanged = errors.New("the source changed since it was read")

// Release lets go of the document's parsed text (Sections and Links), for
// a caller done with it that may need it again, and reports whether it
// did: only a document whose bytes Reload reads again is released, as
// Reread parses them again. Its name, title, ID and the rest stay.
func (d *Document) Release() bool {
	if d.Reload == nil {
		return false
	}
	d.Sections, d.Links, d.released = nil, nil, true
	return true
}

// Released reports whether Release let go of the document's text and no
// Reread has given it back.
func (d *Document) Released() bool { return d.released }

// Reread gives a released document its parsed text back: its bytes read
// again (Reload) and parsed as they were the first time, with the
// boilerplate it was read without. It refuses, with ErrChanged, when the
// bytes are not those of the document's ID any more (the source was
// changed since), leaving the document released. A document not released
// is left as it is.
func (d *Document) Reread() error {
	if !d.released {
		return nil
	}
	data, err := d.Reload()
	if err != nil {
		return fmt.Errorf("%s could not be read again (%v): run the ingest again once it is back", d.Name, err)
	}
	if id := canon.BLAKE3.Token(data); id != d.ID {
		return fmt.Errorf("%s: %w (it was %s when first read, it is %s now): its pages would be made of other bytes than those it was read as; run the ingest again", d.Name, ErrChanged, d.ID, id)
	}
	var b *Boilerplate
	if d.Kind == HTML {
		b = d.Boilerplate
	}
	n, err := readWith(d.Name, data, d.asked, b)
	if err != nil {
		return err
	}
	if n.ID != d.ID {
		return fmt.Errorf("%s: %w (read again it holds other text)", d.Name, ErrChanged)
	}
	d.Sections, d.Links, d.released = n.Sections, n.Links, false
	return nil
}
