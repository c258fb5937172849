package forme

import "sort"

// Diagnostic codes. Each is documented in docs/diagnostics.md; a test keeps
// the two in step.
const (
	// sources and frontmatter
	CodeNoSources          = "no_sources"
	CodeSourceUnreadable   = "source_unreadable"
	CodeFrontmatterMissing = "frontmatter_missing"
	CodeFrontmatterInvalid = "frontmatter_invalid"
	CodeKindMissing        = "kind_missing"
	CodeKindUnknown        = "kind_unknown"
	CodeKindRetired        = "kind_retired"
	CodeNameMissing        = "name_missing"
	CodeNameDuplicate      = "name_duplicate"
	CodeIDMissing          = "id_missing"
	CodeIDNoncanonical     = "id_noncanonical"
	CodeIDDuplicate        = "id_duplicate"

	// sections
	CodeSectionRetired       = "section_retired"
	CodeSectionUnknown       = "section_unknown"
	CodeSectionNotApplicable = "section_not_applicable"
	CodeSectionRepeated      = "section_repeated"
	CodeMaintainsMissing     = "maintains_missing"
	CodeFacetDuplicate       = "facet_duplicate"
	CodeFacetReserved        = "facet_reserved"
	CodeFacetOutside         = "facet_outside_maintains"
	CodeContinuityInferred   = "continuity_inferred"
	CodeContinuityConflict   = "continuity_conflict"
	CodeEmitsUnresolved      = "emits_unresolved"

	// runtime
	CodeRuntimeKeyUnknown   = "runtime_key_unknown"
	CodeRuntimeValueInvalid = "runtime_value_invalid"

	// tests
	CodeSubjectMissing    = "subject_missing"
	CodeSubjectUnresolved = "subject_unresolved"
	CodeSubjectKind       = "subject_kind"
	CodeExpectsMissing    = "expects_missing"

	// host skills and tools
	CodeSkillInvalid        = "skill_invalid"
	CodeSkillUnresolved     = "skill_unresolved"
	CodeToolInvalid         = "tool_invalid"
	CodeToolUnsupportedKind = "tool_unsupported_kind"
	CodeToolUnresolved      = "tool_unresolved"

	// patterns
	CodePatternInstanceInvalid = "pattern_instance_invalid"
	CodePatternUnresolved      = "pattern_unresolved"
	CodePatternSlotUnknown     = "pattern_slot_unknown"
	CodePatternSlotMissing     = "pattern_slot_missing"
	CodePatternSlotUnresolved  = "pattern_slot_unresolved"
	CodePatternConfigUnknown   = "pattern_config_unknown"

	// wiring
	CodeUnsatisfied = "unsatisfied"
	CodeAmbiguous   = "ambiguous"
	CodeCycle       = "cycle"
	CodeCallerInput = "caller_input"

	// upgrade
	CodeUpgradeReview = "upgrade_review"
)

// CodeInfo describes one diagnostic code.
type CodeInfo struct {
	Code     string
	Severity Severity
	Summary  string
}

var catalog = map[string]CodeInfo{}

func def(code string, sev Severity, summary string) {
	catalog[code] = CodeInfo{Code: code, Severity: sev, Summary: summary}
}

