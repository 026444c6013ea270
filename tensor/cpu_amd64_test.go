//go:build amd64 && !purego

package tensor

import "testing"

// TestTunedLevel: the level each CPU kind runs by default. A Zen 4 (AMD
// family 25) runs avx512-zen4 and a Zen 5 (family 26) avx512-zen5 when
// they have AVX-512; every other CPU, and those two without AVX-512 (a
// family-25 Zen 3, or AVX-512 disabled), the best level its instructions
// allow.
func TestTunedLevel(t *testing.T) {
	const amd, intel = "AuthenticAMD", "GenuineIntel"
	for _, tc := range []struct {
		vendor      string
		family, max int
		want        int
	}{
		{amd, 25, levelAVX512, levelAVX512Zen4},
		{amd, 26, levelAVX512, levelAVX512Zen5},
		{amd, 25, levelAVX2, levelAVX2}, // Zen 3
		{amd, 26, levelAVX2, levelAVX2},
		{amd, 23, levelAVX2, levelAVX2}, // Zen 2
		{amd, 27, levelAVX512, levelAVX512},
		{intel, 6, levelAVX512, levelAVX512}, // Cascade Lake and the other AVX-512 Xeons
		{intel, 6, levelAVX2, levelAVX2},
		{intel, 6, levelPortable, levelPortable},
	} {
		if got := tunedLevelFor(tc.vendor, tc.family, tc.max); got != tc.want {
			t.Errorf("%s family %d with %s: %s, want %s", tc.vendor, tc.family, levelNames[tc.max], levelNames[got], levelNames[tc.want])
		}
	}
	if cpuVendor == amd && cpuFamily == 26 && cpuLevel == levelAVX512 && defaultLevel != levelAVX512Zen5 {
		t.Errorf("this Zen 5 runs %s by default, want avx512-zen5", levelNames[defaultLevel])
	}
}
