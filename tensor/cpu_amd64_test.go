//go:build amd64 && !purego

package tensor

import "testing"

// TestTunedLevel: the level each CPU kind runs by default. A Zen 4 (AMD
// family 25) runs avx512-zen4 and a Zen 5 (family 26) avx512-zen5 when
// they have AVX-512, a Zen 1 or Zen+ (family 23, models below 0x30)
// avx2-zen1; every other CPU, and those without AVX-512 (a family-25 Zen
// 3, or AVX-512 disabled), the best level its instructions allow.
func TestTunedLevel(t *testing.T) {
	const amd, intel = "AuthenticAMD", "GenuineIntel"
	for _, tc := range []struct {
		vendor             string
		family, model, max int
		want               int
	}{
		{amd, 25, 17, levelAVX512, levelAVX512Zen4},
		{amd, 26, 2, levelAVX512, levelAVX512Zen5},
		{amd, 25, 1, levelAVX2, levelAVX2}, // Zen 3
		{amd, 26, 2, levelAVX2, levelAVX2},
		{amd, 23, 0x31, levelAVX2, levelAVX2},      // Zen 2 (EPYC 7002)
		{amd, 23, 0x71, levelAVX2, levelAVX2},      // Zen 2 (Ryzen 3000)
		{amd, 23, 1, levelAVX2, levelAVX2Zen1},     // Zen 1 (EPYC 7001)
		{amd, 23, 8, levelAVX2, levelAVX2Zen1},     // Zen+
		{amd, 23, 1, levelPortable, levelPortable}, // AVX2 off
		{amd, 27, 0, levelAVX512, levelAVX512},
		{intel, 6, 85, levelAVX512, levelAVX512}, // Cascade Lake and the other AVX-512 Xeons
		{intel, 6, 23, levelAVX2, levelAVX2},
		{intel, 6, 1, levelPortable, levelPortable},
	} {
		if got := tunedLevelFor(tc.vendor, tc.family, tc.model, tc.max); got != tc.want {
			t.Errorf("%s family %d model %#x with %s: %s, want %s", tc.vendor, tc.family, tc.model, levelNames[tc.max], levelNames[got], levelNames[tc.want])
		}
	}
	if cpuVendor == amd && cpuFamily == 26 && cpuLevel == levelAVX512 && defaultLevel != levelAVX512Zen5 {
		t.Errorf("this Zen 5 runs %s by default, want avx512-zen5", levelNames[defaultLevel])
	}
	if cpuVendor == amd && cpuFamily == 23 && cpuModel < 0x30 && cpuLevel == levelAVX2 && defaultLevel != levelAVX2Zen1 {
		t.Errorf("this Zen 1 runs %s by default, want avx2-zen1", levelNames[defaultLevel])
	}
}
