package edge_test

import (
	"context"
	"fmt"
	"log"
	"net"

	"github.com/hlmproject/hlm/cloud"
	"github.com/hlmproject/hlm/edge"
	"github.com/hlmproject/hlm/hybrid"
	"github.com/hlmproject/hlm/sim"
)

// A server and a device over TCP in one program, as `hlm serve` and
// `hlm edge` run them on two machines: package cloud verifies with the
// LLM, package edge drafts with the SLM and uploads what the method
// sends. The tokens and the uplink bits are the simulator's for the same
// parameters and seed.
func Example() {
	ms, err := sim.Open("", "", "") // the embedded pair: stories260K and its draft
	if err != nil {
		log.Fatal(err)
	}
	srv, err := cloud.New(cloud.Config{LLM: ms.LLM})
	if err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	go srv.Serve(ctx, ln)
	defer srv.Shutdown(ctx) // closes the listener and the sessions

	p := hybrid.DefaultParams()
	if err := p.SetAll([]string{"method=q-s", "max_tokens=24", "seed=3"}); err != nil {
		log.Fatal(err)
	}
	g, err := edge.NewGenerator(edge.Config{Addr: ln.Addr().String()}, ms.SLM, p)
	if err != nil {
		log.Fatal(err)
	}
	prompt := "Once upon a time"
	remote, _, err := g.One(ctx, p, prompt, nil)
	if err != nil {
		log.Fatal(err)
	}
	local, err := sim.One(ctx, ms, p, prompt, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%q\n", remote.Text)
	fmt.Printf("%d tokens, %d uplink bits over TCP; the simulator: same tokens %v, %d bits\n",
		len(remote.Tokens), remote.UplinkBits, fmt.Sprint(remote.Tokens) == fmt.Sprint(local.Tokens), local.UplinkBits)
	// Output:
	// ", there was a big box. On the box, there was a big red lot."
	// 24 tokens, 9552 uplink bits over TCP; the simulator: same tokens true, 9552 bits
}
