package ddqn

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"unicode/utf8"
)

// The model file (see the package documentation for its layout).
const (
	FormatName    = "hlm-ddqn"
	FormatVersion = 1

	MaxMetadataEntries = 1024
	MaxMetadataBytes   = 1 << 20   // keys plus values, before JSON escaping
	MaxModelBytes      = 128 << 20 // larger than any file Save can write
)

// fileModel is the JSON document Save writes and Load reads.
type fileModel struct {
	Format   string            `json:"format"`
	Version  int               `json:"version"`
	Inputs   int               `json:"inputs"`
	Actions  int               `json:"actions"`
	Hidden   []int             `json:"hidden"`
	Weights  [][]float64       `json:"weights"`
	Biases   [][]float64       `json:"biases"`
	Mean     []float64         `json:"mean,omitempty"`
	Std      []float64         `json:"std,omitempty"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

func checkMetadata(m map[string]string) error {
	if len(m) > MaxMetadataEntries {
		return fmt.Errorf("%w: %d metadata entries, at most %d", ErrLimit, len(m), MaxMetadataEntries)
	}
	total := 0
	for k, v := range m {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return fmt.Errorf("%w: metadata %q is not valid UTF-8", ErrConfig, k)
		}
		total += len(k) + len(v)
	}
	if total > MaxMetadataBytes {
		return fmt.Errorf("%w: %d bytes of metadata, at most %d", ErrLimit, total, MaxMetadataBytes)
	}
	return nil
}

// Policy is a trained network for deployment: it maps a raw state to the
// greedy action, applying the saved normalisation. It holds no randomness
// and no mutable state, so its methods are safe for concurrent use.
type Policy struct {
	net       *Net
	mean, std []float64
	meta      map[string]string
}

// Policy returns a snapshot of the agent's current greedy policy, the same
// Policy that Save followed by Load would give.
func (a *Agent) Policy() *Policy {
	p := &Policy{net: a.online.Clone(), meta: make(map[string]string, len(a.meta))}
	if a.mean != nil {
		p.mean, p.std = append([]float64(nil), a.mean...), append([]float64(nil), a.std...)
	}
	for k, v := range a.meta {
		p.meta[k] = v
	}
	return p
}

// Inputs returns the number of state features the policy takes.
func (p *Policy) Inputs() int { return p.net.Inputs() }

// Actions returns the number of actions.
func (p *Policy) Actions() int { return p.net.Actions() }

// Q returns the Q-values of all actions for a raw state, written to out if
// it has room. It panics on a state of the wrong width.
func (p *Policy) Q(state []float64, out []float64) []float64 {
	if len(state) != p.Inputs() {
		panic(fmt.Sprintf("ddqn: state has %d features, policy takes %d", len(state), p.Inputs()))
	}
	x := normalize(make([]float64, len(state)), state, p.mean, p.std)
	return p.net.Forward(x, out)
}

// Greedy returns argmax_a Q(state, a), the lowest index on ties.
func (p *Policy) Greedy(state []float64) int { return argmax(p.Q(state, nil)) }

// Metadata returns a copy of the metadata saved with the model.
func (p *Policy) Metadata() map[string]string {
	m := make(map[string]string, len(p.meta))
	for k, v := range p.meta {
		m[k] = v
	}
	return m
}

// Save writes the policy in the format Agent.Save writes.
func (p *Policy) Save(w io.Writer) error { return save(w, p.net, p.mean, p.std, p.meta) }

// Save writes the online network, the normalisation and the metadata as a
// model file for Load. Training state (target network, Adam moments, replay
// buffer, counters) is not saved. The bytes are a deterministic function
// of the agent's state.
func (a *Agent) Save(w io.Writer) error { return save(w, a.online, a.mean, a.std, a.meta) }

func save(w io.Writer, n *Net, mean, std []float64, meta map[string]string) error {
	if err := checkMetadata(meta); err != nil {
		return err
	}
	if err := n.validate(); err != nil {
		return fmt.Errorf("ddqn: saving: %w", err)
	}
	f := fileModel{
		Format:   FormatName,
		Version:  FormatVersion,
		Inputs:   n.Inputs(),
		Actions:  n.Actions(),
		Hidden:   append([]int{}, n.Sizes[1:len(n.Sizes)-1]...),
		Weights:  n.W,
		Biases:   n.B,
		Mean:     mean,
		Std:      std,
		Metadata: meta,
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(f); err != nil { // maps are written in sorted key order
		return fmt.Errorf("ddqn: saving: %w", err)
	}
	if buf.Len() > MaxModelBytes {
		return fmt.Errorf("%w: model file of %d bytes, at most %d", ErrLimit, buf.Len(), MaxModelBytes)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// Load reads a model file written by Save and returns its greedy policy.
// It reads at most MaxModelBytes and checks everything before use: format
// name and version, no unknown fields or trailing data, sizes within the
// package limits and consistent with each other, every number finite, std
// positive, metadata within its limits. A malformed file gives an error
// wrapping ErrFormat or ErrLimit, never a panic.
func Load(r io.Reader) (*Policy, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxModelBytes+1))
	if err != nil {
		return nil, fmt.Errorf("ddqn: loading: %w", err)
	}
	if len(data) > MaxModelBytes {
		return nil, fmt.Errorf("%w: model file over %d bytes", ErrLimit, MaxModelBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f fileModel
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the model", ErrFormat)
	}
	if f.Format != FormatName {
		return nil, fmt.Errorf("%w: format %q, want %q", ErrFormat, f.Format, FormatName)
	}
	if f.Version != FormatVersion {
		return nil, fmt.Errorf("%w: version %d, this package reads %d", ErrFormat, f.Version, FormatVersion)
	}
	if err := checkSizes(f.Inputs, f.Hidden, f.Actions); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFormat, err)
	}
	n := &Net{Sizes: append(append([]int{f.Inputs}, f.Hidden...), f.Actions), W: f.Weights, B: f.Biases}
	if err := n.validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFormat, err)
	}
	p := &Policy{net: n, meta: f.Metadata}
	if f.Mean != nil || f.Std != nil {
		if err := checkNormalization(f.Inputs, f.Mean, f.Std); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrFormat, err)
		}
		p.mean, p.std = f.Mean, f.Std
	}
	if p.meta == nil {
		p.meta = map[string]string{}
	}
	if err := checkMetadata(p.meta); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFormat, err)
	}
	return p, nil
}
