// Package program is the registry of programs an agent may call — search,
// lint, read, tree, ingest, enrich, registered by the packages that own
// them — each with a parameter schema, and the "program" tool through
// which an agent calls one by name with an open mapping of keyword
// arguments.
//
// The tool's args mapping stays open on the wire (its keys depend on the
// program named), and is checked here against that program's parameters:
// an unknown program, a keyword the program does not take, or a value of
// the wrong type is refused with an error naming it, which the agent loop
// returns to the model.
//
// The package runs what is registered and nothing else; it never reaches
// the network or the file system itself.
package program
