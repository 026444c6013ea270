package llamacpp

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/hlmproject/hlm/internal/libllama"
	"github.com/hlmproject/hlm/model"
	"github.com/hlmproject/hlm/model/builtin"
	"github.com/hlmproject/hlm/model/gguf"
	"github.com/hlmproject/hlm/model/llama"
	"github.com/hlmproject/hlm/tensor"
	"github.com/hlmproject/hlm/tokenizer"
)

// Defaults of the options a spec leaves out.
const (
	DefaultSlots      = 4
	DefaultUBatch     = 512
	DefaultMaxContext = 4096 // the context when the spec gives none: the model's, at most this
)

// Model is a GGUF model on llama.cpp's library: one llama_context whose
// sequences (Slots of them) hold the sessions' KV caches. It implements
// model.Model and model.Batcher and is safe for concurrent use (one mutex
// serialises the context).
type Model struct {
	name string
	path string
	spec model.Spec
	cfg  model.Config
	tok  *tokenizer.Tokenizer
	lib  *libllama.Lib

	fpOnce sync.Once
	fp     string
	origin string // recorded in the file (llama.RecordedOrigin), or ""

	mu     sync.Mutex
	lm     *libllama.Model
	ctx    *libllama.Context
	closed bool
	ubatch int
	// recomputeEvicted evaluates an evicted session's tokens again instead
	// of saving its state: llama.cpp's sequence state of a model with
	// sliding-window layers does not restore the same cache (measured:
	// logits off by up to 8 on gemma3), so such models recompute.
	recomputeEvicted bool
	slots            []*seqState // the session holding each llama.cpp sequence (nil: free)
	clock            uint64      // LRU clock
	stats            Stats
	testRC           func(rc error) error // tests: replaces a decode's result
	// viewHeld: rows of EvalBatchView are out, in llama.cpp's buffer;
	// evaluations and Close wait on viewFree until ReleaseView.
	viewHeld bool
	viewFree *sync.Cond
}

// Stats counts what the backend did.
type Stats struct {
	Decodes    int // llama_decode calls
	Evictions  int // sequences saved out of the context to make room
	Restores   int // sequences restored from a saved state
	Recomputes int // sequences evaluated again from their tokens
}

var _ model.Model = (*Model)(nil)
var (
	_ model.Batcher     = (*Model)(nil)
	_ model.SkipBatcher = (*Model)(nil)
	_ model.SkipSession = (*Session)(nil)
)

var (
	cacheMu sync.Mutex
	cache   = map[string]*Model{}
)

// OpenSpec parses and opens a spec on the llama.cpp backend (the spec's
// "@llama.cpp" may be left out).
func OpenSpec(s, tokenizerPath string) (*Model, error) {
	sp, err := model.ParseSpec(s)
	if err != nil {
		return nil, err
	}
	if sp.Backend == "" {
		if sp, err = model.ParseSpec(s + "@" + model.BackendLlamaCpp); err != nil {
			return nil, err
		}
	}
	sp.Tokenizer = tokenizerPath
	return Open(sp)
}

// Open loads spec.Path, a GGUF file, on llama.cpp (libllama from
// LibraryPath) with spec.LlamaCpp's options. The model's tokenizer is
// hlm's, read from the same file (or spec.Tokenizer): llama.cpp's
// vocabulary must agree with it token for token, with the same BOS, EOS
// and end-of-generation ids, or the load fails. A spec is loaded once per
// process.
func Open(spec model.Spec) (*Model, error) {
	if spec.Backend != model.BackendLlamaCpp {
		return nil, fmt.Errorf("llamacpp: spec %s is not for the llama.cpp backend", spec)
	}
	key := spec.String() + "\x00" + spec.Tokenizer
	cacheMu.Lock()
	defer cacheMu.Unlock()
	if m := cache[key]; m != nil {
		return m, nil
	}
	m, err := open(spec)
	if err != nil {
		return nil, err
	}
	cache[key] = m
	return m, nil
}

