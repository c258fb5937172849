// Package browsertest drives a headless Chromium (Debian package chromium)
// from tests, with no network: it opens local files, evaluates
// expressions, reads computed styles and takes screenshots, so HTML the
// project writes is checked by a real browser rather than by a snapshot.
//
// It is for tests only. It never reaches the network (the browser runs with
// every background service off and a proxy that goes nowhere) and never
// installs anything: without a browser a test skips, except under CI=true,
// where it fails.
package browsertest
