package channel

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func TestPresetsValidate(t *testing.T) {
	for _, name := range PresetNames() {
		cfg, err := Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := cfg.Validate(); err != nil {
			t.Errorf("preset %s: %v", name, err)
		}
		if _, err := New(cfg); err != nil {
			t.Errorf("preset %s: New: %v", name, err)
		}
	}
	if _, err := Preset("nope"); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "cuhlm") {
		t.Errorf("unknown preset: %v", err)
	}
	cu := CUHLMConfig()
	if cu.BandwidthHz != 10e6 || cu.SNRdB == nil || *cu.SNRdB != 10 || cu.Fading != FadingRayleigh {
		t.Errorf("CU-HLM preset: %v", cu)
	}
	if got := MeanSNR(cu); math.Abs(got-10) > 1e-12 {
		t.Errorf("CU-HLM mean SNR %g, want 10", got)
	}
	qs := QSConfig()
	if qs.Channel != ChannelMarkov || qs.RateLowBps != 350e3 || qs.RateHighBps != 4e6 || !math.IsInf(qs.DownlinkBps, 1) {
		t.Errorf("Q-S preset: %v", qs)
	}
}

func TestBadConfigs(t *testing.T) {
	cases := []struct {
		name string
		edit func(c *Config)
		want string // in the error message
	}{
		{"negative bandwidth", func(c *Config) { c.BandwidthHz = -1 }, "bandwidth_hz: -1 must be positive"},
		{"zero bandwidth", func(c *Config) { c.BandwidthHz = 0 }, "bandwidth_hz"},
		{"probability > 1", func(c *Config) { c.PLowHigh = 1.5 }, "p_low_high: 1.5 is not a probability"},
		{"negative probability", func(c *Config) { c.PHighLow = -0.1 }, "p_high_low"},
		{"unknown fading", func(c *Config) { c.Fading = "nakagami" }, `fading: "nakagami" is not one of none, rayleigh, rician`},
		{"unknown channel", func(c *Config) { c.Channel = "wifi" }, `channel: "wifi"`},
		{"NaN snr", func(c *Config) { v := math.NaN(); c.SNRdB = &v }, "snr_db"},
		{"zero distance", func(c *Config) { c.DistanceM = 0 }, "distance_m"},
		{"infinite rate", func(c *Config) { c.RateBps = math.Inf(1) }, "rate_bps"},
		{"swapped Markov rates", func(c *Config) { c.RateLowBps = 5e6 }, "rate_low_bps: 5e+06 exceeds rate_high_bps"},
		{"no stationary distribution", func(c *Config) { c.PLowHigh, c.PHighLow = 0, 0 }, "markov_init"},
		{"trace without file", func(c *Config) { c.Channel = ChannelTrace }, "trace_file: required"},
		{"zero downlink", func(c *Config) { c.DownlinkBps = 0 }, "downlink_bps"},
		{"negative overhead", func(c *Config) { c.UpOverhead = -time.Millisecond }, "up_overhead_s"},
		{"underflowing SNR", func(c *Config) { c.DistanceM = 1e300 }, "mean SNR"},
	}
	for _, tc := range cases {
		cfg := DefaultConfig()
		tc.edit(&cfg)
		err := cfg.Validate()
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want ErrConfig containing %q", tc.name, err, tc.want)
		}
		if _, err := New(cfg); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: New accepted it: %v", tc.name, err)
		}
	}
}

func TestSet(t *testing.T) {
	cfg := DefaultConfig()
	for _, kv := range [][2]string{
		{"channel", "markov"}, {"bandwidth_hz", "1e7"}, {"snr_db", "-20"}, {"fading", "Rician"},
		{"rician_k_db", "10"}, {"p_low_high", "0.3"}, {"trace_loop", "true"}, {"downlink_bps", "+Inf"},
		{"up_overhead_s", "0.002"}, {"link_seed", "42"}, {"markov_init", "high"},
	} {
		if err := cfg.Set(kv[0], kv[1]); err != nil {
			t.Fatalf("Set(%s, %s): %v", kv[0], kv[1], err)
		}
	}
	if cfg.Channel != ChannelMarkov || cfg.BandwidthHz != 1e7 || *cfg.SNRdB != -20 || cfg.Fading != FadingRician ||
		cfg.PLowHigh != 0.3 || !cfg.TraceLoop || !math.IsInf(cfg.DownlinkBps, 1) ||
		cfg.UpOverhead != 2*time.Millisecond || cfg.Seed != 42 || cfg.MarkovInit != InitHigh {
		t.Errorf("after Set: %v", cfg)
	}
	if err := cfg.Set("snr_db", "none"); err != nil || cfg.SNRdB != nil {
		t.Errorf("unsetting snr_db: %v, %v", err, cfg.SNRdB)
	}

	err := cfg.Set("bandwith_hz", "1")
	if !errors.Is(err, ErrUnknownKey) || !strings.Contains(err.Error(), "bandwidth_hz") || !strings.Contains(err.Error(), "link_seed") {
		t.Errorf("unknown key: %v (want ErrUnknownKey listing the valid keys)", err)
	}
	for _, kv := range [][2]string{
		{"fading", "nakagami"}, {"bandwidth_hz", "1MHz"}, {"link_seed", "-1"}, {"trace_loop", "maybe"},
		{"up_overhead_s", "-1"}, {"channel", ""}, {"snr_db", "abc"}, {"snr_db", "+Inf"}, {"bandwidth_hz", "-1"},
		{"p_low_high", "1.5"}, {"downlink_bps", "0"}, {"pathloss_exp", "-2"}, {"tx_power_dbm", "NaN"},
	} {
		before := cfg
		k, _ := lookup(kv[0])
		// The error names the key and what it accepts, not a parser's
		// message.
		if err := cfg.Set(kv[0], kv[1]); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), kv[0]) ||
			!strings.Contains(err.Error(), k.Accepts) || strings.Contains(err.Error(), "strconv") {
			t.Errorf("Set(%s, %q): %v, want ErrConfig naming the key and %q", kv[0], kv[1], err, k.Accepts)
		}
		if cfg.String() != before.String() {
			t.Errorf("failed Set(%s, %q) changed the config", kv[0], kv[1])
		}
	}
}

