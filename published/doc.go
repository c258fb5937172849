// Package published owns world-model artifacts: path rules, the directory
// view of structured truth, version addresses, the OPWM1 frame codec and the
// publish decision.
//
// It never writes git objects; the vault package does that.
package published
