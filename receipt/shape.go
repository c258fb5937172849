package receipt

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/prose-store/prose/canon"
)

// MaxFailureReason is the longest failure_reason, in characters (Unicode
// code points), that a failed receipt carries.
const MaxFailureReason = 500

// CheckBasic checks what every well-formed receipt satisfies, those of the
// reference ledgers included: schema is Schema; hash_algorithm is known;
// content_hash, prev (when not null) and every wake ref are tokens in
// hash_algorithm; node is not empty; status and wake.source are known
// values; fingerprints holds AtomicFacet; token counts are not negative.
// Fingerprint tokens are opaque and not judged. The error lists every rule
// broken.
func (r *Receipt) CheckBasic() error {
	return shapeError(r, r.basicProblems())
}

// CheckShape checks a receipt prose writes: CheckBasic, and also that
// cost.surprise_cause equals wake.source; that a skipped receipt has an empty
// semantic_diff and no fresh tokens; and that a failed receipt's
// semantic_diff holds at most failure_reason, a non-empty single line of at
// most MaxFailureReason characters with secrets already redacted (see
// FailureReason). The reference corpus breaks some of these (failed receipts
// with an empty semantic_diff are fine; others are not), so verify reference
// ledgers with CheckBasic. The error lists every rule broken.
func (r *Receipt) CheckShape() error {
	problems := r.basicProblems()
	if r.Cost.SurpriseCause != r.Wake.Source {
		problems = append(problems, fmt.Sprintf("cost.surprise_cause %q differs from wake.source %q", r.Cost.SurpriseCause, r.Wake.Source))
	}
	switch r.Status {
	case Skipped:
		if len(r.SemanticDiff) != 0 {
			problems = append(problems, "a skipped receipt must have an empty semantic_diff")
		}
		if r.Cost.Tokens.Fresh != 0 {
			problems = append(problems, fmt.Sprintf("a skipped receipt spends no fresh tokens, found %d", r.Cost.Tokens.Fresh))
		}
	case Failed:
		for _, k := range slices.Sorted(maps.Keys(r.SemanticDiff)) {
			v := r.SemanticDiff[k]
			if k != "failure_reason" {
				problems = append(problems, fmt.Sprintf("a failed receipt's semantic_diff holds only failure_reason, found %q", k))
				continue
			}
			if p := failureReasonProblem(v); p != "" {
				problems = append(problems, p)
			}
		}
	}
	return shapeError(r, problems)
}

// failureReasonProblem judges a failure_reason value; "" means it is fine.
func failureReasonProblem(v any) string {
	s, ok := v.(string)
	switch {
	case !ok:
		return fmt.Sprintf("semantic_diff.failure_reason must be a string, found %s", kind(v))
	case strings.TrimSpace(s) == "":
		return "semantic_diff.failure_reason is empty (leave it out instead)"
	case strings.ContainsAny(s, "\r\n"):
		return "semantic_diff.failure_reason must be a single line"
	case utf8.RuneCountInString(s) > MaxFailureReason:
		return fmt.Sprintf("semantic_diff.failure_reason has %d characters, more than %d", utf8.RuneCountInString(s), MaxFailureReason)
	case RedactSecrets(s) != s:
		return "semantic_diff.failure_reason holds what looks like a secret (build it with FailureReason)"
	}
	return ""
}

// basicProblems returns one sentence per CheckBasic rule the receipt breaks.
func (r *Receipt) basicProblems() []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if r.Schema != Schema {
		add("schema %q is not %q", r.Schema, Schema)
	}
	a, err := r.algorithm()
	if err != nil {
		add("hash_algorithm %q is not \"blake3\" or \"sha256\"", r.HashAlgorithm)
	}
	checkToken := func(tok, what string, i int) {
		if err != nil {
			return // already reported: the algorithm is unknown
		}
		ta, perr := canon.CheckToken(tok)
		if perr == nil && ta == a {
			return
		}
		if i >= 0 {
			what = fmt.Sprintf("%s[%d]", what, i)
		}
		if perr != nil {
			add("%s %q is not a hash token (want %s:<64 hex digits>)", what, tok, a)
		} else {
			add("%s %q is not a %s token like the receipt's hash_algorithm", what, tok, a)
		}
	}
	checkToken(r.ContentHash, "content_hash", -1)
	if r.Prev != nil {
		checkToken(*r.Prev, "prev", -1)
	}
	for i, ref := range r.Wake.Refs {
		checkToken(ref, "wake.refs", i)
	}
	if r.Node == "" {
		add("node is empty")
	}
	switch r.Status {
	case Rendered, Skipped, Failed:
	default:
		add("status %q is not rendered, skipped or failed", r.Status)
	}
	switch r.Wake.Source {
	case WakeInput, WakeSelf, WakeExternal:
	default:
		add("wake.source %q is not input, self or external", r.Wake.Source)
	}
	if _, ok := r.Fingerprints[AtomicFacet]; !ok {
		add("fingerprints has no %q entry", AtomicFacet)
	}
	if r.Cost.Tokens.Fresh < 0 || r.Cost.Tokens.Fresh > maxTokens {
		add("cost.tokens.fresh %d is not an integer from 0 to 2^53-1", r.Cost.Tokens.Fresh)
	}
	if r.Cost.Tokens.Reused < 0 || r.Cost.Tokens.Reused > maxTokens {
		add("cost.tokens.reused %d is not an integer from 0 to 2^53-1", r.Cost.Tokens.Reused)
	}
	return problems
}

// shapeError turns rule sentences into one error naming the receipt.
func shapeError(r *Receipt, problems []string) error {
	switch len(problems) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("receipt of node %q: %s", r.Node, problems[0])
	}
	errs := make([]error, len(problems))
	for i, p := range problems {
		errs[i] = errors.New(p)
	}
	return fmt.Errorf("receipt of node %q breaks %d rules:\n%w", r.Node, len(problems), errors.Join(errs...))
}
