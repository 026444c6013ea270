package model

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// BackendLlamaCpp is Spec.Backend for models run by llama.cpp's library
// (model/llamacpp): "PATH.gguf@llama.cpp".
const BackendLlamaCpp = "llama.cpp"

// LlamaCppOptions configure the llama.cpp backend. In a spec each is
// written with the name of llama.cpp's own flag ("@ngl=99", "@ts=3,1"); a
// list option takes the rest of its '@' segment, commas included.
type LlamaCppOptions struct {
	// GPULayers (ngl) is how many layers go to the GPUs: -1 all of them
	// (ParseSpec's default, as llama.cpp's), 0 none. Ignored by a library
	// built without a GPU backend.
	GPULayers int
	// SplitMode (sm) spreads the model over several GPUs: "none" (main-gpu
	// only), "layer" (layers and KV cache, llama.cpp's default) or "row".
	SplitMode string
	// TensorSplit (ts) is the proportion of the model per GPU, "3,1".
	TensorSplit string
	// MainGPU (mg) is the GPU of split mode none, and of intermediate
	// results and the KV cache in split mode row.
	MainGPU int
	// RPC (rpc) lists ggml-rpc-server endpoints whose devices join the
	// local ones, "10.0.0.2:50052,10.0.0.3:50052".
	RPC string
	// Threads (t) are llama.cpp's CPU threads (0: hlm's --threads).
	Threads int
	// Context (c) is the positions of each session (0: the model's
	// training context, at most 4096). Unlike llama-server's -c, which its
	// -np slots share, every slot has c positions.
	Context int
	// Slots (np) is the number of sessions whose KV cache is held at once
	// (llama.cpp sequences, 1…256; 0: 4); more sessions take turns.
	Slots int
	// UBatch (ub) is llama.cpp's micro-batch: the most tokens of one
	// evaluation (0: 512). A session's round is never split across two.
	UBatch int
	// FlashAttn (fa) is "on", "off" or "auto" ("": off, which keeps a
	// session's logits independent of how its prefix was evaluated).
	FlashAttn string
	// Repack (repack) is "on" or "off" ("": the backend's default):
	// llama.cpp's CPU weight repacking (its --repack/--no-repack).
	Repack string
	// LoadMode (lm) is how llama.cpp loads the file, its -lm/--load-mode:
	// "auto" (mmap unless a device cannot; "" leaves llama.cpp's
	// default, auto), "none" (read into memory of its own, llama.cpp's
	// former --no-mmap), "mmap", "mlock", "mmap+mlock" or "dio" (direct
	// I/O where available). It changes where the weights live, not the
	// arithmetic.
	LoadMode string
}

// LlamaCppLoadModes are the values of lm, llama.cpp's names of enum
// llama_load_mode in its order (LLAMA_LOAD_MODE_AUTO = -1 first).
var LlamaCppLoadModes = []string{"auto", "none", "mmap", "mlock", "mmap+mlock", "dio"}

// Limits of the llama.cpp options.
const (
	MaxLlamaCppSlots   = 256     // llama.cpp's LLAMA_MAX_SEQ
	MaxLlamaCppContext = 1 << 22 // positions per session
	MaxLlamaCppUBatch  = 1 << 16
	MaxLlamaCppThreads = 1024
)

// llamaCppList are the options whose value is a comma-separated list.
var llamaCppList = map[string]bool{"ts": true, "tensor-split": true, "rpc": true}

// splitOptions splits the options after a path at '@' and ','; a segment
// that starts with a list option (ts=, rpc=) keeps its commas.
func splitOptions(s string) []string {
	var out []string
	for _, seg := range strings.Split(s, "@") {
		key, _, _ := strings.Cut(seg, "=")
		if llamaCppList[key] {
			out = append(out, seg)
			continue
		}
		for _, o := range strings.Split(seg, ",") {
			if o != "" {
				out = append(out, o)
			}
		}
	}
	return out
}

