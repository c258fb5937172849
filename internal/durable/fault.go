package durable

import (
	"errors"
	"strings"
	"sync/atomic"
)

// Step names one point of a durable write at which a fault can be injected.
type Step string

// The steps of a durable write, in order.
const (
	StepWrite   Step = "write"    // writing data to the temporary file (once per write call)
	StepFsync   Step = "fsync"    // fsyncing the temporary file
	StepRename  Step = "rename"   // renaming the temporary file over the target
	StepDirSync Step = "dir-sync" // fsyncing the directory that holds the target
)

// ErrInjected is the error returned by faults built with FailAt.
var ErrInjected = errors.New("injected fault")

type faultFunc func(step Step, path string) error

var fault atomic.Pointer[faultFunc]

// SetFault installs fn as the process-wide fault hook and returns a function
// that restores the previous hook. fn is called before each step with the
// step and the path concerned: the target's path when it is known, otherwise
// the temporary file's path (for StepWrite of a File, whose target is chosen
// only at Commit), and the directory's path for StepDirSync. A nil fn removes
// the hook. fn must be safe for concurrent use.
//
// Use it only in tests:
//
//	defer durable.SetFault(durable.FailAt(durable.StepRename, "refs/heads"))()
func SetFault(fn func(step Step, path string) error) (restore func()) {
	var p *faultFunc
	if fn != nil {
		f := faultFunc(fn)
		p = &f
	}
	old := fault.Swap(p)
	return func() { fault.Store(old) }
}

// FailAt returns a fault hook that fails every occurrence of step whose path
// contains substr (any path when substr is empty) with ErrInjected.
func FailAt(step Step, substr string) func(Step, string) error {
	return func(s Step, path string) error {
		if s == step && strings.Contains(path, substr) {
			return ErrInjected
		}
		return nil
	}
}

// check consults the installed fault hook, if any.
func check(step Step, path string) error {
	if p := fault.Load(); p != nil {
		return (*p)(step, path)
	}
	return nil
}
