// Package schema owns canonical tool schemas: the JSON Schema of a tool's
// arguments in a form that tells an open mapping from an object with
// declared fields, its local validation, and its rewrite into the strict
// dialect providers enforce.
//
// An object schema with a "properties" keyword — even an empty one — has
// declared fields and is closed: the canonical form adds
// "additionalProperties": false when the author left it out. An object
// schema without "properties" is an open mapping whose keys arrive at call
// time: "additionalProperties" true (or absent) accepts any value, a schema
// there types every value. An explicit "additionalProperties": false is
// never opened, and a nullable mapping (type ["object","null"]) keeps
// accepting null.
//
// The package never mutates a schema or an argument document it is given,
// and never silently drops a keyword: a rewrite that would lose meaning is
// refused with the JSON pointer of the spot (LossError).
package schema
