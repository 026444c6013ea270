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
