package cloud

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Prometheus exports the server's metrics with the Prometheus client
// library:
//
//	hlm_sessions_active                 gauge
//	hlm_sessions_total                  counter
//	hlm_sessions_reopened_total         counter: new sessions continuing a generation whose session was lost
//	hlm_sessions_resumed_total          counter: devices reattached to their session after a dropped connection
//	hlm_sessions_continued_total        counter: parked sessions continued with a new prompt (a conversation's next turn)
//	hlm_sessions_parked                 gauge (AddParked): sessions parked for a conversation's next turn
//	hlm_kv_cache_bytes                  gauge (AddKVBytes): memory of the sessions' KV caches in the process (hlm's engine)
//	hlm_kept_positions_total            counter: positions continued sessions kept instead of receiving them again
//	hlm_prefill_positions_total{cause}  counter: prefix positions of new sessions, cause "prompt" or "reopen", and the new positions of continued ones, "continue"
//	hlm_rounds_total                    counter
//	hlm_drafts_total                    counter: draft tokens received
//	hlm_accepted_tokens_total{position} counter: drafts accepted, by position in their block (0-based; "16+" from 16 on)
//	hlm_resampled_total                 counter: rejections (token resampled)
//	hlm_uplink_bytes_total              counter: Upload frames received
//	hlm_downlink_bytes_total            counter: Verdict frames sent
//	hlm_uplink_bits_total               counter: the papers' uplink bits (ids + codec payloads; a replica's check, a tree's parents: hybrid.UplinkBits)
//	hlm_downlink_bits_total             counter: the papers' downlink bits (hybrid.VerdictBits)
//	hlm_verify_seconds                  histogram: verification latency, queueing included
//	hlm_batch_sessions                  histogram: sessions evaluated per LLM pass
//	hlm_errors_total{code}              counter: protocol errors sent, by wire error code
//
// With an LLM that holds sessions in slots (the llama.cpp backend,
// AddSlots):
//
//	hlm_llm_slots{state}                gauge: the slots, "used" or "free"
//	hlm_llm_decodes_total               counter: the LLM's evaluation calls
//	hlm_llm_slot_evictions_total        counter: sessions moved out of a slot for another
//	hlm_llm_slot_restores_total         counter: evicted sessions restored from their saved state
//	hlm_llm_slot_recomputes_total       counter: evicted sessions evaluated again from their tokens
type Prometheus struct {
	reg       *prometheus.Registry
	active    prometheus.Gauge
	sessions  prometheus.Counter
	reopened  prometheus.Counter
	resumed   prometheus.Counter
	continued prometheus.Counter
	kept      prometheus.Counter
	prefill   *prometheus.CounterVec
	rounds    prometheus.Counter
	drafts    prometheus.Counter
	accepted  *prometheus.CounterVec
	resampled prometheus.Counter
	bytesIn   prometheus.Counter
	bytesOut  prometheus.Counter
	bitsIn    prometheus.Counter
	bitsOut   prometheus.Counter
	verify    prometheus.Histogram
	batch     prometheus.Histogram
	errors    *prometheus.CounterVec
}

var _ Metrics = (*Prometheus)(nil)

// NewPrometheus registers the metrics (and the Go runtime collectors) in a
// registry of its own.
func NewPrometheus() *Prometheus {
	p := &Prometheus{reg: prometheus.NewRegistry()}
	f := func(name, help string) prometheus.Counter {
		c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
		p.reg.MustRegister(c)
		return c
	}
	p.active = prometheus.NewGauge(prometheus.GaugeOpts{Name: "hlm_sessions_active", Help: "Device sessions alive (attached or waiting for a resume)."})
	p.sessions = f("hlm_sessions_total", "Sessions opened.")
	p.reopened = f("hlm_sessions_reopened_total", "New sessions continuing a generation whose session was lost (another replica, a restart): their prefix is evaluated again.")
	p.resumed = f("hlm_sessions_resumed_total", "Devices reattached to their session after a dropped connection.")
	p.continued = f("hlm_sessions_continued_total", "Parked sessions continued with a new prompt (a conversation's next turn).")
	p.kept = f("hlm_kept_positions_total", "Positions that continued sessions kept instead of receiving and evaluating them again.")
	p.prefill = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "hlm_prefill_positions_total", Help: "Prefix positions of new sessions, by cause: the prompt, a reopened session's committed prefix, or the new positions of a continued session."}, []string{"cause"})
	p.rounds = f("hlm_rounds_total", "Uploads verified.")
	p.drafts = f("hlm_drafts_total", "Draft tokens received for verification.")
	p.resampled = f("hlm_resampled_total", "Rejected drafts (a token resampled from the residual).")
	p.bytesIn = f("hlm_uplink_bytes_total", "Bytes of Upload frames received.")
	p.bytesOut = f("hlm_downlink_bytes_total", "Bytes of Verdict frames sent.")
	p.bitsIn = f("hlm_uplink_bits_total", "Uplink bits in the papers' accounting: token ids plus codec payloads.")
	p.bitsOut = f("hlm_downlink_bits_total", "Downlink bits in the papers' accounting: accepted count plus token id.")
	p.accepted = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "hlm_accepted_tokens_total", Help: "Accepted drafts by position in their block."}, []string{"position"})
	p.verify = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "hlm_verify_seconds", Help: "Verification latency, batching queue included.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16)})
	p.batch = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "hlm_batch_sessions", Help: "Sessions evaluated in one LLM pass.",
		Buckets: []float64{1, 2, 4, 8, 16, 32, 64}})
	p.errors = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "hlm_errors_total", Help: "Protocol errors sent to peers, by code."}, []string{"code"})
	p.reg.MustRegister(p.active, p.prefill, p.accepted, p.verify, p.batch, p.errors,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return p
}