// listOptionMidSegment is the list option (ts, rpc) that follows a comma
// inside an '@' segment of opts, where splitOptions cannot see it ("" if
// none): "np=8,ts=3,1" splits into np=8, ts=3 and a stray "1".
func listOptionMidSegment(opts string) string {
	for _, seg := range strings.Split(opts, "@") {
		parts := strings.Split(seg, ",")
		for _, p := range parts[1:] {
			if key, _, _ := strings.Cut(p, "="); llamaCppList[key] {
				return key
			}
		}
	}
	return ""
}

// llamaCppKeys are the short names of the llama.cpp options, in the order
// an error lists them (each also has llama.cpp's long name).
var llamaCppKeys = []string{"ngl", "sm", "ts", "mg", "rpc", "t", "c", "np", "ub", "fa", "repack", "lm", "ctk", "ctv"}

// cacheTypeKeys are the options of both engines (Spec.CacheTypeK and
// CacheTypeV), listed with llama.cpp's in its help and errors.
var cacheTypeKeys = map[string]bool{"ctk": true, "cache-type-k": true, "ctv": true, "cache-type-v": true}

// llamaCppAliases are llama.cpp's long names of the options.
var llamaCppAliases = map[string]string{
	"n-gpu-layers": "ngl", "gpu-layers": "ngl", "split-mode": "sm", "tensor-split": "ts", "main-gpu": "mg",
	"threads": "t", "ctx-size": "c", "parallel": "np", "ubatch-size": "ub", "flash-attn": "fa",
	"cache-type-k": "ctk", "cache-type-v": "ctv", "load-mode": "lm",
}

// llamaCppHelp says what each of llamaCppKeys does, for LlamaCppHelp.
var llamaCppHelp = map[string]string{
	"ngl":    "layers on the GPUs: -1 all (default), 0 none (no GPU: ignored)",
	"sm":     "split over several GPUs: layer (default), row or none",
	"ts":     "proportion of the model per GPU, ts=3,1 (its own @ segment)",
	"mg":     "the GPU of sm=none, and of the KV cache with sm=row",
	"rpc":    "ggml-rpc-server host:port,… to join (own @ segment; private nets)",
	"t":      "llama.cpp's CPU threads (default: the command's --threads)",
	"c":      "positions per session (default: training context, ≤ 4096)",
	"np":     "sessions in the KV cache at once, 1…256 (default 4)",
	"ub":     "micro-batch: the most tokens of one evaluation (default 512)",
	"fa":     "flash attention: off (default), on or auto",
	"repack": "CPU weight repacking: on or off (default off, for determinism)",
	"lm":     "loading: auto (default), none (read in, no mmap), mmap, mlock, mmap+mlock, dio",
	"ctk":    "KV cache type of keys: f32, f16 (default), bf16 or q8_0 (also on hlm's engine: f32 (its default), f16 or q8_0)",
	"ctv":    "KV cache type of values, as ctk (q8_0 needs fa=on on llama.cpp)",
}

// LlamaCppHelp lists the options of a PATH.gguf@llama.cpp spec, one per
// line, for --help texts.
func LlamaCppHelp() string {
	var b strings.Builder
	for _, k := range llamaCppKeys {
		fmt.Fprintf(&b, "  %-7s %s\n", k, llamaCppHelp[k])
	}
	return b.String()
}

