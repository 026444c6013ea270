package uncertainty

import "github.com/hlmproject/hlm/internal/stattest"

// The shared chi-square helpers (significance 0.001).
var (
	chi2Critical = stattest.Critical
	chiSquare    = stattest.ChiSquare
)

const alpha = stattest.Alpha
