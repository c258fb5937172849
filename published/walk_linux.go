//go:build linux

package published

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"sync"

	"golang.org/x/sys/unix"
)

// On Linux the walk reads directories with getdents(2) and stats each entry
// with fstatat(2) relative to its directory's descriptor: the kernel resolves
// one name instead of the whole path, and no path string is built for a
// stat. Measured on a 10,000-file tree this is about 1.5× faster than
// os.ReadDir followed by os.Lstat of each full path.

// dirHandle is an open directory.
type dirHandle struct{ fd int }

// openRoot opens the directory at the absolute path dir.
func openRoot(dir string) (dirHandle, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return dirHandle{fd: -1}, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	return dirHandle{fd: fd}, nil
}

// openSub opens the subdirectory name of d without following a symlink.
func (d dirHandle) openSub(name string) (dirHandle, error) {
	for {
		fd, err := unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return dirHandle{fd: -1}, err
		}
		return dirHandle{fd: fd}, nil
	}
}

// close releases the directory; call it once per handle: a second close
// of the same number closes whatever file the process opened under it
// since (another goroutine's directory, a test's RemoveAll).
func (d dirHandle) close() {
	if d.fd >= 0 {
		unix.Close(d.fd)
	}
}

// direntBufs recycles getdents buffers between directories.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 16<<10); return &b }}

// readNames returns the names in d (without "." and ".."), each with its
// kind when the file system reports it (kindUnknown otherwise).
func (d dirHandle) readNames() ([]dirName, error) {
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	var names []dirName
	for {
		n, err := unix.Getdents(d.fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return names, nil
		}
		// struct linux_dirent64: ino u64, off i64, reclen u16, type u8, name.
		const nameOff = 19
		for off := 0; off+nameOff <= n; {
			reclen := int(binary.NativeEndian.Uint16(buf[off+16:]))
			if reclen <= nameOff || off+reclen > n {
				return nil, errors.New("malformed directory entry from getdents")
			}
			typ := buf[off+18]
			raw := buf[off+nameOff : off+reclen]
			l := 0
			for l < len(raw) && raw[l] != 0 {
				l++
			}
			off += reclen
			if l == 1 && raw[0] == '.' || l == 2 && raw[0] == '.' && raw[1] == '.' {
				continue
			}
			k := kindUnknown
			switch typ {
			case unix.DT_REG:
				k = kindFile
			case unix.DT_DIR:
				k = kindDir
			case unix.DT_LNK:
				k = kindLink
			case unix.DT_UNKNOWN:
			default:
				k = kindOther
			}
			names = append(names, dirName{name: string(raw[:l]), kind: k})
		}
	}
}

// lstat returns the stat data of name in d without following a symlink.
func (d dirHandle) lstat(name string) (fileStat, error) {
	var st unix.Stat_t
	for {
		err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fileStat{}, err
		}
		return statOf(&st), nil
	}
}

// statPath returns the stat data of the file at the absolute path p,
// following symlinks (used for the targets of links).
func statPath(p string) (fileStat, error) {
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		return fileStat{}, &fs.PathError{Op: "stat", Path: p, Err: err}
	}
	return statOf(&st), nil
}

// statOf converts the kernel's stat data.
func statOf(st *unix.Stat_t) fileStat {
	return fileStat{
		size:  st.Size,
		mtime: st.Mtim.Nano(),
		ctime: st.Ctim.Nano(),
		ino:   st.Ino,
		mode:  st.Mode,
	}
}

// kindOfMode classifies a raw st_mode.
func kindOfMode(mode uint32) nameKind {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG:
		return kindFile
	case unix.S_IFDIR:
		return kindDir
	case unix.S_IFLNK:
		return kindLink
	}
	return kindOther
}

// describeMode names the type of a non-regular file for error messages.
func describeMode(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFIFO:
		return "a named pipe"
	case unix.S_IFSOCK:
		return "a socket"
	case unix.S_IFCHR:
		return "a character device"
	case unix.S_IFBLK:
		return "a block device"
	}
	return fmt.Sprintf("a special file (mode %#o)", mode)
}
