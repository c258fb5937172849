package vault

import (
	"io/fs"
	"syscall"
)

// fillStatSys fills the stat fields git keeps from the file's stat(2) data.
func fillStatSys(fi fs.FileInfo, e *indexEntry) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	e.CtimeS, e.CtimeN = uint32(st.Ctimespec.Sec), uint32(st.Ctimespec.Nsec)
	e.MtimeS, e.MtimeN = uint32(st.Mtimespec.Sec), uint32(st.Mtimespec.Nsec)
	e.Dev, e.Ino = uint32(st.Dev), uint32(st.Ino)
	e.UID, e.GID = st.Uid, st.Gid
	return true
}
