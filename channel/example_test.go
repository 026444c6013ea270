package channel_test

import (
	"fmt"
	"log"

	"github.com/hlmproject/hlm/channel"
)

// The CU-HLM round of Sec. I: a full 32,000-entry distribution at 8 + 15
// bits per entry over 10 MHz at 10 dB, without fading.
func Example() {
	cfg := channel.CUHLMConfig()
	if err := cfg.Set("fading", "none"); err != nil {
		log.Fatal(err)
	}
	link, err := channel.New(cfg)
	if err != nil {
		log.Fatal(err)
	}
	s := link.Round(0)
	fmt.Printf("rate %.2f Mbit/s, 736000 bits in %v\n", s.UpRate/1e6, s.UpTime(736000))
	// Output: rate 34.59 Mbit/s, 736000 bits in 21.275171ms
}

func ExampleMeanSNR() {
	cfg := channel.DefaultConfig() // U-HLM: 23 dBm, −104 dBm, 2.5 km, α = 4
	snr := channel.MeanSNR(cfg)
	fmt.Printf("%.4f = %.2f dB, %.0f bit/s at 1 MHz\n", snr, channel.LinearToDB(snr), channel.ShannonRate(1e6, snr))
	// Output: 0.1283 = -8.92 dB, 174156 bit/s at 1 MHz
}
