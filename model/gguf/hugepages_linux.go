package gguf

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

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

// hugePage is the size of the pages a mapping advised by adviseHugePages
// may be mapped in: one PMD entry on amd64.
const hugePage = 2 << 20

// touched keeps the reads of mappedWhole from being left out.
var touched atomic.Uint32

// mappedWhole reports whether the pages of b, a file mapping advised by
// adviseHugePages, that the page cache holds are mapped in 2 MiB pages:
// each 2 MiB range of b whose pages are all resident (mincore) is touched
// once, which maps it whole where its folio is whole and a few 4 KiB
// pages of it otherwise, and the mapping's FilePmdMapped in
// /proc/self/smaps must then cover at least three quarters of those
// ranges (a file read in order without the advice comes in smaller
// folios for its first ~36 MB, in 2 MiB ones after: 157 of 190 MB of a
// 200 MB file mapped whole on the Zen 1's kernel 6.18, ext4; one held in
// 4 KiB pages, none). Ranges not in the page cache count as whole: with
// the advice a fault reads them in 2 MiB folios. No file I/O; false
// where it cannot tell.
func mappedWhole(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	page := uintptr(os.Getpagesize())
	vec, err := mincore(b)
	if err != nil {
		return false
	}
	resident, sum := 0, byte(0)
	lo := (base + hugePage - 1) &^ (hugePage - 1)
	for at := lo; at+hugePage <= base+uintptr(len(b)); at += hugePage {
		pages := vec[(at-base)/page : (at-base+hugePage)/page]
		if !slices.ContainsFunc(pages, notResident) {
			sum += b[at-base]
			resident++
		}
	}
	touched.Add(uint32(sum))
	if resident == 0 {
		return true
	}
	pmd, ok := filePmdMapped(base)
	return ok && pmd*4 >= uint64(resident)*hugePage*3
}

// mincore returns, per page of b, whether it is in memory (bit 0 of each
// byte: mincore(2)).
func mincore(b []byte) ([]byte, error) {
	page := os.Getpagesize()
	vec := make([]byte, (len(b)+page-1)/page)
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)), uintptr(unsafe.Pointer(unsafe.SliceData(vec)))); e != 0 {
		return nil, e
	}
	return vec, nil
}

// notResident reports whether a mincore entry says the page is not in
// memory.
func notResident(v byte) bool { return v&1 == 0 }

// filePmdMapped reads the FilePmdMapped bytes of the mapping that starts
// at addr from /proc/self/smaps.
func filePmdMapped(addr uintptr) (uint64, bool) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	return pmdMappedIn(f, addr)
}

// pmdMappedIn reads the FilePmdMapped bytes of the mapping that starts at
// addr from smaps text (proc(5)): false if that mapping or its line is
// missing or malformed.
func pmdMappedIn(r io.Reader, addr uintptr) (uint64, bool) {
	sc := bufio.NewScanner(r)
	start := fmt.Sprintf("%x-", addr)
	in := false
	for sc.Scan() {
		line := sc.Text()
		first, _, _ := strings.Cut(line, " ")
		if !strings.HasSuffix(first, ":") { // a mapping's line: "start-end perms offset dev inode path"
			in = strings.HasPrefix(first, start)
			continue
		}
		if in && first == "FilePmdMapped:" {
			f := strings.Fields(line)
			if len(f) != 3 || f[2] != "kB" {
				return 0, false
			}
			kb, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				return 0, false
			}
			return kb << 10, true
		}
	}
	return 0, false
}
