package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/prose-store/prose/canon"
	"github.com/prose-store/prose/forme"
	"github.com/prose-store/prose/internal/durable"
	"github.com/prose-store/prose/vault"
)

// nextManifestPath is where compile writes the manifest it built, relative
// to the project directory (the vault root in a vault). It is never
// committed: in a vault it is listed in .git/info/exclude.
const nextManifestPath = "dist/manifest.next.json"

func compileCommand() *cli.Command {
	return &cli.Command{
		Name:      "compile",
		Usage:     "compile contracts into dist/manifest.next.json; --activate commits it as dist/manifest.active.json",
		ArgsUsage: "[PATH]",
		Description: "Checks and wires the contracts (default: the vault's src/; PATH may be a file or directory,\n" +
			"inside or outside a vault) and writes the compiled manifest to dist/manifest.next.json under the\n" +
			"vault root, or outside a vault under the project directory (PATH's directory; the parent of a\n" +
			"directory named src). That file is not committed (a vault lists it in .git/info/exclude).\n" +
			"With error diagnostics nothing is written and the exit status is 1.\n" +
			"--activate also commits the manifest as dist/manifest.active.json, with the artifacts it names\n" +
			"(dist/canonicalizers/<node>.json, dist/postconditions/<node>.json), in one commit\n" +
			"\"Activate manifest (N nodes, M edges)\"; a node that was already published keeps the\n" +
			"canonicalization spec it was published under, so its receipts stay verifiable.\n" +
			"--check writes nothing and exits 1 when dist/manifest.active.json differs from what compile\n" +
			"builds now (a vault with no contracts and no active manifest is current). Diagnostics go to stdout as in prose check, the summary to stderr.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "activate", Usage: "also commit the manifest as dist/manifest.active.json (needs a vault)"},
			&cli.BoolFlag{Name: "check", Usage: "write nothing; exit 1 when the active manifest is stale (needs a vault)"},
			&cli.StringFlag{Name: "out", Usage: "write manifest.next.json into `DIR` instead of <project>/dist"},
		},
		Action: runCompile,
	}
}

// compileDoc is compile's JSON document.
type compileDoc struct {
	diagnosticsDoc
	Nodes     int      `json:"nodes"`
	Edges     int      `json:"edges"`
	Written   string   `json:"written,omitempty"` // the manifest.next.json written
	Commit    string   `json:"commit,omitempty"`  // the activation commit
	Current   *bool    `json:"current,omitempty"` // --check: the active manifest is in step
	KeptSpecs []string `json:"kept_specs,omitempty"`
	// Uncommitted lists compiled contracts that differ from the branch.
	Uncommitted []string `json:"uncommitted,omitempty"`
}

