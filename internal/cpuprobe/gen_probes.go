//go:build ignore

// gen_probes writes probes_amd64.s and probes_amd64.go: the loops of the
// throughput probes (cpuprobe.go). Run it with `go generate
// ./internal/cpuprobe` after changing the table below.
package main

import (
	"bytes"
	"fmt"
	"go/format"
	"os"
	"strconv"
	"strings"
)

// A probe is one loop body of independent instructions. Each line's %d
// is replaced by the destination register of its instance i (a rotating
// set, so that no instruction waits for another), %s by a memory operand
// at a different offset of the buffer for each instance.
type probe struct {
	name, doc string
	body      []string // instructions, emitted n times each, interleaved
	n         int
}

// avx2Probes need only AVX2 (and FMA): the instructions of the avx2 and
// avx2-zen1 tiles, alone and in the mixes of one tile step, with
// destinations Y0–Y11 and sources Y12–Y15.
var avx2Probes = []probe{
	{"avx2-madd", "VPMADDUBSW on 256-bit registers (AVX2)", []string{"VPMADDUBSW Y12, Y13, Y%d"}, 12},
	{"avx2-maddwd", "VPMADDWD: 16-bit pairs into 32 bits (AVX2: the Q8_0 tiles' sums, the K-quant scales)", []string{"VPMADDWD Y12, Y13, Y%d"}, 12},
	{"avx2-mulld", "VPMULLD: 32-bit products (AVX2)", []string{"VPMULLD Y12, Y13, Y%d"}, 12},
	{"avx2-haddw", "VPHADDW: horizontal 16-bit sums (avx2-zen1's K-quant pairs)", []string{"VPHADDW Y12, Y13, Y%d"}, 12},
	{"avx2-shuffle", "VPSHUFB on 256-bit registers", []string{"VPSHUFB Y12, Y13, Y%d"}, 12},
	{"avx2-sign", "VPSIGNB (the AVX2 Q8_0 tiles' sign)", []string{"VPSIGNB Y12, Y13, Y%d"}, 12},
	{"avx2-cvt", "VCVTDQ2PS on 256-bit registers", []string{"VCVTDQ2PS Y12, Y%d"}, 12},
	{"avx2-fma", "VFMADD231PS on 256-bit registers (FMA)", []string{"VFMADD231PS Y12, Y13, Y%d"}, 12},
	{"avx2-q8-block", "one row, token and 32-element block of the AVX2 Q8_0 tile: VPSIGNB, VPMADDUBSW, VPMADDWD, VCVTDQ2PS, VMULPS (dw·dx), VFMADD231PS (per group: 4 groups an iteration)",
		[]string{"VPSIGNB Y12, Y13, Y%d", "VPMADDUBSW Y12, Y13, Y%d", "VPMADDWD Y12, Y13, Y%d", "VCVTDQ2PS Y12, Y%d", "VMULPS Y12, Y13, Y%d", "VFMADD231PS Y12, Y13, Y%d"}, 4},
	{"avx2-k4-chunks", "64 codes of one token in avx2's Q4_K tile: VPMADDUBSW, VPMADDWD by the scale, VPADDD, twice (per group: 4 groups an iteration)",
		[]string{"VPMADDUBSW Y12, Y13, Y%d", "VPMADDWD Y12, Y13, Y%d", "VPADDD Y12, Y13, Y%d", "VPMADDUBSW Y12, Y14, Y%d", "VPMADDWD Y12, Y14, Y%d", "VPADDD Y12, Y14, Y%d"}, 4},
	{"avx2-k4-pair", "the same 64 codes in avx2-zen1's tile: two VPMADDUBSW, VPHADDW, VPSHUFB, one VPMADDWD by two scales, VPADDD (per group: 4 groups an iteration)",
		[]string{"VPMADDUBSW Y12, Y13, Y%d", "VPMADDUBSW Y12, Y14, Y%d", "VPHADDW Y12, Y13, Y%d", "VPSHUFB Y12, Y13, Y%d", "VPMADDWD Y12, Y13, Y%d", "VPADDD Y12, Y13, Y%d"}, 4},
}

// tileProbes are the loops of tensor's generated tiles (gemm_amd64.s),
// each turned into a probe by tileLoop: one iteration is one pass of the
// tile's loop (a super-block of its tokens, or a block), on registers and
// the probe's buffer, so that its time against the tile's in a real
// product tells how much the arithmetic itself takes.
var tileProbes = []struct{ name, tile, doc string }{
	{"avx2-k4-tile", "k4AVX2R1T4P", "the loop of avx2-zen1's 4-token Q4_K tile (k4AVX2R1T4P, from tensor/gemm_amd64.s), one super-block of 256 codes by 4 tokens an iteration, every instruction independent"},
	{"avx2-q8-tile", "q8AVX2R2T4", "the loop of the AVX2 2-row × 4-token Q8_0 tile (q8AVX2R2T4, from tensor/gemm_amd64.s), one 32-element block of 2 rows by 4 tokens an iteration, every instruction independent"},
}

