package libllama

import (
	"fmt"
	"runtime"
	"unsafe"
)

// Model is a loaded llama_model with its vocabulary. Free releases it.
type Model struct {
	l     *Lib
	h     uintptr // struct llama_model *
	vocab uintptr // const struct llama_vocab *
}

// LoadModel loads a GGUF file with p (start from l.ModelDefaults()).
// tensorSplit, when not empty, is copied into the llama_max_devices()
// proportions p.TensorSplit points to. rpc are the RPC endpoints of this
// model (added with AddRPCServers): the devices of other endpoints the
// process added for other models are left out, where llama.cpp's own
// choice would take every device it knows.
func (l *Lib) LoadModel(path string, p ModelParams, tensorSplit []float32, rpc []string) (*Model, error) {
	var split []float32
	if len(tensorSplit) > 0 {
		n := l.MaxDevices()
		if len(tensorSplit) > n {
			return nil, fmt.Errorf("%w: a tensor split of %d devices, this library has at most %d", ErrLoad, len(tensorSplit), n)
		}
		split = make([]float32, n)
		copy(split, tensorSplit)
		p.TensorSplit = &split[0]
	}
	devs := l.devices(rpc)
	if devs != nil {
		p.Devices = uintptr(unsafe.Pointer(&devs[0]))
	}
	mark := logMark()
	h := l.f.modelLoadFromFile(path, p)
	runtime.KeepAlive(split)
	runtime.KeepAlive(devs)
	if h == 0 {
		return nil, fmt.Errorf("%w: %s: %s", ErrLoad, path, orUnknown(logErrorsSince(mark)))
	}
	return &Model{l: l, h: h, vocab: l.f.modelGetVocab(h)}, nil
}

// Device types (enum ggml_backend_dev_type).
const (
	devCPU  = 0
	devGPU  = 1
	devIGPU = 2
)

// devices is the NULL-terminated device list of a model whose RPC
// endpoints are rpc, as llama.cpp would choose it (this model's RPC
// devices first, then the GPUs, else the integrated GPUs; the CPU is
// always there), or nil when no other endpoint's device is registered and
// llama.cpp's own choice is the same.
func (l *Lib) devices(rpc []string) []uintptr {
	mine := map[string]bool{}
	for _, ep := range rpc {
		mine[ep] = true
	}
	var remote, gpus, igpus []uintptr
	foreign := false
	for i := range l.f.backendDevCount() {
		d := l.f.backendDevGet(i)
		switch typ := l.f.backendDevType(d); {
		case l.f.backendRegName(l.f.backendDevBackendReg(d)) == "RPC":
			if mine[l.f.backendDevDescription(d)] {
				remote = append(remote, d)
			} else {
				foreign = true
			}
		case typ == devGPU:
			gpus = append(gpus, d)
		case typ == devIGPU:
			igpus = append(igpus, d)
		}
	}
	if !foreign {
		return nil
	}
	out := append(remote, gpus...)
	if len(gpus) == 0 {
		out = append(out, igpus...)
	}
	return append(out, 0)
}

func orUnknown(s string) string {
	if s == "" {
		return "llama.cpp logged no reason"
	}
	return s
}

// Free releases the model (its contexts must be freed first).
func (m *Model) Free() {
	if m.h != 0 {
		m.l.f.modelFree(m.h)
		m.h = 0
	}
}

// NVocab is the vocabulary size.
func (m *Model) NVocab() int { return int(m.l.f.vocabNTokens(m.vocab)) }

// BOS, EOS and EOT are the special token ids (-1: none).
func (m *Model) BOS() int { return int(m.l.f.vocabBOS(m.vocab)) }

// EOS is the end-of-sequence id (-1: none).
func (m *Model) EOS() int { return int(m.l.f.vocabEOS(m.vocab)) }

// EOT is the end-of-turn id (-1: none).
func (m *Model) EOT() int { return int(m.l.f.vocabEOT(m.vocab)) }

// IsEOG reports whether t ends generation (llama_vocab_is_eog).
func (m *Model) IsEOG(t int) bool { return m.l.f.vocabIsEOG(m.vocab, int32(t)) }

// TokenText is the vocabulary entry of t as the GGUF file stores it.
func (m *Model) TokenText(t int) string { return cString(m.l.f.vocabGetText(m.vocab, int32(t))) }

// NCtxTrain, NEmbd, NLayer, NHead and NHeadKV are the model's
// hyperparameters.
func (m *Model) NCtxTrain() int { return int(m.l.f.modelNCtxTrain(m.h)) }

// NEmbd is the width of the residual stream.
func (m *Model) NEmbd() int { return int(m.l.f.modelNEmbd(m.h)) }

// NLayer is the number of blocks.
func (m *Model) NLayer() int { return int(m.l.f.modelNLayer(m.h)) }

// NHead is the number of query heads.
func (m *Model) NHead() int { return int(m.l.f.modelNHead(m.h)) }

// NHeadKV is the number of key/value heads.
func (m *Model) NHeadKV() int { return int(m.l.f.modelNHeadKV(m.h)) }

// NSWA is the sliding window of the model's local layers (0: none).
func (m *Model) NSWA() int { return int(m.l.f.modelNSWA(m.h)) }

// Size is the bytes of all the model's tensors.
func (m *Model) Size() uint64 { return m.l.f.modelSize(m.h) }

// NParams is the number of parameters.
func (m *Model) NParams() uint64 { return m.l.f.modelNParams(m.h) }

// Desc is llama_model_desc ("qwen3 0.6B Q8_0").
func (m *Model) Desc() string {
	buf := make([]byte, 256)
	n := m.l.f.modelDesc(m.h, &buf[0], uintptr(len(buf)))
	if n < 0 {
		return ""
	}
	return string(buf[:min(int(n), len(buf)-1)])
}

// Meta is a scalar metadata value of the GGUF file as text, and whether
// the key exists.
func (m *Model) Meta(key string) (string, bool) {
	buf := make([]byte, 512)
	n := m.l.f.modelMetaValStr(m.h, key, &buf[0], uintptr(len(buf)))
	if n < 0 {
		return "", false
	}
	if int(n) >= len(buf) {
		buf = make([]byte, n+1)
		n = m.l.f.modelMetaValStr(m.h, key, &buf[0], uintptr(len(buf)))
	}
	return string(buf[:n]), true
}

// cString copies a NUL-terminated C string.
func cString(p *byte) string {
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}
