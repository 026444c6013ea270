// Package fleet runs several `hlm serve` replicas behind HAProxy on one
// machine: the deployment of docs/deploy.md, driven by a program. The
// deployment test (cmd/hlm) and `hlm loadtest` use it to start the
// replicas and the balancer, kill a replica, restart replicas one at a time
// (drain, exit, start anew) and read HAProxy's view of them.
//
// hlm does not balance anything itself: HAProxy does, in TCP mode, health
// checking every replica's `--health` endpoint (200 only when the model is
// loaded and sessions are accepted). A replica that drains answers 503,
// finishes the rounds it is verifying and exits; the devices reconnect
// through HAProxy to another replica, which opens their sessions again
// from the committed prefix. The server's randomness is a function of
// (seed, round), so the tokens are those of an undisturbed run.
//
// No port is ever bound twice: HAProxy's frontend socket is bound here and
// inherited (bind fd@3), and a restarted replica listens on fresh ports
// that HAProxy learns through its runtime API (set server … addr, set
// server … check-port), as a service-discovery agent would tell it.
package fleet
