// Package startgc turns the garbage collector off while the packages of a
// command initialize, and Restore turns it back on.
//
// The libraries behind the wiki, search and model commands build tables
// when their packages initialize (a few MB of small objects), which made
// two collections run before a command's first line; nothing is garbage
// yet at that point, so they only cost start-up time. A package's init
// runs once its imports have, and among the packages ready, in order of
// import path: this one, importing only runtime/debug, runs before the
// packages whose paths sort after it (the JSON Schema and Markdown
// libraries among them), not necessarily before all.
package startgc

import "runtime/debug"

var percent = debug.SetGCPercent(-1)

// Restore sets the collector back to what it was (GOGC, default 100).
// main calls it first.
func Restore() { debug.SetGCPercent(percent) }
