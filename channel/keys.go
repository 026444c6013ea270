package channel

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Key is one flat configuration key with its one-line help and what it
// accepts (Set refuses anything else; Validate checks the combinations).
type Key struct {
	Name    string
	Help    string
	Accepts string
}

// key binds a flat key to its Config field.
type key struct {
	Key
	get func(c *Config) string
	set func(c *Config, v string) error
}

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// floatKey is a number key; ok (nil: any) is the range accepts names.
func floatKey(name, help, accepts string, ok func(float64) bool, field func(c *Config) *float64) key {
	return key{
		Key: Key{name, help, accepts},
		get: func(c *Config) string { return fmtFloat(*field(c)) },
		set: func(c *Config, v string) error {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || ok != nil && !ok(f) {
				return fmt.Errorf("want %s", accepts)
			}
			*field(c) = f
			return nil
		},
	}
}

// The ranges of the number keys, which Validate checks too (a Config made
// in Go never went through Set), with the combinations.
var (
	finiteNum = func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	positive  = func(v float64) bool { return v > 0 && !math.IsInf(v, 0) }
	probVal   = func(v float64) bool { return v >= 0 && v <= 1 }
)

func enumKey(name, help string, valid []string, field func(c *Config) *string) key {
	return key{
		Key: Key{name, help, "one of " + strings.Join(valid, ", ")},
		get: func(c *Config) string { return *field(c) },
		set: func(c *Config, v string) error {
			v = strings.ToLower(strings.TrimSpace(v))
			if !slices.Contains(valid, v) {
				return fmt.Errorf("not one of %s", strings.Join(valid, ", "))
			}
			*field(c) = v
			return nil
		},
	}
}

// maxKeySeconds is the longest time a seconds key takes: a round number
// well inside a time.Duration (about 292 years), so that the bound the
// error states is one the key accepts.
const maxKeySeconds = 1e9

func secondsKey(name, help string, field func(c *Config) *time.Duration) key {
	accepts := fmt.Sprintf("seconds in [0, %g]", float64(maxKeySeconds))
	return key{
		Key: Key{name, help, accepts},
		get: func(c *Config) string { return fmtFloat(field(c).Seconds()) },
		set: func(c *Config, v string) error {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || !(f >= 0) || f > maxKeySeconds {
				return fmt.Errorf("want %s", accepts)
			}
			*field(c) = time.Duration(math.Round(f * 1e9))
			return nil
		},
	}
}

// keys lists every flat key in the order --help shows them.
var keys = []key{
	enumKey("channel", "link model: shannon (W·log2(1+SNR), block fading), markov (Q-S two-state), fixed, trace",
		channels, func(c *Config) *string { return &c.Channel }),
	floatKey("bandwidth_hz", "shannon: uplink bandwidth W in Hz", "a number > 0 (Hz)", positive,
		func(c *Config) *float64 { return &c.BandwidthHz }),
	{
		Key: Key{"snr_db", "shannon: average SNR in dB; overrides tx_power/noise/distance/pathloss when set (empty or none = unset)", "a finite number (dB), or none"},
		get: func(c *Config) string {
			if c.SNRdB == nil {
				return ""
			}
			return fmtFloat(*c.SNRdB)
		},
		set: func(c *Config, v string) error {
			v = strings.TrimSpace(v)
			if v == "" || strings.EqualFold(v, "none") {
				c.SNRdB = nil
				return nil
			}
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || !finiteNum(f) {
				return fmt.Errorf("want a finite number (dB), or none")
			}
			c.SNRdB = &f
			return nil
		},
	},
	floatKey("tx_power_dbm", "shannon: device transmit power p in dBm", "a finite number (dBm)", finiteNum,
		func(c *Config) *float64 { return &c.TxPowerDBm }),
	floatKey("noise_dbm", "shannon: noise power N in dBm", "a finite number (dBm)", finiteNum,
		func(c *Config) *float64 { return &c.NoiseDBm }),
	floatKey("distance_m", "shannon: device–base-station distance d in metres", "a number > 0 (metres)", positive,
		func(c *Config) *float64 { return &c.DistanceM }),
	floatKey("pathloss_exp", "shannon: path-loss exponent α (SNR = h·p·d^−α/N)", "a finite number ≥ 0", func(v float64) bool { return v >= 0 && finiteNum(v) },
		func(c *Config) *float64 { return &c.PathLossExp }),
	enumKey("fading", "shannon: block fading of the power gain h: none (h=1), rayleigh (h~Exp(1)), rician",
		fadings, func(c *Config) *string { return &c.Fading }),
	floatKey("rician_k_db", "shannon, fading=rician: K-factor in dB (LOS power over scattered power)", "a finite number (dB)", finiteNum,
		func(c *Config) *float64 { return &c.RicianKdB }),
	floatKey("rate_bps", "fixed: uplink rate in bit/s", "a number > 0 (bit/s)", positive,
		func(c *Config) *float64 { return &c.RateBps }),
	floatKey("rate_low_bps", "markov: uplink rate of the low state in bit/s", "a number > 0 (bit/s)", positive,
		func(c *Config) *float64 { return &c.RateLowBps }),
	floatKey("rate_high_bps", "markov: uplink rate of the high state in bit/s", "a number > 0 (bit/s)", positive,
		func(c *Config) *float64 { return &c.RateHighBps }),
	floatKey("p_low_high", "markov: probability per round of moving from the low to the high state", "a probability in [0, 1]", probVal,
		func(c *Config) *float64 { return &c.PLowHigh }),
	floatKey("p_high_low", "markov: probability per round of moving from the high to the low state", "a probability in [0, 1]", probVal,
		func(c *Config) *float64 { return &c.PHighLow }),
	enumKey("markov_init", "markov: first state: stationary (drawn from the stationary distribution), low, high",
		markovInits, func(c *Config) *string { return &c.MarkovInit }),
	{
		Key: Key{"trace_file", "trace: file of \"time_seconds rate_bps\" lines, piecewise constant (# comments)", "a file's path"},
		get: func(c *Config) string { return c.TraceFile },
		set: func(c *Config, v string) error { c.TraceFile = v; return nil },
	},
	{
		Key: Key{"trace_loop", "trace: repeat the trace with period = time of its last line", "true or false"},
		get: func(c *Config) string { return strconv.FormatBool(c.TraceLoop) },
		set: func(c *Config, v string) error {
			b, err := strconv.ParseBool(strings.TrimSpace(v))
			if err != nil {
				return fmt.Errorf("want true or false")
			}
			c.TraceLoop = b
			return nil
		},
	},
	floatKey("downlink_bps", "every link: downlink rate in bit/s (+Inf = no delay, as the HLM papers assume)", "a number > 0 (bit/s), or +Inf", func(v float64) bool { return v > 0 },
		func(c *Config) *float64 { return &c.DownlinkBps }),
	secondsKey("up_overhead_s", "every link: fixed time per uplink message in seconds (preamble)",
		func(c *Config) *time.Duration { return &c.UpOverhead }),
	secondsKey("down_overhead_s", "every link: fixed time per downlink message in seconds",
		func(c *Config) *time.Duration { return &c.DownOverhead }),
	{
		Key: Key{"link_seed", "seed of the link's random source (fading draws, Markov transitions), added to the run's seed", "an integer in [0, 2^64)"},
		get: func(c *Config) string { return strconv.FormatUint(c.Seed, 10) },
		set: func(c *Config, v string) error {
			u, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return fmt.Errorf("want an integer in [0, 2^64)")
			}
			c.Seed = u
			return nil
		},
	},
}

