// Package edge is the device side of the networked system (`hlm edge`): it
// runs the SLM, the policies and the codecs of package hybrid and sends its
// uploads to an `hlm serve` over a real connection, optionally shaped by a
// channel model so that a loopback link behaves like a slow wireless one.
//
// Remote is the hybrid.Verifier that crosses the network. It survives
// dropped connections: it reconnects with backoff, resumes the session (or,
// when the server lost it, opens a new one with the committed prefix) and
// re-sends the upload that was in flight, so the generation continues
// without losing or duplicating a token.
//
// Conversations, set on a Generator, parks each finished generation's
// session on the server (Remote.Park) with the device's draft session, and
// continues the one a later prompt begins with — a chat's next turn —
// sending only the new tokens (docs/protocol.md, "Conversations").
package edge
