package gguf

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestMappedInHugePages: Open maps a file with the advice to hold its
// pages in huge pages (the VmFlags of its mapping in /proc/self/smaps say
// "hg"), so that pages read from disk come in 2 MiB folios.
func TestMappedInHugePages(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil {
		t.Skip("this kernel has no transparent huge pages: the advice is refused and not needed")
	}
	path := filepath.Join(t.TempDir(), "model.gguf")
	if err := os.WriteFile(path, sampleFile(t, 1024), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if !f.Mapped() {
		t.Fatal("not mapped")
	}
	flags, err := vmFlags(uintptr(unsafe.Pointer(unsafe.SliceData(f.data))))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(flags, "hg") {
		t.Fatalf("the file's mapping has VmFlags %v, without hg (MADV_HUGEPAGE)", flags)
	}
}

// vmFlags returns the VmFlags of the mapping of this process that holds
// address p.
func vmFlags(p uintptr) ([]string, error) {
	smaps, err := os.Open("/proc/self/smaps")
	if err != nil {
		return nil, err
	}
	defer smaps.Close()
	in := false
	sc := bufio.NewScanner(smaps)
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x", &lo, &hi); n == 2 { // a mapping's first line: lo-hi perms …
			in = lo <= p && p < hi
			continue
		}
		if rest, ok := strings.CutPrefix(line, "VmFlags:"); ok && in {
			return strings.Fields(rest), nil
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("no mapping holds %#x", p)
}

// TestMappedWhole puts a file's pages in three page-cache states and asks
// MappedWhole of a fresh mapping in each: not cached (whole: the advice
// reads them in 2 MiB folios), cached in 4 KiB pages (read without
// read-ahead, 4 KiB at a time: not whole), and cached by reading them
// through an advised mapping, as a run of hlm does (whole where the
// kernel and file system keep file pages in 2 MiB folios; skipped where
// they do not).
func TestMappedWhole(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil {
		t.Skip("this kernel has no transparent huge pages")
	}
	path := filepath.Join(t.TempDir(), "model.gguf")
	if err := os.WriteFile(path, sampleFile(t, 4096), 0o644); err != nil { // 18 MB: eight 2 MiB ranges
		t.Fatal(err)
	}
	// whole reports MappedWhole of a fresh mapping and the share of the
	// file cached before it was opened.
	whole := func() (bool, float64) {
		res := cachedShare(t, path)
		f, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		return f.MappedWhole(), res
	}
	evict(t, path)
	if w, res := whole(); res > 0.05 {
		t.Skipf("the file's pages stay cached after FADV_DONTNEED (%.0f%%): this file system keeps them", 100*res)
	} else if !w {
		t.Error("not cached: MappedWhole false, want true (the advice brings the pages in whole)")
	}
	evict(t, path)
	readSmall(t, path)
	if w, res := whole(); res < 0.99 {
		t.Skipf("read 4 KiB at a time, %.0f%% of the file is cached", 100*res)
	} else if w {
		t.Error("cached in 4 KiB pages: MappedWhole true, want false")
	}
	// As after a run of hlm: the pages read through an advised mapping.
	evict(t, path)
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := byte(0)
	for i := 0; i < len(f.data); i += 4096 {
		sum += f.data[i]
	}
	touched.Add(uint32(sum))
	f.Close()
	if w, res := whole(); res < 0.99 {
		t.Skipf("read through an advised mapping, %.0f%% of the file is cached", 100*res)
	} else if !w {
		t.Skip("read through an advised mapping, the file is not mapped whole: this kernel or file system does not keep file pages in 2 MiB folios")
	}
}

// evict drops the file's pages from the page cache.
func evict(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		t.Skipf("FADV_DONTNEED: %v", err)
	}
}

// readSmall reads the file 4 KiB at a time with read-ahead off, so that
// the page cache holds it in 4 KiB pages.
func readSmall(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_RANDOM); err != nil {
		t.Skipf("FADV_RANDOM: %v", err)
	}
	buf := make([]byte, 4096)
	for off := int64(0); ; off += int64(len(buf)) {
		if k, _ := f.ReadAt(buf, off); k < len(buf) {
			return
		}
	}
}

// cachedShare is the share of the file's pages in the page cache
// (mincore of a mapping nothing reads).
func cachedShare(t *testing.T, path string) float64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	b, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(b)
	vec, err := mincore(b)
	if err != nil {
		t.Fatalf("mincore: %v", err)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return float64(n) / float64(len(vec))
}

// smapsSample is two mappings of /proc/self/smaps as Linux 6.18 writes
// them (fields cut).
const smapsSample = `7f000000-7f400000 r--s 00000000 fd:01 1234                       /tmp/a.gguf
Size:               4096 kB
Rss:                4096 kB
FilePmdMapped:      2048 kB
VmFlags: rd sh mr mw me ms hg
7f400000-7f600000 r--s 00400000 fd:01 1234                       /tmp/a.gguf
Rss:                   8 kB
FilePmdMapped:         0 kB
VmFlags: rd sh mr mw me ms
`

func TestPmdMappedIn(t *testing.T) {
	for _, c := range []struct {
		addr uintptr
		want uint64
		ok   bool
	}{
		{0x7f000000, 2048 << 10, true},
		{0x7f400000, 0, true},
		{0x7f200000, 0, false}, // inside a mapping, not its start
	} {
		got, ok := pmdMappedIn(strings.NewReader(smapsSample), c.addr)
		if got != c.want || ok != c.ok {
			t.Errorf("%#x: %d, %v; want %d, %v", c.addr, got, ok, c.want, c.ok)
		}
	}
	if _, ok := pmdMappedIn(strings.NewReader(strings.Replace(smapsSample, "2048 kB", "2048 MB", 1)), 0x7f000000); ok {
		t.Error("a size not in kB was read")
	}
}

// FuzzPmdMappedIn: any smaps text gives an answer, never a panic, and a
// value only from a well-formed line.
func FuzzPmdMappedIn(f *testing.F) {
	f.Add(smapsSample, uint64(0x7f000000))
	f.Add("1-2 r\nFilePmdMapped: 99999999999999999999 kB\n", uint64(1))
	f.Fuzz(func(t *testing.T, text string, addr uint64) {
		if v, ok := pmdMappedIn(strings.NewReader(text), uintptr(addr)); !ok && v != 0 {
			t.Errorf("not found, but %d", v)
		} else if ok && !strings.Contains(text, "FilePmdMapped:") {
			t.Errorf("found %d without a FilePmdMapped line", v)
		}
	})
}
