// Package prompt owns prompt templates: the built-in prompts of the wiki
// pipeline (analysis, generation, enrichment), their declared fields, the
// vault overrides that replace them, and rendering.
//
// Rendering replaces {field} only for the template's declared fields.
// Every other brace text — CSS such as alert-{info|warning|success|error},
// JSON examples such as {"a":{"b":1}}, {undeclared} — is left exactly as
// written, and a substituted value is never parsed again. A missing value
// for a declared field is an error that names it. A template may declare
// the str.format dialect (prompts ported from Python), which also turns
// {{ and }} into single literal braces.
//
// A vault overrides a built-in prompt with the file prompts/NAME.md at its
// root (docs/models.md). This package reads files it is pointed at and
// never writes any.
package prompt