// Keys lists the flat configuration keys with one line of help each.
func Keys() []Key {
	out := make([]Key, len(keys))
	for i, k := range keys {
		out[i] = k.Key
	}
	return out
}

func keyNames() string {
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.Name
	}
	return strings.Join(names, ", ")
}

func lookup(name string) (key, error) {
	for _, k := range keys {
		if k.Name == name {
			return k, nil
		}
	}
	return key{}, fmt.Errorf("%w %q (valid keys: %s)", ErrUnknownKey, name, keyNames())
}

// Set parses value into the field named by the flat key name (as in
// "hlm sim --set name=value"). Numbers use Go syntax (1e6, +Inf), booleans
// strconv.ParseBool, times are in seconds. Set checks the syntax and the
// enumerations; ranges are checked by Validate.
func (c *Config) Set(name, value string) error {
	k, err := lookup(name)
	if err != nil {
		return err
	}
	if err := k.set(c, value); err != nil {
		return fmt.Errorf("%w: %s=%q: %v", ErrConfig, name, value, err)
	}
	return nil
}

// Get formats the field named by the flat key name so that Set parses it
// back to the same value.
func (c Config) Get(name string) (string, error) {
	k, err := lookup(name)
	if err != nil {
		return "", err
	}
	return k.get(&c), nil
}

// String lists every key as key=value, space-separated, in Keys order.
func (c Config) String() string {
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%s", k.Name, k.get(&c))
	}
	return b.String()
}

// MarshalJSON writes the config as an object of flat keys with string
// values (as Get formats them), so that +Inf and an unset snr_db survive.
func (c Config) MarshalJSON() ([]byte, error) {
	m := make(map[string]string, len(keys))
	for _, k := range keys {
		m[k.Name] = k.get(&c)
	}
	return json.Marshal(m)
}

// UnmarshalJSON sets the keys present in an object written by MarshalJSON;
// absent keys keep their current values. The link's seed is also read
// under its former name "seed" (files written before it was renamed
// link_seed).
func (c *Config) UnmarshalJSON(data []byte) error {
	var m map[string]string
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("%w: %v", ErrConfig, err)
	}
	if v, ok := m["seed"]; ok {
		if _, dup := m["link_seed"]; !dup {
			m["link_seed"] = v
		}
		delete(m, "seed")
	}
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	slices.Sort(names) // deterministic first error
	for _, name := range names {
		if err := c.Set(name, m[name]); err != nil {
			return err
		}
	}
	return nil
}

// Unused says why the flat key name has no effect on the link c
// configures ("" when it has one, or is unknown): a key whose help names
// a link ("fixed: …", "markov: …") is read by that link alone, the
// power/distance keys are overridden by snr_db, and rician_k_db is read
// with fading=rician only.
func (c Config) Unused(name string) string {
	k, err := lookup(name)
	if err != nil {
		return ""
	}
	model, _, _ := strings.Cut(k.Help, ":")
	model, _, _ = strings.Cut(model, ",") // "shannon, fading=rician: …"
	if slices.Contains(channels, model) && model != c.Channel {
		return fmt.Sprintf("it sets the %s link, and channel=%s", model, c.Channel)
	}
	switch name {
	case "tx_power_dbm", "noise_dbm", "distance_m", "pathloss_exp":
		if c.SNRdB != nil {
			return fmt.Sprintf("snr_db=%s overrides the SNR from power, noise, distance and path loss (--set snr_db=none to use them)", fmtFloat(*c.SNRdB))
		}
	case "rician_k_db":
		if c.Fading != "rician" {
			return fmt.Sprintf("it is read with fading=rician, and fading=%s", c.Fading)
		}
	}
	return ""
}
