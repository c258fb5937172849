package wiki

import (
	"context"
	"fmt"
	"testing"
)

// seedPages writes n pages, 10 per folder, in one receipt.
func seedPages(b *testing.B, w *Wiki, n int) {
	b.Helper()
	_, err := w.Update(context.Background(), func(tx *Tx) error {
		for i := range n {
			if _, _, err := tx.New(fmt.Sprintf("t%03d/s%d/p%d", i/100, (i/10)%10, i), NewOptions{Template: "concept",
				Slots: map[string]string{"summary": fmt.Sprintf("<p>page %d</p>", i)}}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkWriteSlot is one slot write (one receipt) in a wiki of 1,000
// and 5,000 pages: the cost should not grow with the wiki.
func BenchmarkWriteSlot(b *testing.B) {
	for _, n := range []int{1000, 5000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			w := newWiki(b)
			seedPages(b, w, n)
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				_, err := w.Update(context.Background(), func(tx *Tx) error {
					_, err := tx.WriteSlot(fmt.Sprintf("t000/s0/p%d", i%10), "body", fmt.Sprintf("<p>%d</p>", i))
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