// TestKeysSayWhatTheyAccept: every key says what it accepts.
func TestKeysSayWhatTheyAccept(t *testing.T) {
	for _, k := range Keys() {
		if k.Accepts == "" {
			t.Errorf("key %s: no Accepts", k.Name)
		}
	}
}

// TestKeysRoundTrip: every key has help, Get formats what Set parses, and
// JSON survives +Inf and an unset snr_db.
func TestKeysRoundTrip(t *testing.T) {
	src := CUHLMConfig()
	src.UpOverhead = 1500 * time.Microsecond
	src.TraceFile = "x.trace"
	src.Seed = math.MaxUint64
	dst := Config{}
	seen := map[string]bool{}
	for _, k := range Keys() {
		if k.Help == "" || seen[k.Name] {
			t.Errorf("key %q: empty help or duplicate", k.Name)
		}
		seen[k.Name] = true
		v, err := src.Get(k.Name)
		if err != nil {
			t.Fatal(err)
		}
		if err := dst.Set(k.Name, v); err != nil {
			t.Fatalf("Set(%s, Get = %q): %v", k.Name, v, err)
		}
	}
	if dst.String() != src.String() || *dst.SNRdB != *src.SNRdB {
		t.Errorf("Get/Set round trip:\n got %v\nwant %v", dst, src)
	}
	if _, err := src.Get("nope"); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("Get unknown key: %v", err)
	}

	for _, cfg := range []Config{src, DefaultConfig(), QSConfig()} {
		data, err := json.Marshal(cfg)
		if err != nil {
			t.Fatal(err)
		}
		back := DefaultConfig()
		back.SNRdB = new(float64)
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatal(err)
		}
		if back.String() != cfg.String() {
			t.Errorf("JSON round trip:\n got %v\nwant %v\n%s", back, cfg, data)
		}
	}
	// Files written before the link's seed was renamed link_seed.
	var old Config
	if err := json.Unmarshal([]byte(`{"seed":"7"}`), &old); err != nil || old.Seed != 7 {
		t.Errorf("JSON with the former key seed: %v, seed %d", err, old.Seed)
	}
	var c Config
	if err := json.Unmarshal([]byte(`{"bandwidth":"1"}`), &c); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("JSON with unknown key: %v", err)
	}
}

func TestUpDownTime(t *testing.T) {
	s := State{UpRate: 1e6, DownRate: math.Inf(1), UpOverhead: time.Millisecond, DownOverhead: 2 * time.Millisecond}
	for _, tc := range []struct {
		got, want time.Duration
	}{
		{s.UpTime(0), 0},
		{s.UpTime(-5), 0},
		{s.UpTime(1000), 2 * time.Millisecond}, // 1 ms overhead + 1000/1e6 s
		{s.DownTime(0), 0},
		{s.DownTime(1e6), 2 * time.Millisecond}, // overhead only at +Inf rate
		{State{UpRate: 0}.UpTime(1), time.Duration(math.MaxInt64)},
		{State{UpRate: 1e-300}.UpTime(1), time.Duration(math.MaxInt64)},
		{State{UpRate: 3}.UpTime(1), 333333333}, // rounded to the nanosecond
	} {
		if tc.got != tc.want {
			t.Errorf("got %v, want %v", tc.got, tc.want)
		}
	}
}

func TestFixed(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Channel = ChannelFixed
	cfg.RateBps = 4e6
	cfg.DownlinkBps = 1e6
	cfg.UpOverhead = time.Millisecond
	l, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		s := l.Round(time.Duration(i) * time.Second)
		if s.UpRate != 4e6 || s.DownRate != 1e6 || !math.IsNaN(s.SNR) || s.UpOverhead != time.Millisecond {
			t.Errorf("round %d: %+v", i, s)
		}
	}
}

