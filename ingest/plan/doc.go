// Package plan is the contract between the ingest pipeline and a model —
// any model, the offline engine included: the plan an analysis prompt is
// answered with, the names and argument shapes of the wiki tools a
// generation or enrichment run calls, and the markers prompts wrap their
// fields in so a reader (a person, or the offline engine) finds them.
//
// The package holds shapes and parsing only. It never reads a vault, calls
// a model or writes a page.
package plan