func open(spec model.Spec) (*Model, error) {
	o := spec.LlamaCpp
	path := spec.Path
	if err := checkGGUF(path); err != nil {
		return nil, err
	}
	lib, err := OpenLibrary()
	if err != nil {
		return nil, err
	}
	// hlm's tokenizer of the same file; its reader validates the GGUF
	// container before llama.cpp sees it.
	tokPath := spec.Tokenizer
	if tokPath == "" {
		tokPath = path
	}
	tok, err := llama.LoadTokenizer(tokPath, 0)
	switch {
	case errors.Is(err, gguf.ErrFormat):
		return nil, err // a truncated or broken file (the error names it): say so first
	case err != nil:
		return nil, fmt.Errorf("%s: the llama.cpp backend checks llama.cpp's vocabulary against hlm's tokenizer of the file, which failed: %w", path, err)
	}
	if err := lib.AddRPCServers(o.RPCEndpoints()); err != nil {
		return nil, err
	}
	mp := lib.ModelDefaults()
	mp.NGPULayers = int32(o.GPULayers)
	switch o.SplitMode {
	case "none":
		mp.SplitMode = libllama.SplitNone
	case "row":
		mp.SplitMode = libllama.SplitRow
	case "layer":
		mp.SplitMode = libllama.SplitLayer
	}
	mp.MainGPU = int32(o.MainGPU)
	// Repacked weights make a token's logits depend on where it falls in
	// the micro-batch (measured at Llama-3.2-1B Q4_K_M: batched and alone
	// differ by up to 0.23): off unless the spec says repack=on.
	mp.UseExtraBufts = o.Repack == "on"
	if o.LoadMode != "" {
		mp.LoadMode = libllama.LoadModes[o.LoadMode]
	}
	lm, err := lib.LoadModel(path, mp, o.TensorSplitValues(), o.RPCEndpoints())
	if err != nil {
		return nil, err
	}
	m := &Model{name: spec.String(), path: path, spec: spec, tok: tok, lib: lib, lm: lm, origin: llama.RecordedOrigin(path)}
	if err := m.start(); err != nil {
		lm.Free()
		return nil, err
	}
	acc := m.Accelerators()
	if gpuOptions(o) && len(acc) == 0 {
		notify("%s: the libllama loaded (%s) has no GPU or RPC device (devices: %s), so ngl, sm, ts and mg have no effect: the model runs on the CPU", path, lib.Path(), strings.Join(lib.Devices(), "; "))
	} else if n := len(o.TensorSplitValues()); n > len(acc) {
		notify("%s: ts=%s gives %d proportions for %d devices (%s): the proportions beyond the devices are not used", path, o.TensorSplit, n, len(acc), strings.Join(acc, "; "))
	}
	return m, nil
}

// Evicted says what becomes of a session that leaves its sequence to
// make room for another: "saved and restored", or, for models with
// sliding-window layers, "evaluated again from its tokens".
func (m *Model) Evicted() string {
	if m.recomputeEvicted {
		return "evaluated again from its tokens (sliding-window layers)"
	}
	return "saved and restored"
}

// gpuOptions reports whether o asks for GPUs: ngl other than its default
// (all) or none, or a split over several.
func gpuOptions(o model.LlamaCppOptions) bool {
	return o.GPULayers > 0 || o.SplitMode != "" || o.TensorSplit != "" || o.MainGPU != 0
}

// Accelerators are the devices llama.cpp can offload layers to (GPUs,
// RPC servers; Lib.Accelerators).
func (m *Model) Accelerators() []string { return m.lib.Accelerators() }

