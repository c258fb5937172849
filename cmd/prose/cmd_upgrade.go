package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/prose-store/prose/forme"
	"github.com/prose-store/prose/internal/durable"
	"github.com/prose-store/prose/vault"
)

func upgradeCommand() *cli.Command {
	return &cli.Command{
		Name:      "upgrade",
		Usage:     "rewrite legacy Contract Markdown (retired kinds and sections) to the current form",
		ArgsUsage: "[PATH]",
		Description: "Applies the mechanical rewrites of the migration map to every contract source under PATH (default:\n" +
			"the vault's src/): kind: service → function (Requires/Ensures → Parameters/Returns), a responsibility's\n" +
			"Ensures → Maintains, Criteria → Maintains postconditions, Constraints → Invariants, gateways gain\n" +
			"Continuity: external-driven, *.md sources with a kind: → *.prose.md. Every line of content and every id\n" +
			"is kept. What needs judgment (kind: system, Services, Wiring, Fulfillment, Memory) is reported on\n" +
			"stderr as upgrade_review and exits 1; nothing is guessed. --dry-run prints the plan as a unified diff\n" +
			"and writes nothing; in a vault a real run is one commit.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "print the plan as a unified diff; write nothing"},
		},
		Action: runUpgrade,
	}
}

// upgradeFile is one file of the plan in the --json document.
type upgradeFile struct {
	Path    string   `json:"path"`
	NewPath string   `json:"new_path"`
	Changes []string `json:"changes"`
	Diff    string   `json:"diff"`
}

func runUpgrade(c *cli.Context) error {
	if c.NArg() > 1 {
		return usageErrorf("upgrade takes at most one PATH, got %d (see prose upgrade --help)", c.NArg())
	}
	root, v, err := upgradeRoot(c)
	if err != nil {
		return err
	}
	if v != nil {
		defer v.Close()
	}
	sources, err := legacySources(root, v)
	if err != nil {
		return err
	}
	out := newOutput(c)
	dry := c.Bool("dry-run")
	var plans []*forme.Upgrade
	var review []forme.Diagnostic
	for _, p := range sources {
		data, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("upgrade: %w", err)
		}
		u := forme.UpgradeSource(displayPath(p), data)
		if u.NewPath != u.Path {
			if _, err := os.Lstat(strings.TrimSuffix(p, ".md") + ".prose.md"); err == nil {
				review = append(review, forme.Diagnostic{Code: forme.CodeUpgradeReview, Severity: forme.SeverityWarning, File: u.Path,
					Message: fmt.Sprintf("%s would become %s, which exists: merge or rename one of them by hand", u.Path, u.NewPath)})
				u.NewPath = u.Path
			}
		}
		review = append(review, u.Review...)
		if u.Changed() {
			plans = append(plans, u)
		}
	}

	files := []upgradeFile{}
	for _, u := range plans {
		diff := forme.UnifiedDiff("a/"+filepath.ToSlash(u.Path), "b/"+filepath.ToSlash(u.NewPath), u.Old, u.New)
		files = append(files, upgradeFile{Path: u.Path, NewPath: u.NewPath, Changes: u.Changes, Diff: diff})
		if dry {
			out.printf("%s", diff)
		}
	}
	var commit string
	if !dry && len(plans) > 0 {
		if commit, err = applyUpgrade(c, v, plans); err != nil {
			return err
		}
		for _, u := range plans {
			if u.NewPath != u.Path {
				out.printf("upgraded %s → %s (%s)\n", u.Path, u.NewPath, nounCount(len(u.Changes), "change"))
			} else {
				out.printf("upgraded %s (%s)\n", u.Path, nounCount(len(u.Changes), "change"))
			}
		}
		if commit != "" {
			out.printf("committed %s\n", short(commit))
		}
	}
	if !out.json {
		printDiagnostics(c.App.ErrWriter, review, false)
		verb := "upgraded"
		if dry {
			verb = "to upgrade"
		}
		if !out.quiet {
			fmt.Fprintf(c.App.ErrWriter, "%s: %s %s, %s for review\n", nounCount(len(sources), "contract file"), nounCount(len(plans), "file"), verb, nounCount(len(review), "item"))
		}
	}
	if review == nil {
		review = []forme.Diagnostic{}
	}
	doc := map[string]any{"dry_run": dry, "files": files, "review": review}
	if commit != "" {
		doc["commit"] = commit
	}
	if err := out.emit(doc); err != nil {
		return err
	}
	if len(review) > 0 {
		return findings("upgrade left %s for review", nounCount(len(review), "item"))
	}
	return nil
}

// upgradeRoot resolves what upgrade reads: PATH, else the vault's src/, and
// the vault holding it (nil outside any vault).
func upgradeRoot(c *cli.Context) (string, *vault.Vault, error) {
	if c.NArg() == 0 {
		v, err := openVault(c)
		if err != nil {
			if c.String("vault") == "" && errors.Is(err, vault.ErrNotVault) {
				return "", nil, usageErrorf("upgrade: no PATH given and no vault here: give a contract file or directory (prose upgrade PATH), or run inside a vault (or pass --vault DIR)")
			}
			return "", nil, err
		}
		return filepath.Join(v.Root(), "src"), v, nil
	}
	p := c.Args().First()
	if _, err := os.Stat(p); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", nil, usageErrorf("upgrade: %s does not exist: give a contract file or a directory of contract sources", p)
		}
		return "", nil, fmt.Errorf("upgrade: %w", err)
	}
	v, err := vaultHolding(c, []string{p})
	return p, v, err
}

