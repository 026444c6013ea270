package llama

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"sync"

	"github.com/hlmproject/hlm/tensor"
)

// Origin identifies the model whose weights these are, whatever their
// storage: the fingerprint of the full-precision model that a quantized
// view (Quantized; PATH@q8, PATH@q4) or a converted file (hlm convert
// records it: model.OriginKey) was made from, and the model's own
// Fingerprint otherwise. A model and its quantized or converted copies
// share an Origin, not a Fingerprint (their logits differ: equal
// fingerprints still mean bit-identical logits), so what belongs to a
// model, the draft hlm ships for it, is found for its copies too
// (model/builtin.DraftFor). An early-exit view computes something else:
// its Origin is its own Fingerprint.
func (m *Model) Origin() string {
	if m.cfg.Layers < len(m.w.Layers) {
		return m.Fingerprint()
	}
	return m.WeightsOrigin()
}

// WeightsOrigin is the Origin of the model of all of m's layers (what
// WriteGGUF writes, also for an early-exit view).
func (m *Model) WeightsOrigin() string {
	switch {
	case m.recorded != "":
		return m.recorded
	case m.src != nil:
		return m.src.WeightsOrigin()
	case m.cfg.Layers == len(m.w.Layers):
		return m.weightsFingerprint()
	}
	full := *m
	full.cfg.Layers, full.fp = len(m.w.Layers), new(fingerprint)
	return full.weightsFingerprint()
}

// isFingerprint reports whether s has the form of a fingerprint (64
// lower-case hexadecimal digits), as a recorded origin must.
func isFingerprint(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// fingerprint caches a model view's weight hash.
type fingerprint struct {
	once sync.Once
	s    string
}

// Fingerprint identifies the computation this model performs: a SHA-256 of
// its configuration (layers in use included) and of every weight it reads,
// in storage form, and of its KV cache's types when they are not float32
// (a half cache changes the logits). Two models with equal fingerprints
// compute bit-identical logits (the engine is deterministic).
func (m *Model) Fingerprint() string {
	fp := m.weightsFingerprint()
	if m.cacheK == cacheF32 && m.cacheV == cacheF32 {
		return fp
	}
	h := sha256.Sum256([]byte(fp + " kv cache " + m.cacheK.String() + "/" + m.cacheV.String()))
	return hex.EncodeToString(h[:])
}

// weightsFingerprint is Fingerprint of the same view with float32 caches:
// the configuration and the weights, computed once on first use and shared
// by the views that differ only in their caches' types.
func (m *Model) weightsFingerprint() string {
	m.fp.once.Do(func() {
		h := sha256.New()
		cfg, _ := json.Marshal(m.cfg)
		h.Write(cfg)
		w := m.w
		var buf []byte // little-endian float32 values of one row
		vec := func(v []float32) {
			buf = tensor.EncodeRow(buf[:0], tensor.F32, v)
			h.Write(buf)
		}
		mat := func(x *tensor.Matrix) {
			if x == nil {
				return
			}
			var hdr [9]byte
			hdr[0] = byte(x.Type)
			binary.LittleEndian.PutUint32(hdr[1:], uint32(x.Rows))
			binary.LittleEndian.PutUint32(hdr[5:], uint32(x.Cols))
			h.Write(hdr[:])
			if x.Type == tensor.F32 {
				for i := 0; i < x.Rows; i++ {
					vec(x.F32[i*x.Cols : (i+1)*x.Cols])
				}
				return
			}
			h.Write(x.Data)
			x.ReleaseData() // read once more for the hash; cold again after
		}
		mat(w.Embedding)
		for _, l := range w.Layers[:m.cfg.Layers] {
			vec(l.AttnNorm)
			vec(l.FFNNorm)
			for _, x := range []*tensor.Matrix{l.Wq, l.Wk, l.Wv, l.Wo, l.W1, l.W2, l.W3} {
				mat(x)
			}
		}
		vec(w.FinalNorm)
		mat(w.Output)
		// The tensors of the other families, after Llama's (which hash as
		// they always did); absent ones add nothing.
		mat(w.Positions)
		mat(w.ProjIn)
		mat(w.ProjOut)
		vec(w.FinalNormB)
		vec(w.RopeFactors)
		for _, l := range w.Layers[:m.cfg.Layers] {
			for _, v := range [][]float32{l.AttnNormB, l.Bq, l.Bk, l.Bv, l.QNorm, l.KNorm, l.Bo, l.PostAttnNorm, l.FFNNormB, l.B2, l.B3, l.PostFFNNorm} {
				vec(v)
			}
		}
		m.fp.s = hex.EncodeToString(h.Sum(nil))
	})
	return m.fp.s
}
