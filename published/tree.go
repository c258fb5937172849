package published

import "strings"

// treeVisitor receives the directories and files of a sorted entry list as
// a tree; see walkTree.
type treeVisitor interface {
	// enter opens the directory at path, whose last segment is name (the
	// root is entered first, as "", ""). Returning true passes over
	// everything below the directory; leave is then not called for it.
	enter(path, name string) (skip bool, err error)
	// file visits entry i, named name, in the innermost open directory.
	file(i int, name string) error
	// leave closes the innermost open directory, the root last.
	leave() error
}

// walkTree calls v for the directories and files of entries, which must be
// sorted by path bytes with normalized, distinct paths. Byte order keeps
// each directory's entries together, so one pass with a stack of open
// directories visits the tree depth first.
func walkTree(entries []Entry, v treeVisitor) error {
	open := []string{""}
	if _, err := v.enter("", ""); err != nil {
		return err
	}
	skipping, skipDir := false, ""
	for i := range entries {
		dir, name := splitPath(entries[i].Path)
		if skipping {
			if isUnder(dir, skipDir) {
				continue
			}
			skipping = false
		}
		if open[len(open)-1] != dir {
			for len(open) > 1 && !isUnder(dir, open[len(open)-1]) {
				if err := v.leave(); err != nil {
					return err
				}
				open = open[:len(open)-1]
			}
			// Open the directories between the innermost open one and dir.
			for cur := open[len(open)-1]; cur != dir; cur = open[len(open)-1] {
				rest := dir
				if cur != "" {
					rest = dir[len(cur)+1:]
				}
				seg := rest
				if k := strings.IndexByte(rest, '/'); k >= 0 {
					seg = rest[:k]
				}
				p := join(cur, seg)
				skip, err := v.enter(p, seg)
				if err != nil {
					return err
				}
				if skip {
					skipping, skipDir = true, p
					break
				}
				open = append(open, p)
			}
			if skipping {
				continue
			}
		}
		if err := v.file(i, name); err != nil {
			return err
		}
	}
	for range open {
		if err := v.leave(); err != nil {
			return err
		}
	}
	return nil
}

// splitPath splits a slash path into its directory ("" at the top) and
// its last segment.
func splitPath(p string) (dir, name string) {
	if j := strings.LastIndexByte(p, '/'); j >= 0 {
		return p[:j], p[j+1:]
	}
	return "", p
}

// isUnder reports whether the relative path p is dir or lies below it.
func isUnder(p, dir string) bool {
	return dir == "" || p == dir || len(p) > len(dir) && p[len(dir)] == '/' && p[:len(dir)] == dir
}