// start checks the vocabulary, makes the context and fills the config.
func (m *Model) start() error {
	lm, o := m.lm, m.spec.LlamaCpp
	if err := checkVocab(lm, m.tok); err != nil {
		return fmt.Errorf("%s: %w", m.path, err)
	}
	train := lm.NCtxTrain()
	ctxLen := o.Context
	if ctxLen == 0 {
		ctxLen = min(train, DefaultMaxContext)
	}
	if train > 0 && ctxLen > train {
		return fmt.Errorf("%w: %s: c=%d positions per session, more than the %d the model was trained on", model.ErrUnsupported, m.path, ctxLen, train)
	}
	slots := o.Slots
	if slots == 0 {
		slots = DefaultSlots
	}
	ub := o.UBatch
	if ub == 0 {
		ub = DefaultUBatch
	}
	threads := o.Threads
	if threads == 0 {
		threads = tensor.Threads()
	}
	if uint64(ctxLen)*uint64(slots) > 1<<31 {
		return fmt.Errorf("%w: %s: c=%d × np=%d positions do not fit one context", model.ErrUnsupported, m.path, ctxLen, slots)
	}
	cp := m.lib.ContextDefaults()
	cp.NCtx = uint32(ctxLen * slots)
	cp.NBatch = uint32(ub)
	cp.NUBatch = uint32(ub)
	cp.NSeqMax = uint32(slots)
	// llama.cpp reserves outputs for max(tokens, sequences) and asserts
	// that it fits n_outputs_max (n_batch when 0): a micro-batch smaller
	// than the slots would abort the process.
	cp.NOutputsMax = uint32(max(ub, slots))
	cp.NOutputsMaxPerSeq = 0
	cp.NThreads = int32(threads)
	cp.NThreadsBatch = int32(threads)
	cp.KVUnified = false
	cp.NoPerf = true
	switch o.FlashAttn {
	case "", "off":
		cp.FlashAttnType = libllama.FlashAttnDisabled
	case "on":
		cp.FlashAttnType = libllama.FlashAttnEnabled
	case "auto":
		cp.FlashAttnType = libllama.FlashAttnAuto
	}
	cp.TypeK, cp.TypeV = cacheType(m.spec.CacheTypeK), cacheType(m.spec.CacheTypeV)
	ctx, err := m.lm.NewContext(cp)
	if err != nil {
		return err
	}
	// llama.cpp pads the context (to 256 positions a sequence) and caps the
	// batch at it.
	if got, seqs, gotUB := ctx.NCtxSeq(), ctx.NSeqMax(), ctx.NUBatch(); got < ctxLen || seqs != slots || gotUB > ub || gotUB != ctx.NBatch() {
		ctx.Free()
		return fmt.Errorf("%w: %s: llama.cpp made a context of %d positions × %d sequences, micro-batch %d; hlm asked for %d × %d, %d", libllama.ErrLoad, m.path, got, seqs, gotUB, ctxLen, slots, ub)
	}
	// A library whose CPU backend offers no threadpool (built without the
	// CPU backend) still decodes, on ggml's pool per graph: slower, not
	// wrong.
	_ = ctx.UseThreadpool(threads, threadpoolPoll)
	m.ctx = ctx
	m.ubatch = ctx.NUBatch()
	m.recomputeEvicted = lm.NSWA() > 0
	m.slots = make([]*seqState, slots)
	m.cfg = m.config(ctxLen)
	return nil
}

// threadpoolPoll is the polling level of the context's CPU threadpool
// (libllama.Context.UseThreadpool; llama.cpp's --poll, whose default is
// 50): 0, its threads sleep between graphs rather than spin, leaving the
// cores to hlm's verification of the batch just decoded. It applies to
// builds without OpenMP, whose ggml threads are the pool's.
const threadpoolPoll = 0

// cacheType is the ggml type of a ctk/ctv value ("": F16, llama.cpp's default).
func cacheType(s string) int32 {
	switch s {
	case "f32":
		return libllama.TypeF32
	case "bf16":
		return libllama.TypeBF16
	case "q8_0":
		return libllama.TypeQ8_0
	}
	return libllama.TypeF16
}

