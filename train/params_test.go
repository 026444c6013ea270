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

func TestTranspose(t *testing.T) {
	for _, sh := range [][2]int{{1, 1}, {3, 5}, {8, 8}, {16, 24}, {9, 17}, {64, 7}, {130, 66}} {
		rows, cols := sh[0], sh[1]
		a := make([]float32, rows*cols)
		for i := range a {
			a[i] = float32(i)
		}
		got := transpose(nil, a, rows, cols)
		for r := range rows {
			for c := range cols {
				if got[c*rows+r] != a[r*cols+c] {
					t.Fatalf("%d×%d: element (%d,%d) = %v, want %v", rows, cols, r, c, got[c*rows+r], a[r*cols+c])
				}
			}
		}
	}
}