func runCompile(c *cli.Context) error {
	if c.NArg() > 1 {
		return usageErrorf("compile takes at most one PATH, got %d (see prose compile --help)", c.NArg())
	}
	activate, check := c.Bool("activate"), c.Bool("check")
	if activate && check {
		return usageErrorf("compile: --activate and --check exclude each other (--check only reports whether the active manifest is current)")
	}
	if check && c.String("out") != "" {
		return usageErrorf("compile: --check writes nothing, so --out has no effect: drop one of them")
	}
	set, err := loadContracts(c, "compile", c.Args().Slice())
	if err != nil {
		return err
	}
	defer set.close()
	if (activate || check) && set.vault == nil {
		flag := "--activate"
		if check {
			flag = "--check"
		}
		return usageErrorf("compile: %s needs a vault, and %s is not inside one: run it inside the vault, or pass --vault DIR", flag, c.Args().First())
	}

	m, diags := forme.Compile(set.project)
	out := newOutput(c)
	doc := compileDoc{diagnosticsDoc: newDiagnosticsDoc(set.project, diags), Nodes: len(m.Topology.Nodes), Edges: len(m.Topology.Edges)}
	if !out.json {
		printDiagnostics(&safeWriter{w: c.App.Writer}, diags, out.quiet)
		if !out.quiet {
			fmt.Fprintln(c.App.ErrWriter, doc.summary())
		}
	}
	if doc.Errors > 0 {
		if err := out.emit(doc); err != nil {
			return err
		}
		return findings("compile found %s", nounCount(doc.Errors, "error"))
	}
	data, err := m.JSON()
	if err != nil {
		return err
	}
	shape := fmt.Sprintf("%s, %s", nounCount(doc.Nodes, "node"), nounCount(doc.Edges, "edge"))

	if check {
		active, ok, err := set.vault.ReadFile(vault.ManifestPath)
		if err != nil {
			return err
		}
		// No contracts and no manifest agree: a vault that only holds a
		// wiki or published nodes has nothing to compile, and CI running
		// compile --check on it has no finding.
		empty := !ok && doc.Files == 0
		current := (ok && bytes.Equal(active, data)) || empty
		doc.Current = &current
		if err := out.emit(doc); err != nil {
			return err
		}
		switch {
		case empty:
			out.printf("no contracts in src/ and no active manifest: nothing to compile\n")
			return nil
		case !ok:
			return errors.New("no manifest is active (" + vault.ManifestPath + " is not committed): run `prose compile --activate`")
		case !current:
			return errors.New(vault.ManifestPath + " is stale: the contracts changed since it was activated; run `prose compile --activate`")
		}
		out.printf("%s is current (%s)\n", vault.ManifestPath, shape)
		return nil
	}

	next := filepath.Join(set.dir, filepath.FromSlash(nextManifestPath))
	if d := c.String("out"); d != "" {
		next = filepath.Join(d, "manifest.next.json")
	}
	if err := durable.MkdirAll(filepath.Dir(next), 0o755); err != nil {
		return fmt.Errorf("compile: %w", err)
	}
	if set.vault != nil && c.String("out") == "" {
		if err := excludeNextManifest(set.vault); err != nil {
			return fmt.Errorf("compile: keep %s out of git status: %w", nextManifestPath, err)
		}
	}
	// A compile killed mid-write left its temporary file: remove such
	// leftovers (old enough to be no write in progress) before writing.
	_, _ = durable.CleanTemps(filepath.Dir(next), time.Minute)
	if err := durable.WriteFile(next, data, 0o644); err != nil {
		return fmt.Errorf("compile: write %s: %w", next, err)
	}
	doc.Written = displayPath(next)
	out.printf("wrote %s (%s)\n", doc.Written, shape)

	if activate {
		files, kept, err := activationFiles(set.vault, m, data)
		if err != nil {
			return fmt.Errorf("compile --activate: %w", err)
		}
		doc.KeptSpecs = kept
		if doc.Uncommitted, err = uncommittedSources(set); err != nil {
			return fmt.Errorf("compile --activate: %w", err)
		}
		if !out.json && !out.quiet {
			for _, node := range kept {
				fmt.Fprintf(c.App.ErrWriter, "note: %s keeps the canonicalization spec it was published under (changing it would leave its receipts unverifiable); publish it with --spec to adopt its contract's spec\n", node)
			}
			if len(doc.Uncommitted) > 0 {
				fmt.Fprintf(c.App.ErrWriter, "note: compiled from uncommitted contracts (%s): commit them too, so the history holds the contracts this manifest was built from\n", strings.Join(doc.Uncommitted, ", "))
			}
		}
		h, err := set.vault.CommitFiles(c.Context, "prose compile --activate", fmt.Sprintf("Activate manifest (%s)\n", shape), files)
		if err != nil {
			return fmt.Errorf("compile --activate: %w", err)
		}
		if h.IsZero() {
			out.printf("%s is already current\n", vault.ManifestPath)
		} else {
			doc.Commit = h.String()
			out.printf("activated %s in %s\n", vault.ManifestPath, short(h.String()))
		}
	}
	return out.emit(doc)
}