// config describes the model in hlm's terms, from llama.cpp's getters and
// the file's metadata (best effort where the architecture is not hlm's).
func (m *Model) config(ctxLen int) model.Config {
	lm := m.lm
	arch, _ := lm.Meta("general.architecture")
	metaInt := func(k string) int {
		v, _ := lm.Meta(arch + "." + k)
		n, _ := strconv.Atoi(v)
		return n
	}
	metaFloat := func(k string) float64 {
		v, _ := lm.Meta(arch + "." + k)
		f, _ := strconv.ParseFloat(v, 64)
		return f
	}
	c := model.Config{Arch: arch, Dim: lm.NEmbd(), Layers: lm.NLayer(), Heads: lm.NHead(), KVHeads: lm.NHeadKV(),
		Vocab: lm.NVocab(), SeqLen: ctxLen, Hidden: metaInt("feed_forward_length"), HeadDim: metaInt("attention.key_length"),
		RopeTheta: metaFloat("rope.freq_base")}
	if c.RopeTheta == 0 {
		c.RopeTheta = 10000
	}
	eps := metaFloat("attention.layer_norm_rms_epsilon")
	if eps == 0 {
		eps = metaFloat("attention.layer_norm_epsilon")
	}
	c.NormEps = float32(eps)
	if c.Heads > 0 && c.HeadDim == c.Dim/c.Heads {
		c.HeadDim = 0
	}
	return c
}

// checkGGUF refuses what is not a GGUF file before llama.cpp reads it.
func checkGGUF(path string) error {
	if builtin.IsBuiltin(path) {
		return fmt.Errorf("%w: %s is built into hlm and runs on hlm's engine; for llama.cpp write it to a file first (hlm convert --model %s --out FILE.gguf) and give FILE.gguf@llama.cpp", model.ErrUnsupported, path, path)
	}
	if _, err := os.Stat(path); err != nil {
		return err
	}
	if !gguf.IsFile(path) {
		return fmt.Errorf("%w: %s is not a GGUF file: the llama.cpp backend reads GGUF only (hlm convert writes one)", model.ErrFormat, path)
	}
	return nil
}

// checkVocab holds llama.cpp's vocabulary to hlm's tokenizer of the same
// file: size, special ids, every token's text and end-of-generation flag.
func checkVocab(lm *libllama.Model, tok *tokenizer.Tokenizer) error {
	n := lm.NVocab()
	mismatch := func(format string, args ...any) error {
		return fmt.Errorf("%w: tokenizer mismatch: "+format+" (llama.cpp would tokenize or stop differently from hlm)", append([]any{model.ErrUnsupported}, args...)...)
	}
	if tok.VocabSize() != n {
		return mismatch("llama.cpp has %d tokens, hlm's tokenizer %d", n, tok.VocabSize())
	}
	if a, b := lm.BOS(), tok.BOS(); a != b {
		return mismatch("BOS is %d for llama.cpp, %d for hlm", a, b)
	}
	if a, b := lm.EOS(), tok.EOS(); a != b {
		return mismatch("EOS is %d for llama.cpp, %d for hlm", a, b)
	}
	for i := range n {
		if a, b := lm.TokenText(i), tok.Piece(i); a != b {
			return mismatch("token %d is %s for llama.cpp, %s for hlm", i, quote(a), quote(b))
		}
		if a, b := lm.IsEOG(i), tok.IsEOG(i); a != b {
			return mismatch("token %d (%s) ends generation for %s only", i, quote(tok.Piece(i)), map[bool]string{true: "llama.cpp", false: "hlm"}[a])
		}
	}
	return nil
}

func quote(s string) string {
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return strconv.Quote(s)
}

// Config is the model's shape; SeqLen is the positions of one session.
// NoAttention says that this backend's sessions cannot capture attention
// probabilities (hybrid's attentionless): ErrNoAttention.
func (m *Model) NoAttention() error { return ErrNoAttention }

// BlockVariant says that this backend's logits at a position are not
// bit-identical between an evaluation of one token and one of a block
// (docs/design.md's determinism contract), which the replica method needs
// of its draft (hybrid's blockVariant).
func (m *Model) BlockVariant() string {
	return "on llama.cpp's library a position's logits differ in their last bits between one-token and block evaluations, so the draft must run on hlm's engine (drop @llama.cpp from the draft's spec)"
}

func (m *Model) Config() model.Config { return m.cfg }

// Tokenizer is hlm's tokenizer of the file, checked against llama.cpp's.
func (m *Model) Tokenizer() *tokenizer.Tokenizer { return m.tok }