// setLlamaCpp applies a llama.cpp option; ok is false when key is not one.
func (sp *Spec) setLlamaCpp(key, val string, hasVal bool) (ok bool, err error) {
	o := &sp.LlamaCpp
	num := func(lo, hi int) (int, error) {
		n, err := strconv.Atoi(val)
		if !hasVal || err != nil || n < lo || n > hi {
			return 0, fmt.Errorf("%s wants a whole number in %d…%d, got %q", key, lo, hi, val)
		}
		return n, nil
	}
	oneOf := func(allowed ...string) (string, error) {
		for _, a := range allowed {
			if val == a && hasVal {
				return val, nil
			}
		}
		return "", fmt.Errorf("%s wants one of %s, got %q", key, strings.Join(allowed, ", "), val)
	}
	switch key {
	case BackendLlamaCpp:
		if hasVal {
			return true, fmt.Errorf("%s takes no value", key)
		}
		sp.Backend = BackendLlamaCpp
		return true, nil
	case "ngl", "n-gpu-layers", "gpu-layers":
		if val == "all" {
			o.GPULayers = -1
		} else {
			o.GPULayers, err = num(-1, 1<<20)
		}
	case "sm", "split-mode":
		o.SplitMode, err = oneOf("none", "layer", "row")
	case "ts", "tensor-split":
		o.TensorSplit, err = parseTensorSplit(val)
	case "mg", "main-gpu":
		o.MainGPU, err = num(0, 1023)
	case "rpc":
		o.RPC, err = parseRPC(val)
	case "t", "threads":
		o.Threads, err = num(1, MaxLlamaCppThreads)
	case "c", "ctx-size":
		o.Context, err = num(1, MaxLlamaCppContext)
	case "np", "parallel":
		o.Slots, err = num(1, MaxLlamaCppSlots)
	case "ub", "ubatch-size":
		o.UBatch, err = num(1, MaxLlamaCppUBatch)
	case "fa", "flash-attn":
		o.FlashAttn, err = oneOf("on", "off", "auto")
	case "repack":
		o.Repack, err = oneOf("on", "off")
	case "lm", "load-mode":
		o.LoadMode, err = oneOf(LlamaCppLoadModes...)
	case "ctk", "cache-type-k":
		sp.CacheTypeK, err = oneOf("f32", "f16", "bf16", "q8_0")
	case "ctv", "cache-type-v":
		sp.CacheTypeV, err = oneOf("f32", "f16", "bf16", "q8_0")
	default:
		return false, nil
	}
	return true, err
}

// checkLlamaCpp refuses llama.cpp options (opts, the keys given) without
// the backend, and hlm views the backend cannot make; it sets the default
// of ngl.
func (sp *Spec) checkLlamaCpp(opts []string) error {
	given := map[string]string{} // short name → the name it was given as
	for _, k := range opts {
		short := k
		if s, ok := llamaCppAliases[k]; ok {
			short = s
		}
		if first, ok := given[short]; ok {
			return fmt.Errorf("option %s given twice (as %s and %s): give it once", short, first, k)
		}
		given[short] = k
	}
	if sp.Backend != BackendLlamaCpp {
		for _, k := range opts {
			if !cacheTypeKeys[k] {
				return fmt.Errorf("%s is an option of the llama.cpp backend: add @llama.cpp", k)
			}
		}
		for _, t := range []struct{ key, typ string }{{"ctk", sp.CacheTypeK}, {"ctv", sp.CacheTypeV}} {
			if t.typ != "" && t.typ != "f32" && t.typ != "f16" && t.typ != "q8_0" {
				return fmt.Errorf("%s=%s is a KV cache type of llama.cpp's: hlm's engine keeps its cache in f32 (its default), f16 or q8_0 (or add @llama.cpp)", t.key, t.typ)
			}
		}
		return nil
	}
	gpu := false
	for _, k := range opts {
		gpu = gpu || k == "ngl" || k == "n-gpu-layers" || k == "gpu-layers"
	}
	if !gpu {
		sp.LlamaCpp.GPULayers = -1
	}
	switch {
	case sp.Exit > 0:
		return errors.New("exit=N needs hlm's engine: llama.cpp runs whole models and exposes no early exit (drop @llama.cpp)")
	case sp.Quantize != "":
		return fmt.Errorf("%s needs hlm's engine: quantize the file with llama-quantize for llama.cpp (or drop @llama.cpp)", sp.Quantize)
	case sp.CacheTypeV == "q8_0" && (sp.LlamaCpp.FlashAttn == "" || sp.LlamaCpp.FlashAttn == "off"):
		return errors.New("ctv=q8_0 needs fa=on (or auto): llama.cpp quantizes the V cache only with flash attention")
	}
	return nil
}

