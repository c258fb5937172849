// Package serve is prose serve: a long-running reconciler over a vault
// that takes outside input over HTTP and fires schedules.
//
//   - Each gateway route of ### Receives ("POST /hooks/x") takes JSON
//     deliveries. A delivery is checked (signature when the gateway's
//     secret is configured, then the payload), recorded durably as the
//     gateway's world-model through the vault's one write path, and only
//     then answered 202 with its delivery id (the gateway receipt's
//     content hash); no render starts between the record and the answer.
//     A refused delivery (400, 401, 413, 415, 503) records nothing.
//   - Deliveries in flight are bounded (Config.Queue): past it the answer
//     is 503 with Retry-After, and nothing is recorded. Downstream wakes
//     are the reconciler's, which keeps one wake per node and folds wakes
//     that arrive during a render into one follow-up.
//   - One worker drains the reconciler: renders are serialized.
//   - The scheduler sleeps until the next event (a ### Schedule cron
//     minute, a self-driven cadence after the node's last receipt, a
//     valid_until lapsing) on an injectable Clock.
//   - /health, /status, /receipts and the wiki (read-only, with the pages'
//     CSP) are served read-only.
//
// docs/runtime.md §prose serve is the user's account.
package serve
