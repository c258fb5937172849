package reactor

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// writeFiles writes files (slash paths) under dir, creating it.
func writeFiles(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for p, data := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// treeDigest hashes every path, type and content below dir, so any edit,
// addition, removal or chmod of the inputs shows.
func treeDigest(dir string) (string, error) {
	type ent struct{ path, kind, sum string }
	var ents []ent
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		e := ent{path: filepath.ToSlash(rel), kind: info.Mode().String()}
		switch {
		case info.Mode().IsRegular():
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			h := sha256.New()
			_, err = io.Copy(h, f)
			f.Close()
			if err != nil {
				return err
			}
			e.sum = hex.EncodeToString(h.Sum(nil))
		case info.Mode()&fs.ModeSymlink != 0:
			t, _ := os.Readlink(p)
			e.sum = t
		}
		ents = append(ents, e)
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].path < ents[j].path })
	h := sha256.New()
	for _, e := range ents {
		io.WriteString(h, e.path+"\x00"+e.kind+"\x00"+e.sum+"\n")
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// isEmptyTree reports whether dir holds no file at any depth.
func isEmptyTree(dir string) (bool, error) {
	empty := true
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			empty = false
			return fs.SkipAll
		}
		return nil
	})
	return empty, err
}
