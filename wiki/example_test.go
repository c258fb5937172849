package wiki_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/prose-store/prose/vault"
	"github.com/prose-store/prose/wiki"
)

// Several operations in one Tx become one commit carrying one receipt.
func ExampleWiki_Update() {
	dir, _ := os.MkdirTemp("", "wiki-example")
	defer os.RemoveAll(dir)
	v, err := vault.Init(filepath.Join(dir, "vault"), vault.InitOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer v.Close()
	w, _ := wiki.Open(v)
	res, err := w.Update(context.Background(), func(tx *wiki.Tx) error {
		path, _, err := tx.New("ml/attention", wiki.NewOptions{Template: "concept", Title: "Attention"})
		if err != nil {
			return err
		}
		r, err := tx.WriteSlot(path, "summary", `<p>Weights tokens.</p><script>alert(1)</script>`)
		if err != nil {
			return err
		}
		fmt.Println("removed:", r.Removed)
		_, err = tx.SetMeta(path, map[string]any{"tags": []any{"ml"}}, nil)
		return err
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("receipt:", res.Receipt.Status, res.Moved)
	fmt.Println("files:", res.Changed)
	html, _ := w.SlotOf("attention", "summary")
	fmt.Println("summary:", html)
	// Output:
	// removed: [<script> element]
	// receipt: rendered [@atomic ml]
	// files: [README.html ml/README.html ml/attention.html]
	// summary: <p>Weights tokens.</p>
}
