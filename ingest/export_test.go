package ingest

// WorkAhead turns working sources ahead (ahead.go) on and off, and
// TakenAhead counts the sources whose turn took what was worked ahead.
var (
	WorkAhead  = &workAhead
	TakenAhead = &takenAhead
)