// tileLoop finds the loop of the generated tile name in the assembly src
// and returns its vector instructions as a probe body: each
// instruction's register destination becomes the rotating %d (Y or X),
// its register sources Y12–Y15 (X12–X15), its memory operand (loads,
// stores, constants, prefetches) %s in the probe's buffer; the loop's
// pointer arithmetic and branch are left out.
func tileLoop(src []byte, name string) []string {
	var body []string
	in := false
	for _, line := range strings.Split(string(src), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == name+"_loop:":
			in = true
			continue
		case !in:
			continue
		case strings.HasPrefix(line, "JNZ"):
			return body
		}
		op, args, _ := strings.Cut(line, " ")
		if op == "" || !strings.HasPrefix(op, "V") && !strings.HasPrefix(op, "PREFETCH") {
			continue // ADDQ, DECQ: the loop's bookkeeping
		}
		ops := strings.Split(args, ", ")
		for i, o := range ops {
			last := i == len(ops)-1
			switch {
			case strings.HasPrefix(o, "$"):
			case strings.Contains(o, "("):
				ops[i] = "%s"
			case last:
				ops[i] = o[:1] + "%d"
			default:
				n, err := strconv.Atoi(o[1:])
				if err != nil {
					panic(line)
				}
				ops[i] = fmt.Sprintf("%s%d", o[:1], 12+n%4)
			}
		}
		body = append(body, op+" "+strings.Join(ops, ", "))
	}
	panic(name + ": no loop in tensor/gemm_amd64.s")
}

var probes = []probe{
	{"madd", "VPMADDUBSW: 512-bit multiply-add of unsigned by signed bytes to 16-bit pairs (the Q4_K tiles' first step)", []string{"VPMADDUBSW Z30, Z31, Z%d"}, 8},
	{"dpbusd", "VPDPBUSD: 512-bit VNNI dot products of byte quadruples into 32 bits (the Q8_0 and Q4_0 tiles)", []string{"VPDPBUSD Z30, Z31, Z%d"}, 8},
	{"dpwssd", "VPDPWSSD: 512-bit VNNI dot products of 16-bit pairs into 32 bits (the K-quant tiles' scales)", []string{"VPDPWSSD Z30, Z31, Z%d"}, 8},
	{"fma", "VFMADD231PS: 512-bit float multiply-add", []string{"VFMADD231PS Z30, Z31, Z%d"}, 8},
	{"fma-masked", "VFMADD231PS under a mask of 8 of 16 lanes (the Q4_K mins)", []string{"VFMADD231PS Z30, Z31, K1, Z%d"}, 8},
	{"fma-256", "VFMADD231PS on 256-bit registers", []string{"VFMADD231PS Y30, Y31, Y%d"}, 16},
	{"madd-256", "VPMADDUBSW on 256-bit registers", []string{"VPMADDUBSW Y30, Y31, Y%d"}, 16},
	{"dpbusd+fma", "8 VPDPBUSD and 8 VFMADD231PS: do integer and float multiplications share pipes?", []string{"VPDPBUSD Z30, Z31, Z%d", "VFMADD231PS Z30, Z31, Z%d"}, 8},
	{"dpbusd+cvt", "8 VPDPBUSD and 8 VCVTDQ2PS", []string{"VPDPBUSD Z30, Z31, Z%d", "VCVTDQ2PS Z30, Z%d"}, 8},
	{"dpbusd+shift", "8 VPDPBUSD and 16 VPSLLD", []string{"VPDPBUSD Z30, Z31, Z%d", "VPSLLD $16, Z30, Z%d", "VPSLLD $16, Z31, Z%d"}, 8},
	{"dpbusd+ternlog", "8 VPDPBUSD and 16 VPTERNLOGD", []string{"VPDPBUSD Z30, Z31, Z%d", "VPTERNLOGD $0xf8, Z29, Z30, Z%d", "VPTERNLOGD $0xf8, Z29, Z31, Z%d"}, 8},
	{"dpbusd+shuffle", "8 VPDPBUSD and 16 VPSHUFB", []string{"VPDPBUSD Z30, Z31, Z%d", "VPSHUFB Z29, Z30, Z%d", "VPSHUFB Z29, Z31, Z%d"}, 8},
	{"dpbusd+rotate", "8 VPDPBUSD and 16 VPROLD", []string{"VPDPBUSD Z30, Z31, Z%d", "VPROLD $16, Z30, Z%d", "VPROLD $16, Z31, Z%d"}, 8},
	{"dpbusd+permw", "8 VPDPBUSD and 16 VPERMW", []string{"VPDPBUSD Z30, Z31, Z%d", "VPERMW Z29, Z30, Z%d", "VPERMW Z29, Z31, Z%d"}, 8},
	{"dpbusd+add", "8 VPDPBUSD and 16 VPADDD", []string{"VPDPBUSD Z30, Z31, Z%d", "VPADDD Z29, Z30, Z%d", "VPADDD Z29, Z31, Z%d"}, 8},
	{"dpbusd+broadcast", "8 VPDPBUSD and 16 VBROADCASTI64X4 from memory", []string{"VPDPBUSD Z30, Z31, Z%d", "VBROADCASTI64X4 %s, Z%d", "VBROADCASTI64X4 %s, Z%d"}, 8},
	{"dpbusd-mem", "VPDPBUSD with a 512-bit memory operand", []string{"VPDPBUSD %s, Z31, Z%d"}, 8},
	{"dpbusd-bcst", "VPDPBUSD with a broadcast 32-bit memory operand (the packed Q8_0 tiles)", []string{"VPDPBUSD.BCST %s, Z31, Z%d"}, 8},
}

