package hybrid

import (
	"encoding/json"
	"math"
)

// MarshalJSON encodes the parameters; a default u_th (NaN) becomes null.
// The device sends this to the server when it opens a session.
func (p Params) MarshalJSON() ([]byte, error) {
	type plain Params // no methods: no recursion
	j := struct {
		plain
		UTh *float64 `json:"UTh"`
	}{plain: plain(p)}
	if !math.IsNaN(p.UTh) {
		j.UTh = &p.UTh
	}
	return json.Marshal(j)
}

// UnmarshalJSON decodes parameters; a null or missing u_th means the
// method's default.
func (p *Params) UnmarshalJSON(b []byte) error {
	type plain Params
	j := struct {
		*plain
		UTh *float64 `json:"UTh"`
	}{plain: (*plain)(p)}
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	p.UTh = math.NaN()
	if j.UTh != nil {
		p.UTh = *j.UTh
	}
	return nil
}
