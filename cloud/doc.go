// Package cloud is the server side of the networked system (`hlm serve`):
// it loads the LLM once, accepts device connections speaking package wire,
// runs one hybrid.Server per session, and evaluates the verification blocks
// of sessions that arrive together in one batched LLM pass.
//
// Each connection has its own goroutine that reads frames, checks them and
// writes answers; verification goes through a single batcher goroutine that
// owns the LLM. A slow or hostile peer can only stall its own connection:
// frames are size-limited, reads and writes have deadlines, malformed input
// gets an Error frame and the connection is closed, and sessions are
// isolated from each other.
//
// After the LLM pass, the batch's verifications run on hlm's threads, one
// session each. On a GPU they, not the pass, bound the server: each
// verified position is a distribution over the whole vocabulary on the CPU
// (docs/BENCHMARKS.md, "On a GPU: NVIDIA H200"). So the server reads a
// llama.cpp model's logits into one buffer it reuses (no allocation per
// row), and verifies with hybrid.Job.FinishVerdict, which computes a
// distribution only when verification reaches its position and recycles
// its buffer.
//
// Sessions outlive their connection for IdleTimeout, so a device that lost
// its connection reconnects, resumes the session and re-sends the upload
// that was in flight: a round the server already verified is answered from
// its cache, so nothing is lost or duplicated. After a server restart the
// device opens a new session with its committed prefix; since the server's
// randomness is a function of (seed, round), the continuation is the same.
// A device that ends a generation with Park leaves its session detached in
// the same way, for a conversation's next turn: an Open that keeps the
// session's first tokens (checked by their hash) continues it with a new
// prompt and parameters, evaluating only the new tokens
// (hybrid.Server.Continue).
//
// Several servers can run as replicas behind a TCP load balancer
// (docs/deploy.md, package fleet). Health reports whether a server takes
// new sessions (HealthHandler serves it as /healthz for the balancer's
// checks); Drain makes it report otherwise while it keeps serving, and
// Shutdown then ends every connection at a round boundary — a round being
// verified gets its verdict first — so its devices move to another replica
// without losing a token. A full server makes room by dropping its least
// recently used session that has no connection.
package cloud