// legacySources lists the contract sources under root: *.prose.md files and
// *.md files whose frontmatter names a kind. Hidden directories and, in a
// vault, the vault's own state (published/, dist/) are skipped.
func legacySources(root string, v *vault.Vault) ([]string, error) {
	var out []string
	skip := map[string]bool{}
	if v != nil {
		skip[filepath.Join(v.Root(), "published")] = true
		skip[filepath.Join(v.Root(), "dist")] = true
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == root {
				return fs.SkipAll // a vault without src/
			}
			return err
		}
		if d.IsDir() {
			abs, _ := filepath.Abs(p)
			if p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || skip[abs]) {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		switch {
		case strings.HasSuffix(p, ".prose.md"):
			out = append(out, p)
		case strings.HasSuffix(p, ".md"):
			if ok, err := hasKind(p); err != nil {
				return err
			} else if ok {
				out = append(out, p)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("upgrade: %w", err)
	}
	sort.Strings(out)
	return out, nil
}

// hasKind reports whether a Markdown file opens with frontmatter holding a
// kind: line, as a contract source does.
func hasKind(p string) (bool, error) {
	data, err := os.ReadFile(p)
	if err != nil {
		return false, err
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != "---" {
		return false, nil
	}
	for _, l := range lines[1:] {
		if t := strings.TrimSpace(l); t == "---" || t == "..." {
			return false, nil
		}
		if strings.HasPrefix(l, "kind:") {
			return true, nil
		}
	}
	return false, nil
}

// applyUpgrade writes the plan. In a vault the committed sources change in
// one commit; sources the branch does not hold (not committed yet) are
// rewritten in place, like files outside a vault: the new file durably
// written before a renamed source is removed. It returns the commit, or ""
// when none was made.
func applyUpgrade(c *cli.Context, v *vault.Vault, plans []*forme.Upgrade) (string, error) {
	var loose []*forme.Upgrade
	commit := ""
	if v != nil {
		files := map[string][]byte{}
		var lines, edited []string
		for _, u := range plans {
			oldRel, err := vaultRel(v, u.Path)
			if err != nil {
				return "", err
			}
			newRel, err := vaultRel(v, u.NewPath)
			if err != nil {
				return "", err
			}
			committed, tracked, err := v.ReadFile(oldRel)
			if err != nil {
				return "", fmt.Errorf("upgrade: %w", err)
			}
			if !tracked {
				loose = append(loose, u)
				continue
			}
			if !bytes.Equal(committed, u.Old) {
				edited = append(edited, u.Path)
			}
			if newRel != oldRel {
				files[oldRel] = nil
			}
			files[newRel] = u.New
			lines = append(lines, u.Changes...)
		}
		if len(edited) > 0 {
			return "", fmt.Errorf("upgrade: %s differ from the branch (uncommitted edits): commit or restore them, then run prose upgrade again (nothing was changed)", strings.Join(edited, ", "))
		}
		if len(files) > 0 {
			msg := fmt.Sprintf("Upgrade %s to the current Contract Markdown\n\n%s\n", nounCount(len(lines), "rewrite"), strings.Join(lines, "\n"))
			h, err := v.CommitFiles(c.Context, "prose upgrade", msg, files)
			if err != nil {
				return "", fmt.Errorf("upgrade: %w (nothing was changed)", err)
			}
			if !h.IsZero() {
				commit = h.String()
			}
		}
	} else {
		loose = plans
	}
	for _, u := range loose {
		info, err := os.Stat(u.Path)
		if err != nil {
			return commit, fmt.Errorf("upgrade: %w", err)
		}
		if err := durable.WriteFile(u.NewPath, u.New, info.Mode().Perm()); err != nil {
			return commit, fmt.Errorf("upgrade %s: %w", u.Path, err)
		}
		if u.NewPath != u.Path {
			if err := os.Remove(u.Path); err != nil {
				return commit, fmt.Errorf("upgrade: %s was written but %s could not be removed: %w", u.NewPath, u.Path, err)
			}
			if err := durable.SyncDir(filepath.Dir(u.Path)); err != nil {
				return commit, fmt.Errorf("upgrade %s: %w", u.Path, err)
			}
		}
	}
	return commit, nil
}

// vaultRel turns a displayed path into the vault-relative slash path
// CommitFiles takes.
func vaultRel(v *vault.Vault, p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	root, err := filepath.Abs(v.Root())
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || strings.HasPrefix(rel, "..") {
		return "", fmt.Errorf("upgrade: %s is outside the vault %s", p, v.Root())
	}
	return filepath.ToSlash(rel), nil
}
