package train

import "testing"

func TestShapeCount(t *testing.T) {
	for _, tied := range []bool{false, true} {
		s := tinyShape(tied)
		p, err := NewParams[float32](s)
		if err != nil {
			t.Fatal(err)
		}
		if uint64(len(p.Data)) != s.count() {
			t.Errorf("tied=%v: layout has %d parameters, count says %d", tied, len(p.Data), s.count())
		}
	}
}
