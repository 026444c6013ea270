package libllama

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"
)

// canary fills the buffer the library's default-params functions write
// into: the bytes past the struct keep it.
const canary = 0xA5

// field is one default value the layout check expects at an offset.
type field struct {
	name string
	off  int
	size int    // 1, 4 or 8
	want uint64 // little-endian bits
}

func f32bits(v float32) uint64 { return uint64(math.Float32bits(v)) }

func i32bits(v int32) uint64 { return uint64(uint32(v)) }

// Defaults of llama.cpp 0.5.0 at the offsets of include/llama.h.
var (
	modelDefaults = []field{
		{"devices", 0, 8, 0},
		{"n_gpu_layers", 16, 4, i32bits(-1)},
		{"split_mode", 20, 4, SplitLayer},
		{"load_mode", 24, 4, i32bits(-1)},
		{"lazy_mode", 28, 4, 1},
		{"main_gpu", 32, 4, 0},
		{"tensor_split", 40, 8, 0},
		{"kv_overrides", 64, 8, 0},
		{"vocab_only", 72, 1, 0},
		{"use_extra_bufts", 74, 1, 1},
		{"load_mtp", 77, 1, 0},
	}
	contextDefaults = []field{
		{"n_ctx", 0, 4, 512},
		{"n_batch", 4, 4, 2048},
		{"n_ubatch", 8, 4, 512},
		{"n_seq_max", 12, 4, 1},
		{"n_outputs_max_per_seq", 24, 4, 1},
		{"flash_attn_type", 52, 4, i32bits(FlashAttnAuto)},
		{"yarn_ext_factor", 64, 4, f32bits(-1)},
		{"defrag_thold", 84, 4, f32bits(-1)},
		{"type_k", 104, 4, TypeF16},
		{"type_v", 108, 4, TypeF16},
		{"offload_kqv", 129, 1, 1},
		{"swa_full", 132, 1, 1},
		{"kv_unified", 133, 1, 0},
		{"ctx_other", 152, 8, 0},
	}
)

// checkLayout compares the library's llama_model_params and
// llama_context_params with the layout compiled into this package: their
// sizes (on amd64, the bytes the library writes when it returns them) and
// their default values at the pinned offsets.
func (l *Lib) checkLayout() error {
	mp, err := defaultsBytes("llama_model_params", l.f.rawModelDefaults, modelParamsExtent, func() []byte {
		v := l.f.modelDefaultParams()
		return append([]byte(nil), unsafe.Slice((*byte)(unsafe.Pointer(&v)), unsafe.Sizeof(v))...)
	})
	if err != nil {
		return err
	}
	if err := checkFields("llama_model_params", mp, modelDefaults); err != nil {
		return err
	}
	cp, err := defaultsBytes("llama_context_params", l.f.rawContextDefaults, contextParamsSize, func() []byte {
		v := l.f.contextDefaultParams()
		return append([]byte(nil), unsafe.Slice((*byte)(unsafe.Pointer(&v)), unsafe.Sizeof(v))...)
	})
	if err != nil {
		return err
	}
	if err := checkFields("llama_context_params", cp, contextDefaults); err != nil {
		return err
	}
	return l.checkThreadpoolLayout()
}

// defaultsBytes returns the bytes of a default-params struct: through raw
// (a guarded buffer whose written extent must be extent) when set, else
// through the typed call.
func defaultsBytes(name string, raw func(*byte) uintptr, extent int, typed func() []byte) ([]byte, error) {
	if raw == nil {
		return typed(), nil
	}
	buf := make([]byte, 1024)
	for i := range buf {
		buf[i] = canary
	}
	raw(&buf[0])
	got := 0
	for i, b := range buf {
		if b != canary {
			got = i + 1
		}
	}
	if got != extent {
		return nil, fmt.Errorf("%w: the library's %s is %d bytes, the llama.h hlm was built for has %d: hlm supports %s", ErrVersion, name, got, extent, SupportedVersions)
	}
	return buf[:extent], nil
}

func checkFields(name string, b []byte, fields []field) error {
	for _, f := range fields {
		var got uint64
		switch f.size {
		case 1:
			got = uint64(b[f.off])
		case 4:
			got = uint64(binary.LittleEndian.Uint32(b[f.off:]))
		case 8:
			got = binary.LittleEndian.Uint64(b[f.off:])
		}
		if got != f.want {
			return fmt.Errorf("%w: the library's default %s.%s (offset %d) is %#x, the llama.h hlm was built for has %#x there: its struct layout differs; hlm supports %s", ErrVersion, name, f.name, f.off, got, f.want, SupportedVersions)
		}
	}
	return nil
}
