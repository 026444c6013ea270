package cloud

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestPrometheusSlots: an LLM's slots are read at each scrape and
// exported under their names, used and free from the same reading.
func TestPrometheusSlots(t *testing.T) {
	p := NewPrometheus()
	st := SlotStats{Used: 3, Total: 4, Decodes: 10, Evictions: 2, Restores: 1, Recomputes: 1}
	p.AddSlots(func() SlotStats { return st })
	scrape := func() string {
		rec := httptest.NewRecorder()
		p.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		b, _ := io.ReadAll(rec.Body)
		return string(b)
	}
	body := scrape()
	for _, want := range []string{`hlm_llm_slots{state="used"} 3`, `hlm_llm_slots{state="free"} 1`, "hlm_llm_decodes_total 10",
		"hlm_llm_slot_evictions_total 2", "hlm_llm_slot_restores_total 1", "hlm_llm_slot_recomputes_total 1"} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("no %q in the scrape", want)
		}
	}
	st.Used, st.Evictions = 4, 5
	if body := scrape(); !strings.Contains(body, `hlm_llm_slots{state="free"} 0`+"\n") || !strings.Contains(body, "hlm_llm_slot_evictions_total 5\n") {
		t.Error("a second scrape did not read the stats again")
	}
}

// TestPrometheusPositionsBounded: a device that has 500 drafts of one
// block accepted adds at most 17 position series, not 500.
func TestPrometheusPositionsBounded(t *testing.T) {
	p := NewPrometheus()
	p.Round(500, 500, false, time.Millisecond)
	rec := httptest.NewRecorder()
	p.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	if n := strings.Count(body, "hlm_accepted_tokens_total{"); n != maxPositionLabel+1 {
		t.Errorf("%d position series, want %d", n, maxPositionLabel+1)
	}
	if want := `hlm_accepted_tokens_total{position="16+"} 484`; !strings.Contains(body, want+"\n") {
		t.Errorf("no %q in the scrape", want)
	}
}
