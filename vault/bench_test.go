package vault

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func benchTree(b *testing.B, n int) (*Vault, string) {
	b.Helper()
	v, err := Init(filepath.Join(b.TempDir(), "vault"), InitOptions{})
	if err != nil {
		b.Fatal(err)
	}
	src := filepath.Join(b.TempDir(), "render")
	for i := 0; i < n; i++ {
		p := filepath.Join(src, fmt.Sprintf("facet%02d", i%10), fmt.Sprintf("d%03d", (i/10)%(n/100)), fmt.Sprintf("f%05d.md", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(strings.Repeat("lorem ipsum ", 80)), 0o644)
	}
	ctx := context.Background()
	if _, err := v.Publish(ctx, "wm", src, PublishOptions{}); err != nil {
		b.Fatal(err)
	}
	inplace := filepath.Join(v.Root(), "published", "wm")
	if _, err := v.Publish(ctx, "wm", inplace, PublishOptions{}); err != nil {
		b.Fatal(err)
	}
	return v, inplace
}

// BenchmarkPublish10kOneEdit is the full-scan republish of a 10,000-file
// world-model after a one-file in-place edit.
func BenchmarkPublish10kOneEdit(b *testing.B) {
	v, dir := benchTree(b, 10000)
	f := filepath.Join(dir, "facet03", "d042", "f00423.md")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		os.WriteFile(f, []byte(fmt.Sprint(i)), 0o644)
		if _, err := v.Publish(context.Background(), "wm", dir, PublishOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPublish10kInformed names the one changed file.
func BenchmarkPublish10kInformed(b *testing.B) {
	v, dir := benchTree(b, 10000)
	rel := "facet03/d042/f00423.md"
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		os.WriteFile(filepath.Join(dir, rel), []byte(fmt.Sprint(i)), 0o644)
		res, err := v.Publish(context.Background(), "wm", dir, PublishOptions{Changed: []string{rel}})
		if err != nil {
			b.Fatal(err)
		}
		if i == b.N-1 {
			b.Logf("phases: %v", res.Phases)
		}
	}
}

// BenchmarkPublish10kSkipped republishes an unchanged world-model.
func BenchmarkPublish10kSkipped(b *testing.B) {
	v, dir := benchTree(b, 10000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := v.Publish(context.Background(), "wm", dir, PublishOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFirstPublish publishes a fresh world-model of n files into a new
// vault: every file is a new blob, a new index entry and a new working-tree
// file. Its cost must grow linearly with n.
func BenchmarkFirstPublish(b *testing.B) {
	for _, n := range []int{1000, 10000, 20000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			src := filepath.Join(b.TempDir(), "render")
			for i := 0; i < n; i++ {
				p := filepath.Join(src, fmt.Sprintf("facet%02d", i%10), fmt.Sprintf("d%03d", (i/10)%(n/100)), fmt.Sprintf("f%05d.md", i))
				os.MkdirAll(filepath.Dir(p), 0o755)
				os.WriteFile(p, []byte(fmt.Sprintf("# item %d\n%s", i, strings.Repeat("lorem ipsum ", 80))), 0o644)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				v, err := Init(filepath.Join(b.TempDir(), "vault"), InitOptions{})
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				res, err := v.Publish(context.Background(), "wm", src, PublishOptions{})
				if err != nil {
					b.Fatal(err)
				}
				if i == b.N-1 {
					b.Logf("phases: %v", res.Phases)
				}
			}
		})
	}
}

// BenchmarkPublishFlatInformed names the one changed file of a flat tree:
// 100 directories of 100 JSON files, so the directory above the change
// holds 100 files.
func BenchmarkPublishFlatInformed(b *testing.B) {
	v, err := Init(filepath.Join(b.TempDir(), "vault"), InitOptions{})
	if err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(b.TempDir(), "render")
	for d := 0; d < 100; d++ {
		os.MkdirAll(filepath.Join(dir, fmt.Sprintf("d%02d", d)), 0o755)
		for i := 0; i < 100; i++ {
			os.WriteFile(filepath.Join(dir, fmt.Sprintf("d%02d", d), fmt.Sprintf("item%02d.json", i)),
				[]byte(fmt.Sprintf(`{"d":%d,"i":%d,"body":%q}`, d, i, strings.Repeat("y", 900))), 0o644)
		}
	}
	ctx := context.Background()
	if _, err := v.Publish(ctx, "wm", dir, PublishOptions{}); err != nil {
		b.Fatal(err)
	}
	rel := "d42/item23.json"
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		os.WriteFile(filepath.Join(dir, rel), []byte(fmt.Sprintf(`{"edit":%d}`, i)), 0o644)
		res, err := v.Publish(ctx, "wm", dir, PublishOptions{Changed: []string{rel}})
		if err != nil {
			b.Fatal(err)
		}
		if i == b.N-1 {
			b.Logf("phases: %v", res.Phases)
		}
	}
}