// excludeNextManifest lists dist/manifest.next.json (and a crashed write's
// temporary file beside it) in the vault's .git/info/exclude, the
// repository's local, uncommitted ignore file, so compiling never shows up
// in git status.
func excludeNextManifest(v *vault.Vault) error {
	patterns := []string{"/" + nextManifestPath, "/dist/" + durable.TempPrefix + "manifest.next.json-*"}
	file := filepath.Join(v.GitDir(), "info", "exclude")
	data, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	have := map[string]bool{}
	for _, l := range strings.Split(string(data), "\n") {
		have[strings.TrimSpace(l)] = true
	}
	var add []string
	for _, p := range patterns {
		if !have[p] {
			add = append(add, p)
		}
	}
	if len(add) == 0 {
		return nil
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		data = append(data, '\n')
	}
	data = append(data, "# prose: the compiled manifest that is not activated\n"...)
	for _, p := range add {
		data = append(data, p+"\n"...)
	}
	if err := durable.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	return durable.WriteFile(file, data, 0o644)
}

// activationFiles is what an activation commits: the manifest and the
// artifacts it names, with the artifacts of nodes that left the manifest
// removed. A node that has receipts keeps the canonicalization spec it was
// published under (or the lack of one): fsck re-fingerprints published
// world-models with the committed spec, and the receipts were computed with
// the old one. Those nodes are returned as kept.
func activationFiles(v *vault.Vault, m *forme.Manifest, data []byte) (map[string][]byte, []string, error) {
	files, err := m.Artifacts()
	if err != nil {
		return nil, nil, err
	}
	specOwner := map[string]string{} // canonicalizer artifact → node
	for _, cz := range m.Canonicalizers {
		specOwner[cz.Artifact] = cz.Node
	}
	prev, ok, err := v.ReadFile(vault.ManifestPath)
	if err != nil {
		return nil, nil, err
	}
	var old forme.Manifest
	if ok && json.Unmarshal(prev, &old) == nil {
		for _, cz := range old.Canonicalizers {
			if _, still := files[cz.Artifact]; !still && isArtifactPath(cz.Artifact) {
				files[cz.Artifact] = nil
				specOwner[cz.Artifact] = cz.Node
			}
		}
		for _, pc := range old.Postconditions {
			if _, still := files[pc.Artifact]; !still && isArtifactPath(pc.Artifact) {
				files[pc.Artifact] = nil
			}
		}
	}
	var kept []string
	for p, node := range specOwner {
		committed, had, err := v.ReadFile(p)
		if err != nil {
			return nil, nil, err
		}
		if had == (files[p] != nil) && sameSpec(committed, files[p]) {
			delete(files, p) // leave the committed bytes alone
			continue
		}
		r, err := v.LastReceipt(node)
		if err != nil {
			return nil, nil, err
		}
		if r != nil {
			delete(files, p)
			kept = append(kept, node)
		}
	}
	sort.Strings(kept)
	files[vault.ManifestPath] = data
	return files, kept, nil
}

// uncommittedSources lists the compiled contract files, vault-relative,
// whose working-tree bytes are not what the branch holds. An activation
// commits only the manifest and its artifacts, never the user's sources.
func uncommittedSources(set *contractSet) ([]string, error) {
	var out []string
	for _, f := range set.project.Files {
		rel := f.Rel
		if filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, "../") {
			continue // outside the vault
		}
		disk, err := os.ReadFile(filepath.Join(set.vault.Root(), filepath.FromSlash(rel)))
		if err != nil {
			return nil, err
		}
		committed, ok, err := set.vault.ReadFile(rel)
		if err != nil {
			return nil, err
		}
		if !ok || !bytes.Equal(disk, committed) {
			out = append(out, rel)
		}
	}
	return out, nil
}

// sameSpec reports whether two committed spec files say the same thing:
// prose publish stores canonical JSON, forme indented JSON.
func sameSpec(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	sa, errA := canon.ParseSpec(a)
	sb, errB := canon.ParseSpec(b)
	return errA == nil && errB == nil && sa.Hash() == sb.Hash()
}

// isArtifactPath accepts the artifact paths forme writes, so a hand-edited
// active manifest cannot make an activation remove anything else.
func isArtifactPath(p string) bool {
	return path.Clean(p) == p && !strings.Contains(p, "..") &&
		(strings.HasPrefix(p, "dist/canonicalizers/") || strings.HasPrefix(p, "dist/postconditions/"))
}