func TestHelpers(t *testing.T) {
	for _, tc := range []struct{ got, want float64 }{
		{DBmToWatts(30), 1},
		{DBmToWatts(0), 1e-3},
		{DBToLinear(10), 10},
		{DBToLinear(-3), 0.501187233627272},
		{LinearToDB(100), 20},
		{ShannonRate(1e6, 1), 1e6},
		{ShannonRate(10e6, 10), 10e6 * math.Log2(11)},
		{ShannonRate(1e6, 0), 0},
	} {
		if math.Abs(tc.got-tc.want) > 1e-12*math.Max(1, math.Abs(tc.want)) {
			t.Errorf("got %.15g, want %.15g", tc.got, tc.want)
		}
	}
}

// TestNominalRate: the rate a sender plans with, per link kind, against
// its formula.
func TestNominalRate(t *testing.T) {
	fixed := DefaultConfig()
	fixed.Channel, fixed.RateBps = ChannelFixed, 250e3
	markov := QSConfig()
	still := markov
	still.PLowHigh, still.PHighLow = 0, 0
	// Asymmetric transitions: stationary P(high) = p_lh/(p_lh + p_hl) =
	// 0.1/0.4 = 1/4, so the mean is (3·350k + 4M)/4 = 1.2625 Mbit/s. (The
	// preset's p_lh = p_hl makes P(high) = 1/2 and hides a swap.)
	skew := markov
	skew.PLowHigh, skew.PHighLow = 0.1, 0.3
	trace := DefaultConfig()
	trace.Channel = ChannelTrace
	cu := CUHLMConfig()
	ph := markov.PLowHigh / (markov.PLowHigh + markov.PHighLow)
	for _, tc := range []struct {
		name string
		cfg  Config
		want float64
	}{
		{"fixed", fixed, 250e3},
		{"markov", markov, (1-ph)*markov.RateLowBps + ph*markov.RateHighBps},
		{"markov without transitions", still, (markov.RateLowBps + markov.RateHighBps) / 2},
		{"markov, asymmetric", skew, (3*350e3 + 4e6) / 4},
		{"shannon", cu, cu.BandwidthHz * math.Log2(1+10)},
		{"trace", trace, math.Inf(1)},
	} {
		if got := NominalRate(tc.cfg); !(got == tc.want || math.Abs(got-tc.want) <= 1e-9*tc.want) {
			t.Errorf("%s: %g, want %g", tc.name, got, tc.want)
		}
	}
}

// TestUnused: a key that the configured link does not read is named with
// the reason; the keys it reads, the keys of every link and unknown keys
// are not.
func TestUnused(t *testing.T) {
	shannon := DefaultConfig()
	shannon.Channel = ChannelShannon
	snr := 10.0
	shannon.SNRdB = &snr
	noSNR := shannon
	noSNR.SNRdB = nil
	fixed := shannon
	fixed.Channel = ChannelFixed
	rician := noSNR
	rician.Fading = "rician"
	for _, c := range []struct {
		cfg  Config
		key  string
		want string // a fragment of the reason; "": used
	}{
		{shannon, "rate_bps", "channel=shannon"},
		{fixed, "rate_bps", ""},
		{fixed, "bandwidth_hz", "the shannon link"},
		{fixed, "rician_k_db", "the shannon link"},
		{shannon, "distance_m", "snr_db=10 overrides"},
		{noSNR, "distance_m", ""},
		{shannon, "snr_db", ""},
		{shannon, "markov_init", "the markov link"},
		{shannon, "trace_file", "the trace link"},
		{noSNR, "rician_k_db", "fading=rician"},
		{rician, "rician_k_db", ""},
		{fixed, "downlink_bps", ""},
		{fixed, "channel", ""},
		{fixed, "link_seed", ""},
		{fixed, "nonesuch", ""},
	} {
		got := c.cfg.Unused(c.key)
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("channel=%s snr=%v fading=%s: Unused(%s) = %q, want %q", c.cfg.Channel, c.cfg.SNRdB != nil, c.cfg.Fading, c.key, got, c.want)
		}
	}
}

// TestValidateNamesUnreadFields: a literal Config leaves fields the chosen
// link does not read at zero; the error says so and where a valid Config
// comes from, and a field the link reads gets no such note.
func TestValidateNamesUnreadFields(t *testing.T) {
	_, err := New(Config{Channel: ChannelFixed, RateBps: 1e6})
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "bandwidth_hz") || !strings.Contains(err.Error(), "does not read it") {
		t.Errorf("fixed link from a literal: %v", err)
	}
	c := DefaultConfig()
	c.BandwidthHz = -1
	if err := c.Validate(); err == nil || strings.Contains(err.Error(), "does not read it") {
		t.Errorf("shannon with a negative bandwidth: %v", err)
	}
}
