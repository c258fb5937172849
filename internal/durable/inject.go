package durable

// Inject consults the installed fault hook for step at path. Packages that
// batch their own writes (the vault writes many git objects and fsyncs them
// together) call it at the same steps a File passes through, so one hook
// drives fault-injection tests across the whole write path.
func Inject(step Step, path string) error { return check(step, path) }
