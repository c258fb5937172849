package mergefile

import (
	"github.com/prose-store/prose/vault"
	"github.com/prose-store/prose/wiki"
)

// The vault's pull merges the wiki's pages, and the files beside the
// nodes, by these rules.
func init() {
	vault.RegisterFileMerge(mergeForVault, wiki.Node)
}

func mergeForVault(p string, base, ours, theirs []byte, choose func(vault.FileConflict) string) (vault.FileMerge, error) {
	conv := func(c Conflict) vault.FileConflict {
		return vault.FileConflict{Path: c.Path, Slot: c.Slot, Key: c.Key, Kind: c.Kind, ID: c.ID(), Detail: c.Detail}
	}
	r, err := MergeChoosing(p, base, ours, theirs, func(c Conflict) string { return choose(conv(c)) })
	if err != nil {
		return vault.FileMerge{}, err
	}
	out := vault.FileMerge{Merged: r.Merged, Removed: r.Removed, Handled: r.Handled}
	for _, c := range r.Conflicts {
		out.Conflicts = append(out.Conflicts, conv(c))
	}
	return out, nil
}