func parseTensorSplit(v string) (string, error) {
	parts := strings.Split(v, ",")
	if v == "" || len(parts) > 16 {
		return "", fmt.Errorf("ts wants 1…16 comma-separated proportions, got %q", v)
	}
	for i, p := range parts {
		f, err := strconv.ParseFloat(p, 32)
		if err != nil || !(f >= 0 && f < 1e9) {
			return "", fmt.Errorf("ts: proportion %q is not a number ≥ 0", p)
		}
		parts[i] = strconv.FormatFloat(f, 'g', -1, 32)
	}
	return strings.Join(parts, ","), nil
}

// TensorSplitValues are the proportions of TensorSplit.
func (o LlamaCppOptions) TensorSplitValues() []float32 {
	if o.TensorSplit == "" {
		return nil
	}
	var out []float32
	for _, p := range strings.Split(o.TensorSplit, ",") {
		f, _ := strconv.ParseFloat(p, 32)
		out = append(out, float32(f))
	}
	return out
}

// RPCEndpoints are the endpoints of RPC.
func (o LlamaCppOptions) RPCEndpoints() []string {
	if o.RPC == "" {
		return nil
	}
	return strings.Split(o.RPC, ",")
}

func parseRPC(v string) (string, error) {
	parts := strings.Split(v, ",")
	if v == "" || len(parts) > 16 {
		return "", fmt.Errorf("rpc wants 1…16 comma-separated host:port endpoints, got %q", v)
	}
	for _, p := range parts {
		i := strings.LastIndexByte(p, ':')
		if i <= 0 {
			return "", fmt.Errorf("rpc: endpoint %q is not host:port", p)
		}
		if port, err := strconv.Atoi(p[i+1:]); err != nil || port <= 0 || port > 65535 {
			return "", fmt.Errorf("rpc: endpoint %q has no port in 1…65535", p)
		}
		if strings.ContainsAny(p, " @/\\") {
			return "", fmt.Errorf("rpc: endpoint %q has a space, '@' or slash", p)
		}
	}
	return v, nil
}

// llamaCppString is the options' part of Spec.String, in a fixed order,
// each in its own '@' segment.
func (s Spec) llamaCppString() string {
	if s.Backend != BackendLlamaCpp {
		return ""
	}
	o := s.LlamaCpp
	out := "@" + BackendLlamaCpp
	add := func(k, v string) { out += "@" + k + "=" + v }
	if o.GPULayers != -1 {
		add("ngl", strconv.Itoa(o.GPULayers))
	}
	if o.SplitMode != "" {
		add("sm", o.SplitMode)
	}
	if o.TensorSplit != "" {
		add("ts", o.TensorSplit)
	}
	if o.MainGPU != 0 {
		add("mg", strconv.Itoa(o.MainGPU))
	}
	if o.RPC != "" {
		add("rpc", o.RPC)
	}
	for _, kv := range []struct {
		k string
		v int
	}{{"t", o.Threads}, {"c", o.Context}, {"np", o.Slots}, {"ub", o.UBatch}} {
		if kv.v != 0 {
			add(kv.k, strconv.Itoa(kv.v))
		}
	}
	if o.FlashAttn != "" {
		add("fa", o.FlashAttn)
	}
	out += s.cacheTypeString()
	if o.Repack != "" {
		add("repack", o.Repack)
	}
	if o.LoadMode != "" {
		add("lm", o.LoadMode)
	}
	return out
}

// cacheTypeString is the KV cache types' part of Spec.String (among the
// llama.cpp options on that backend, after the views on hlm's).
func (s Spec) cacheTypeString() string {
	out := ""
	if s.CacheTypeK != "" {
		out += "@ctk=" + s.CacheTypeK
	}
	if s.CacheTypeV != "" {
		out += "@ctv=" + s.CacheTypeV
	}
	return out
}
