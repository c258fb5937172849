package main

import (
	"fmt"
	"github.com/prose-store/prose/internal/refdata"

	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReactorLedgersVerify(t *testing.T) {
	inParallel(t)
	shared := refdata.Shared(t)
	var ledgers []string
	filepath.WalkDir(filepath.Join(shared, "reference-data"), func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "receipts.json" {
			ledgers = append(ledgers, p)
		}
		return nil
	})
	if len(ledgers) != 20 {
		t.Fatalf("found %d reference ledgers, want 20", len(ledgers))
	}
	total := 0
	for _, f := range ledgers {
		out := mustProse(t, "receipts", "verify", "--reactor", f, "--json")
		var rep struct {
			Receipts int  `json:"receipts"`
			OK       bool `json:"ok"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil || !rep.OK {
			t.Fatalf("%s: %v %s", f, err, out)
		}
		total += rep.Receipts
	}
	if total != 7216 {
		t.Fatalf("verified %d receipts, want 7216", total)
	}

	// Tampered copies fail, naming the receipt and the reason.
	src := ledgers[0]
	for _, f := range ledgers {
		if strings.Contains(f, "agent-observatory/replay") {
			src = f
		}
	}
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var arr []map[string]any
	if err := json.Unmarshal(data, &arr); err != nil {
		t.Fatal(err)
	}
	tamper := map[string]func(r map[string]any){
		"status": func(r map[string]any) {
			if r["status"] == "rendered" {
				r["status"] = "skipped"
			} else {
				r["status"] = "rendered"
			}
		},
		"fingerprint": func(r map[string]any) {
			r["fingerprints"].(map[string]any)["@atomic"] = "sha256:" + strings.Repeat("0", 64)
		},
	}
	for name, fn := range tamper {
		copyArr := make([]map[string]any, len(arr))
		for i := range arr {
			b, _ := json.Marshal(arr[i])
			json.Unmarshal(b, &copyArr[i])
		}
		const victim = 3
		fn(copyArr[victim])
		b, _ := json.Marshal(copyArr)
		f := filepath.Join(t.TempDir(), "receipts.json")
		os.WriteFile(f, b, 0o644)
		out, errs, code := prose(t, "receipts", "verify", "--reactor", f)
		node := copyArr[victim]["node"].(string)
		hash := copyArr[victim]["content_hash"].(string)
		// The one problem names the receipt by its index, node and hash.
		want := fmt.Sprintf("%s: receipt %d (node %q, %s): content_hash mismatch (the receipt's content hashes to sha256:", f, victim, node, hash)
		if code != 1 || !strings.HasPrefix(errs, want) || strings.Count(errs, "\n") != 1 || !strings.HasSuffix(out, ", 1 problem\n") {
			t.Errorf("tampered %s: exit %d, stdout %q, stderr %q; want stderr %q", name, code, out, errs, want)
		}
	}
}
