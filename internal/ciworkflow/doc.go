// Package ciworkflow holds the test of the pull-request workflow that
// docs/ci.md describes (docs/examples/prose-review.yml): the workflow is
// checked with actionlint, and its steps run, as a runner would run them,
// against a fixture pull request. It is a package of its own so that
// actionlint is linked into this test binary only.
package ciworkflow