// SlotStats is what an LLM with slots reports for AddSlots: its slots in
// use and in all, and its counts since it opened.
type SlotStats struct {
	Used, Total                              int
	Decodes, Evictions, Restores, Recomputes int
}

// AddSlots exports an LLM's slots, read from stats once at every scrape
// (the llama.cpp backend's sequences: np of them; more sessions take
// turns).
func (p *Prometheus) AddSlots(stats func() SlotStats) {
	p.reg.MustRegister(slotCollector{stats})
}

// AddKVBytes exports the memory of the sessions' KV caches
// (Server.KVBytes), read at every scrape, as the gauge hlm_kv_cache_bytes.
func (p *Prometheus) AddKVBytes(kv func() int64) {
	p.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "hlm_kv_cache_bytes",
		Help: "Bytes of the sessions' KV caches in this process, as of each session's last round (hlm's engine; llama.cpp's cache is allocated at load)."}, func() float64 { return float64(kv()) }))
}

// AddParked exports the sessions parked for conversations (Server.Parked),
// read at every scrape, as the gauge hlm_sessions_parked.
func (p *Prometheus) AddParked(parked func() int) {
	p.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "hlm_sessions_parked",
		Help: "Sessions parked by their devices for a conversation's next turn (part of hlm_sessions_active)."}, func() float64 { return float64(parked()) }))
}

// slotCollector is AddSlots's metrics: one reading of the stats per
// scrape gives them all.
type slotCollector struct{ stats func() SlotStats }

var (
	slotsDesc      = prometheus.NewDesc("hlm_llm_slots", "The LLM's session slots (llama.cpp sequences), used or free.", []string{"state"}, nil)
	decodesDesc    = prometheus.NewDesc("hlm_llm_decodes_total", "The LLM's evaluation calls (llama_decode).", nil, nil)
	evictionsDesc  = prometheus.NewDesc("hlm_llm_slot_evictions_total", "Sessions moved out of their slot to make room for another.", nil, nil)
	restoresDesc   = prometheus.NewDesc("hlm_llm_slot_restores_total", "Evicted sessions restored from their saved state.", nil, nil)
	recomputesDesc = prometheus.NewDesc("hlm_llm_slot_recomputes_total", "Evicted sessions evaluated again from their tokens.", nil, nil)
)

func (slotCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{slotsDesc, decodesDesc, evictionsDesc, restoresDesc, recomputesDesc} {
		ch <- d
	}
}

func (c slotCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.stats()
	ch <- prometheus.MustNewConstMetric(slotsDesc, prometheus.GaugeValue, float64(s.Used), "used")
	ch <- prometheus.MustNewConstMetric(slotsDesc, prometheus.GaugeValue, float64(s.Total-s.Used), "free")
	for _, m := range []struct {
		d *prometheus.Desc
		v int
	}{{decodesDesc, s.Decodes}, {evictionsDesc, s.Evictions}, {restoresDesc, s.Restores}, {recomputesDesc, s.Recomputes}} {
		ch <- prometheus.MustNewConstMetric(m.d, prometheus.CounterValue, float64(m.v))
	}
}

// Handler serves the metrics in the Prometheus text format.
func (p *Prometheus) Handler() http.Handler {
	return promhttp.HandlerFor(p.reg, promhttp.HandlerOpts{})
}

func (p *Prometheus) SessionStarted(prefix int, reopened bool) {
	p.active.Inc()
	p.sessions.Inc()
	cause := "prompt"
	if reopened {
		cause = "reopen"
		p.reopened.Inc()
	}
	p.prefill.WithLabelValues(cause).Add(float64(prefix))
}

func (p *Prometheus) SessionResumed() { p.resumed.Inc() }

func (p *Prometheus) SessionContinued(kept, added int) {
	p.continued.Inc()
	p.kept.Add(float64(kept))
	p.prefill.WithLabelValues("continue").Add(float64(added))
}
func (p *Prometheus) SessionEnded() { p.active.Dec() }

func (p *Prometheus) Round(drafts, accepted int, resampled bool, verify time.Duration) {
	p.rounds.Inc()
	p.drafts.Add(float64(drafts))
	for i := 0; i < accepted; i++ {
		p.accepted.WithLabelValues(positionLabel(i)).Inc()
	}
	if resampled {
		p.resampled.Inc()
	}
	p.verify.Observe(verify.Seconds())
}

// maxPositionLabel bounds the position label's values: a device decides
// its blocks' length, and one label per position (up to a context's
// length) would let it grow the scrape without bound.
const maxPositionLabel = 16

// positionLabel is the label of a draft's position in its block.
func positionLabel(i int) string {
	if i >= maxPositionLabel {
		return strconv.Itoa(maxPositionLabel) + "+"
	}
	return strconv.Itoa(i)
}

func (p *Prometheus) Batch(size int)    { p.batch.Observe(float64(size)) }
func (p *Prometheus) Bytes(in, out int) { p.bytesIn.Add(float64(in)); p.bytesOut.Add(float64(out)) }
func (p *Prometheus) Bits(in, out int)  { p.bitsIn.Add(float64(in)); p.bitsOut.Add(float64(out)) }
func (p *Prometheus) Error(code uint16) { p.errors.WithLabelValues(strconv.Itoa(int(code))).Inc() }