func main() {
	var s, decls, table bytes.Buffer
	fmt.Fprintf(&s, "// Code generated by gen_probes.go; DO NOT EDIT.\n\n//go:build amd64 && !purego\n\n#include \"textflag.h\"\n\n")
	// chain: n iterations of 8 dependent ADDQ, one cycle each.
	fmt.Fprintf(&s, "// func chain(n int) int\nTEXT ·chain(SB), NOSPLIT, $0-16\n\tMOVQ n+0(FP), CX\n\tXORQ AX, AX\nchain_loop:\n")
	for i := 0; i < 8; i++ {
		fmt.Fprintf(&s, "\tADDQ $1, AX\n")
	}
	fmt.Fprintf(&s, "\tDECQ CX\n\tJNZ chain_loop\n\tMOVQ AX, ret+8(FP)\n\tRET\n\n")
	tiles, err := os.ReadFile("../../tensor/gemm_amd64.s")
	if err != nil {
		panic(err)
	}
	for _, t := range tileProbes {
		avx2Probes = append(avx2Probes, probe{t.name, t.doc, tileLoop(tiles, t.tile), 1})
	}
	for k, p := range append(probes, avx2Probes...) {
		avx2 := k >= len(probes) // Y0–Y15, destinations Y0–Y11
		fn := fmt.Sprintf("probe%d", k)
		fmt.Fprintf(&decls, "//go:noescape\nfunc %s(n int, buf *byte)\n\n", fn)
		fmt.Fprintf(&table, "\t{%q, %q, %s, %d, %d, %v},\n", p.name, p.doc, fn, len(p.body)*p.n, p.n, avx2)
		fmt.Fprintf(&s, "// %s: %s\nTEXT ·%s(SB), NOSPLIT, $0-16\n", p.name, p.doc, fn)
		fmt.Fprintf(&s, "\tMOVQ n+0(FP), CX\n\tMOVQ buf+8(FP), DI\n")
		dests := 24
		if avx2 {
			dests = 12
			for r := 0; r < 16; r++ {
				fmt.Fprintf(&s, "\tVPXOR Y%d, Y%d, Y%d\n", r, r, r)
			}
		} else {
			fmt.Fprintf(&s, "\tMOVL $0xff, AX\n\tKMOVW AX, K1\n")
			for r := 0; r < 32; r++ {
				fmt.Fprintf(&s, "\tVPXORD Z%d, Z%d, Z%d\n", r, r, r)
			}
		}
		fmt.Fprintf(&s, "%s_loop:\n", fn)
		reg, mem := 0, 0
		for i := 0; i < p.n; i++ {
			for _, ins := range p.body {
				line := ins
				if strings.Contains(line, "%s") {
					line = strings.Replace(line, "%s", fmt.Sprintf("%d(DI)", 64*(mem%16)), 1)
					mem++
				}
				if strings.Contains(line, "%d") { // a prefetch has no destination
					line = fmt.Sprintf(line, reg%dests)
					reg++
				}
				fmt.Fprintf(&s, "\t%s\n", line)
			}
		}
		fmt.Fprintf(&s, "\tDECQ CX\n\tJNZ %s_loop\n\tVZEROUPPER\n\tRET\n\n", fn)
	}
	if err := os.WriteFile("probes_amd64.s", s.Bytes(), 0o644); err != nil {
		panic(err)
	}
	var g bytes.Buffer
	fmt.Fprintf(&g, "// Code generated by gen_probes.go; DO NOT EDIT.\n\n//go:build amd64 && !purego\n\npackage cpuprobe\n\n")
	fmt.Fprintf(&g, "//go:noescape\nfunc chain(n int) int\n\n")
	g.Write(decls.Bytes())
	fmt.Fprintf(&g, "var probes = []Probe{\n%s}\n\n", table.String())
	fmt.Fprintf(&g, "// tileOf names the tensor tile whose loop each tile probe is (TestTileProbesCurrent).\nvar tileOf = map[string]string{\n")
	for _, t := range tileProbes {
		fmt.Fprintf(&g, "\t%q: %q,\n", t.name, t.tile)
	}
	fmt.Fprintf(&g, "}\n")
	out, err := format.Source(g.Bytes())
	if err != nil {
		panic(err)
	}
	if err := os.WriteFile("probes_amd64.go", out, 0o644); err != nil {
		panic(err)
	}
}