// Name is the spec the model was opened from.
func (m *Model) Name() string { return m.name }

// Library is the libllama the model runs on.
func (m *Model) Library() *libllama.Lib { return m.lib }

// Describe is llama.cpp's description of the model ("qwen3 0.6B Q8_0").
func (m *Model) Describe() string { return m.lm.Desc() }

// Spec is the spec the model was opened with.
func (m *Model) Spec() model.Spec { return m.spec }

// Path is the GGUF file.
func (m *Model) Path() string { return m.path }

// NParams is the model's parameter count.
func (m *Model) NParams() uint64 { return m.lm.NParams() }

// SizeBytes is the bytes of the model's tensors.
func (m *Model) SizeBytes() uint64 { return m.lm.Size() }

// SetThreads sets llama.cpp's CPU threads for what follows.
func (m *Model) SetThreads(n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.closed && n > 0 {
		m.ctx.SetThreads(n, n)
		// A pool of n threads; where it cannot be made, the old one serves
		// (ggml caps the threads at its size).
		_ = m.ctx.UseThreadpool(n, threadpoolPoll)
	}
}

// Slots is the number of sessions whose KV caches the context holds at once.
func (m *Model) Slots() int { return len(m.slots) }

// Sequences is how many of the context's sequences hold a session's cache
// now, and how many there are.
func (m *Model) Sequences() (inUse, total int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, st := range m.slots {
		if st != nil {
			inUse++
		}
	}
	return inUse, len(m.slots)
}

// Stats are the backend's counters so far.
func (m *Model) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stats
}

// Fingerprint identifies the computation: a SHA-256 of the GGUF file's
// bytes, the library's version, build and system information (its CPU
// features and backends) and the options that change the arithmetic
// (GPU layers and split, micro-batch, flash attention, KV cache types,
// weight repacking). Equal fingerprints
// mean the same logits within the determinism contract (package doc), not
// across it. It never equals a fingerprint of hlm's engine. Computed once,
// on first use (it reads the whole file).
func (m *Model) Fingerprint() string {
	m.fpOnce.Do(func() {
		h := sha256.New()
		fmt.Fprintf(h, "llama.cpp\x00%s\x00%s\x00%s\x00", m.lib.Version(), m.lib.Commit(), m.lib.SystemInfo())
		o := m.spec.LlamaCpp
		fmt.Fprintf(h, "ngl=%d sm=%s ts=%s mg=%d rpc=%s ub=%d fa=%s ctk=%s ctv=%s repack=%s\x00", o.GPULayers, o.SplitMode, o.TensorSplit, o.MainGPU, o.RPC, m.ubatch, o.FlashAttn, m.spec.CacheTypeK, m.spec.CacheTypeV, o.Repack)
		if f, err := os.Open(m.path); err == nil {
			io.Copy(h, f)
			f.Close()
		}
		m.fp = hex.EncodeToString(h.Sum(nil))
	})
	return m.fp
}

// Origin is the origin the file records (hlm convert writes the
// fingerprint of the model its weights come from: model.OriginKey), else
// Fingerprint. It finds the draft hlm ships for a converted file run on
// llama.cpp, as for the same file on hlm's engine (model/builtin.DraftFor);
// the logits are llama.cpp's all the same.
func (m *Model) Origin() string {
	if m.origin != "" {
		return m.origin
	}
	return m.Fingerprint()
}

// Close frees the context and the model; the sessions fail afterwards.
// The model leaves the cache, so opening its spec again loads it anew.
func (m *Model) Close() error {
	cacheMu.Lock()
	for k, v := range cache {
		if v == m {
			delete(cache, k)
		}
	}
	cacheMu.Unlock()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.waitView()
	if m.closed {
		return nil
	}
	m.closed = true
	m.ctx.Free()
	m.lm.Free()
	for i, st := range m.slots {
		if st != nil {
			st.slot = -1
		}
		m.slots[i] = nil
	}
	return nil
}

// errClosed is returned by sessions of a closed model.
var errClosed = errors.New("llamacpp: the model was closed")
