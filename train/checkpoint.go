package train

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/hlmproject/hlm/internal/atomicfile"
	"github.com/hlmproject/hlm/model/gguf"
)

// A checkpoint is a GGUF file (architecture "hlm.train") holding everything
// a run needs to continue bit for bit: the parameters ("param.NAME"), the
// optimizer's moments ("adam_m.NAME", "adam_v.NAME"), the step, the shape,
// the frozen tensors, the optimizer's settings and the caller's metadata
// (the run's configuration, its learning curve so far). Reading it reuses
// the validated, fuzzed GGUF reader.

const (
	ckptArch    = "hlm.train"
	ckptVersion = 1
)

// ErrCheckpoint marks a file that is not a usable training checkpoint.
var ErrCheckpoint = errors.New("not a usable training checkpoint")

// State is what a checkpoint holds.
type State struct {
	Params *Params[float32]
	Opt    *Optimizer[float32]
	Meta   map[string]string
}

func f32Bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// SaveCheckpoint writes s to path atomically: a crash, Ctrl-C or a full
// disk leaves the previous checkpoint in place.
func SaveCheckpoint(path string, s State) error {
	p, o := s.Params, s.Opt
	gw := gguf.NewWriter()
	gw.AddString("general.architecture", ckptArch)
	gw.AddUint32("hlm.train.version", ckptVersion)
	shape, _ := json.Marshal(p.Shape)
	gw.AddString("hlm.train.shape", string(shape))
	opt, _ := json.Marshal(o.Config)
	gw.AddString("hlm.train.adamw", string(opt))
	gw.AddUint64("hlm.train.step", uint64(o.Step))
	var frozen []string
	for _, t := range p.Tensors {
		if t.Frozen {
			frozen = append(frozen, t.Name)
		}
	}
	gw.AddStrings("hlm.train.frozen", frozen)
	meta, _ := json.Marshal(s.Meta)
	gw.AddString("hlm.train.meta", string(meta))
	for _, t := range p.Tensors {
		dims := []uint64{uint64(t.Cols), uint64(t.Rows)}
		if t.Rows == 1 {
			dims = dims[:1]
		}
		for _, part := range []struct {
			prefix string
			data   []float32
		}{{"param.", p.Data}, {"adam_m.", o.M}, {"adam_v.", o.V}} {
			gw.AddTensor(part.prefix+t.Name, dims, gguf.F32, f32Bytes(part.data[t.Off:t.Off+t.Size()]))
		}
	}
	if err := gw.Err(); err != nil {
		return err
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		_, err := gw.WriteTo(w)
		return err
	})
}

// LoadCheckpoint reads a checkpoint written by SaveCheckpoint. Any
// inconsistency (a missing tensor, a wrong shape, non-finite values) is an
// error wrapping ErrCheckpoint.
func LoadCheckpoint(path string) (State, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return State{}, fmt.Errorf("%w: %s: %w", ErrCheckpoint, path, err)
	}
	defer f.Close()
	s, err := readCheckpoint(f)
	if err != nil {
		return State{}, fmt.Errorf("%w: %s: %w", ErrCheckpoint, path, err)
	}
	return s, nil
}

func readCheckpoint(f *gguf.File) (State, error) {
	if a := f.Architecture(); a != ckptArch {
		return State{}, fmt.Errorf("architecture %q, want %q", a, ckptArch)
	}
	if v, err := f.Uint("hlm.train.version"); err != nil || v != ckptVersion {
		return State{}, fmt.Errorf("checkpoint version %d (%v), this hlm reads %d", v, err, ckptVersion)
	}
	str := func(key string) (string, error) { return f.String(key) }
	var shape Shape
	var cfg AdamW
	meta := map[string]string{}
	for _, kv := range []struct {
		key string
		dst any
	}{{"hlm.train.shape", &shape}, {"hlm.train.adamw", &cfg}, {"hlm.train.meta", &meta}} {
		js, err := str(kv.key)
		if err != nil {
			return State{}, err
		}
		if err := json.Unmarshal([]byte(js), kv.dst); err != nil {
			return State{}, fmt.Errorf("%s: %w", kv.key, err)
		}
	}
	if err := cfg.Validate(); err != nil {
		return State{}, fmt.Errorf("optimizer settings: %w", err)
	}
	step, err := f.Uint("hlm.train.step")
	if err != nil {
		return State{}, err
	}
	if step > math.MaxInt32 {
		return State{}, fmt.Errorf("step %d", step)
	}
	// The shape is checked before NewParams allocates anything from it:
	// the tensors must be in the file, so the file's size bounds the shape.
	if err := shape.Validate(); err != nil {
		return State{}, err
	}
	var total uint64
	for _, ti := range f.Tensors {
		total += ti.NumElements()
	}
	if n := shape.count(); total != 3*n {
		return State{}, fmt.Errorf("the file holds %d values, shape %+v needs 3 × %d", total, shape.Config, n)
	}
	p, err := NewParams[float32](shape)
	if err != nil {
		return State{}, err
	}
	frozen, err := f.Strings("hlm.train.frozen")
	if err != nil {
		return State{}, err
	}
	if err := p.Freeze(true, frozen...); err != nil {
		return State{}, err
	}
	o := NewOptimizer(cfg, p)
	o.Step = int(step)
	for _, t := range p.Tensors {
		for _, part := range []struct {
			prefix string
			data   []float32
		}{{"param.", p.Data}, {"adam_m.", o.M}, {"adam_v.", o.V}} {
			name := part.prefix + t.Name
			info, ok := f.Tensor(name)
			if !ok {
				return State{}, fmt.Errorf("tensor %q missing", name)
			}
			if info.Type != gguf.F32 || info.NumElements() != uint64(t.Size()) {
				return State{}, fmt.Errorf("tensor %q is %v with %d elements, want F32 with %d", name, info.Type, info.NumElements(), t.Size())
			}
			b, err := f.TensorData(name)
			if err != nil {
				return State{}, err
			}
			dst := part.data[t.Off : t.Off+t.Size()]
			for i := range dst {
				x := math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					return State{}, fmt.Errorf("tensor %q holds a non-finite value at %d", name, i)
				}
				dst[i] = x
			}
		}
	}
	return State{Params: p, Opt: o, Meta: meta}, nil
}
