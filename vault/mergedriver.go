package vault

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	gitconfig "github.com/go-git/go-git/v5/plumbing/format/config"

	"github.com/prose-store/prose/internal/durable"
)

// The merge driver gives a plain `git merge` or `git pull` prose's merge
// of the files beside and inside the wiki (docs/sync.md, "A merge git
// made"): git runs `prose merge-driver %O %A %B %P` for every path the
// attributes give `merge=prose`.

// MergeDriverName is the driver's name in the attributes (merge=prose)
// and in the repository config (merge.prose.*).
const MergeDriverName = "prose"

// MergeDriverCommand is merge.prose.driver: git substitutes the base, ours
// (the result is written over it), theirs and the path.
const MergeDriverCommand = "prose merge-driver %O %A %B %P"

// mergeDriverLabel is merge.prose.name, what git prints for the driver.
const mergeDriverLabel = "prose: wiki pages slot by slot, review queue and source catalog by rule"

// MergeAttributes are the attribute lines that route a path to the driver:
// every wiki page, the review queue and the source catalog.
var MergeAttributes = []string{
	"/published/wiki/**/*.html merge=" + MergeDriverName,
	"/review/queue.json merge=" + MergeDriverName,
	"/sources/index.json merge=" + MergeDriverName,
	"/sources/pages/*.tsv merge=" + MergeDriverName,
}

const attributesHeader = "# prose merge-driver: wiki pages merge slot by slot, the review queue and the source catalog by rule (docs/sync.md)\n"

// AttributesFile is the committed attributes file prose init writes.
const AttributesFile = ".gitattributes"

// attributesText is the attributes file prose writes.
func attributesText() string {
	return attributesHeader + strings.Join(MergeAttributes, "\n") + "\n"
}

// hasAttributeLines reports which of MergeAttributes data lacks.
func missingAttributeLines(data []byte) []string {
	have := map[string]bool{}
	for _, l := range strings.Split(string(data), "\n") {
		have[strings.Join(strings.Fields(l), " ")] = true
	}
	var missing []string
	for _, l := range MergeAttributes {
		if !have[l] {
			missing = append(missing, l)
		}
	}
	return missing
}

// infoAttributes is the repository's own attributes file, which git reads
// before the committed .gitattributes and which never travels.
func (v *Vault) infoAttributes() string { return filepath.Join(v.gitDir, "info", "attributes") }

// MergeDriverMissing says what the vault lacks for git to use the merge
// driver: config keys (merge.prose.driver, merge.prose.name) and attribute
// lines that neither the committed .gitattributes nor .git/info/attributes
// holds. Empty when the driver is registered.
func (v *Vault) MergeDriverMissing(ctx context.Context) ([]string, error) {
	var missing []string
	// Read in-process (every pull asks): the repository's own config file.
	data, err := os.ReadFile(filepath.Join(v.gitDir, "config"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	cfg := gitconfig.New()
	if err := gitconfig.NewDecoder(bytes.NewReader(data)).Decode(cfg); err != nil {
		return nil, fmt.Errorf("read %s: %w; fix the file with `git config --edit`", filepath.Join(v.gitDir, "config"), err)
	}
	sub := cfg.Section("merge").Subsection(MergeDriverName)
	if sub.Option("driver") != MergeDriverCommand {
		missing = append(missing, "config merge.prose.driver = "+MergeDriverCommand)
	}
	if sub.Option("name") == "" {
		missing = append(missing, "config merge.prose.name")
	}
	attrs, err := v.attributesNow()
	if err != nil {
		return nil, err
	}
	for _, l := range missingAttributeLines(attrs) {
		missing = append(missing, "attribute "+l)
	}
	return missing, nil
}

// attributesNow is the committed .gitattributes (the working tree's copy)
// followed by .git/info/attributes.
func (v *Vault) attributesNow() ([]byte, error) {
	var all []byte
	for _, p := range []string{filepath.Join(v.root, AttributesFile), v.infoAttributes()} {
		data, err := os.ReadFile(p)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		all = append(append(all, data...), '\n')
	}
	return all, nil
}

// RegisterMergeDriver writes what MergeDriverMissing names: the config
// keys, and the attribute lines into .git/info/attributes (the
// repository's own file, so registering changes no committed file and no
// merge of .gitattributes is ever needed). It returns what it wrote.
func (v *Vault) RegisterMergeDriver(ctx context.Context) ([]string, error) {
	missing, err := v.MergeDriverMissing(ctx)
	if err != nil || len(missing) == 0 {
		return nil, err
	}
	var attrs []string
	for _, m := range missing {
		switch {
		case strings.HasPrefix(m, "config merge.prose.driver"):
			if _, err := runGit(ctx, v.root, "register the merge driver", "config", "merge.prose.driver", MergeDriverCommand); err != nil {
				return nil, err
			}
		case strings.HasPrefix(m, "config merge.prose.name"):
			if _, err := runGit(ctx, v.root, "register the merge driver", "config", "merge.prose.name", mergeDriverLabel); err != nil {
				return nil, err
			}
		case strings.HasPrefix(m, "attribute "):
			attrs = append(attrs, strings.TrimPrefix(m, "attribute "))
		}
	}
	if len(attrs) > 0 {
		path := v.infoAttributes()
		old, err := os.ReadFile(path)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		var b bytes.Buffer
		b.Write(old)
		if len(old) > 0 && old[len(old)-1] != '\n' {
			b.WriteByte('\n')
		}
		if !bytes.Contains(old, []byte(attributesHeader)) {
			b.WriteString(attributesHeader)
		}
		b.WriteString(strings.Join(attrs, "\n") + "\n")
		if err := durable.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		if err := durable.WriteFile(path, b.Bytes(), 0o644); err != nil {
			return nil, fmt.Errorf("register the merge driver in %s: %w", path, err)
		}
	}
	return missing, nil
}
