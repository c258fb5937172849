package vault

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"golang.org/x/sys/unix"
)

// dirStat lstats files of the work tree relative to an open descriptor of
// their directory (fstatat(2)), so checking the ≈ 1,000 files of a node
// walks one path component per file instead of the vault root's whole
// path, and allocates no FileInfo. Names come in index order, so files of
// one directory come together and each directory is opened once.
type dirStat struct {
	root string
	dir  string
	fd   int
}

func newDirStat(root string) *dirStat { return &dirStat{root: root, fd: -1} }

// entry fills e with the stat data git keeps for rel (slash-separated,
// relative to the root), the same fields fillStat fills, and reports
// whether rel is a regular file.
func (d *dirStat) entry(rel string, e *indexEntry) bool {
	dir, base := "", rel
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		dir, base = rel[:i], rel[i+1:]
	}
	if d.fd < 0 || dir != d.dir {
		d.close()
		fd, err := unix.Open(filepath.Join(d.root, filepath.FromSlash(dir)), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
		if err != nil {
			return false
		}
		d.fd, d.dir = fd, dir
	}
	var st unix.Stat_t
	for {
		err := unix.Fstatat(d.fd, base, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return false
		}
		break
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return false
	}
	e.CtimeS, e.CtimeN = uint32(st.Ctim.Sec), uint32(st.Ctim.Nsec)
	e.MtimeS, e.MtimeN = uint32(st.Mtim.Sec), uint32(st.Mtim.Nsec)
	e.Dev, e.Ino = uint32(st.Dev), uint32(st.Ino)
	e.UID, e.GID = st.Uid, st.Gid
	e.Size = uint32(st.Size)
	if os.FileMode(st.Mode)&0o111 != 0 {
		e.Mode = uint32(filemode.Executable)
	} else {
		e.Mode = uint32(filemode.Regular)
	}
	return true
}

func (d *dirStat) close() {
	if d.fd >= 0 {
		_ = unix.Close(d.fd)
		d.fd, d.dir = -1, ""
	}
}