func init() {
	def(CodeNoSources, SeverityInfo, "no *.prose.md file was found under the given paths")
	def(CodeSourceUnreadable, SeverityError, "a source file could not be read")
	def(CodeFrontmatterMissing, SeverityError, "the file has no YAML frontmatter block")
	def(CodeFrontmatterInvalid, SeverityError, "the frontmatter is not valid YAML, not a mapping, not terminated, or has a non-scalar identity field")
	def(CodeKindMissing, SeverityError, "the frontmatter has no kind")
	def(CodeKindUnknown, SeverityError, "the frontmatter kind is not one of responsibility, function, gateway, pattern, test")
	def(CodeKindRetired, SeverityError, "the kind is retired (service, system) and never executes; the message names its replacement and `prose upgrade`")
	def(CodeNameMissing, SeverityWarning, "no frontmatter name; the # title or the file name was used")
	def(CodeNameDuplicate, SeverityError, "two contracts share a name")
	def(CodeIDMissing, SeverityWarning, "a responsibility has no id; its name stands in")
	def(CodeIDNoncanonical, SeverityWarning, "an id is not a 26-character uppercase Crockford base32 UUIDv7")
	def(CodeIDDuplicate, SeverityError, "two responsibilities share an id")
	def(CodeSectionRetired, SeverityError, "a retired section (Ensures, Criteria, Fulfillment, Constraints, Memory, Services, Wiring) never executes; the message names its replacement and `prose upgrade`")
	def(CodeSectionUnknown, SeverityInfo, "an unknown ### section, kept as documentation")
	def(CodeSectionNotApplicable, SeverityWarning, "a canonical section that does not apply to the contract's kind")
	def(CodeSectionRepeated, SeverityInfo, "a section heading repeats; the bodies are read together")
	def(CodeMaintainsMissing, SeverityError, "a responsibility has no ### Maintains")
	def(CodeFacetDuplicate, SeverityError, "a facet is declared twice under ### Maintains")
	def(CodeFacetReserved, SeverityError, "a facet is named @atomic, which is reserved")
	def(CodeFacetOutside, SeverityWarning, "#### headings under a ### section other than Maintains look like facets but are documentation")
	def(CodeRuntimeKeyUnknown, SeverityWarning, "a ### Runtime key prose does not read; it is ignored")
	def(CodeRuntimeValueInvalid, SeverityError, "a ### Runtime value prose cannot use (render kind, timeout, env name, command)")
	def(CodeContinuityInferred, SeverityInfo, "### Continuity names no mode; the wake source was read from its wording")
	def(CodeContinuityConflict, SeverityWarning, "### Continuity contradicts the kind (a gateway that is not external-driven)")
	def(CodeEmitsUnresolved, SeverityError, "a gateway's ### Emits names no responsibility or gateway")
	def(CodeSubjectMissing, SeverityError, "a test has no subject")
	def(CodeSubjectUnresolved, SeverityError, "a test's subject names no contract among the sources")
	def(CodeSubjectKind, SeverityError, "a test's subject is not a responsibility or function")
	def(CodeExpectsMissing, SeverityWarning, "a test has neither ### Expects nor ### Expects Not")
	def(CodeSkillInvalid, SeverityError, "a ### Skills entry is not `name` or `namespace:name`")
	def(CodeSkillUnresolved, SeverityError, "a declared skill is not installed in any skill root")
	def(CodeToolInvalid, SeverityError, "a ### Tools entry is malformed (gh, cli:, mcp:, cli:bin/gh)")
	def(CodeToolUnsupportedKind, SeverityError, "a ### Tools entry uses a namespace other than cli or mcp")
	def(CodeToolUnresolved, SeverityError, "a declared cli tool is not on PATH, or an mcp server is not registered")
	def(CodePatternInstanceInvalid, SeverityError, "a fenced yaml pattern instance is malformed")
	def(CodePatternUnresolved, SeverityError, "a pattern instance names no kind: pattern contract")
	def(CodePatternSlotUnknown, SeverityError, "a pattern instance binds a slot the pattern does not declare")
	def(CodePatternSlotMissing, SeverityError, "a pattern instance leaves a declared slot unbound")
	def(CodePatternSlotUnresolved, SeverityError, "a slot is bound to a name that is no contract or instance")
	def(CodePatternConfigUnknown, SeverityWarning, "a pattern instance sets a config key the pattern does not declare")
	def(CodeUnsatisfied, SeverityError, "a ### Requires need has no producer")
	def(CodeAmbiguous, SeverityError, "a ### Requires need matches several producers and declares no fan-in")
	def(CodeCycle, SeverityError, "subscriptions form a cycle")
	def(CodeUpgradeReview, SeverityWarning, "prose upgrade found a retired form it does not rewrite (kind: system, ### Services, ### Wiring, ### Fulfillment, ### Memory): the author decides how it folds")
	def(CodeCallerInput, SeverityInfo, "a ### Requires need is a caller input (run, run[], caller-provided) and is not wired")
}

// Codes lists every diagnostic code, sorted.
func Codes() []CodeInfo {
	out := make([]CodeInfo, 0, len(catalog))
	for _, c := range catalog {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Code < out[j].Code })
	return out
}

// IsDocumentedCode reports whether code is in the catalog.
func IsDocumentedCode(code string) bool {
	_, ok := catalog[code]
	return ok
}

func severityOf(code string) Severity {
	if c, ok := catalog[code]; ok {
		return c.Severity
	}
	return SeverityError
}
