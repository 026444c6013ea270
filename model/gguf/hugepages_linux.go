package gguf

import "golang.org/x/sys/unix"

// adviseHugePages asks Linux to hold the pages of a mapped file in 2 MiB
// folios mapped whole (MADV_HUGEPAGE): a page read from disk on a fault
// is then read in one of them. Without the advice, a model's pages
// faulted in by the products (several threads, each on its rows of a
// matrix) mostly come in 4 KiB pieces — 730–880 MB of Llama-3.1-8B
// Q4_K_M's 4.6 GB mapped whole after a cold start, 22–44 MB of
// Phi-3-mini's 2.3 GB — and decode reads them slower: 5.3–6.3 tokens/s
// against 9.7–10.8 with the advice (2,194 and 4,390 MB mapped whole), on
// the Zen 5, 2026-12-03 (docs/BENCHMARKS.md, "Huge pages for the mapped
// file"). Pages already in the page cache keep the size they were read
// in. Advice only: a kernel without transparent huge pages refuses it,
// and the file is read as before.
func adviseHugePages(b []byte) { _ = unix.Madvise(b, unix.MADV_HUGEPAGE) }
