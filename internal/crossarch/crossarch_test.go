package crossarch

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// TestARM64 cross-compiles the tests of tensor and model/llama for
// linux/arm64 and runs them under qemu-aarch64: every kernel level arm64
// has (neon: dotF32x16, and dotQuantNEON with SDOT) must give the portable
// code's bits, and the whole model the logits digests pinned for amd64.
// It skips under -short, when qemu-aarch64 is not installed (Debian:
// qemu-user), or on an arm64 host (there the packages' own tests run
// natively).
func TestARM64(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-architecture tests take minutes under emulation; skipped under -short")
	}
	if runtime.GOARCH == "arm64" {
		t.Skip("arm64 host: the packages' tests run natively")
	}
	qemu, err := exec.LookPath("qemu-aarch64")
	if err != nil {
		t.Skip("qemu-aarch64 not installed (Debian package qemu-user): arm64 kernels not tested")
	}
	// go test puts its own GOROOT/bin first on the PATH of the tests.
	goCmd := "go"
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	// The emulated runs use the best arm64 level whatever the host's
	// tests were asked to use.
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HLM_KERNELS=") {
			env = append(env, kv)
		}
	}
	dir := t.TempDir()
	for _, pkg := range []string{"tensor", "model/llama"} {
		bin := filepath.Join(dir, strings.ReplaceAll(pkg, "/", "_")+".test")
		build := exec.Command(goCmd, "test", "-c", "-o", bin, "./"+pkg)
		build.Dir = root
		build.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("building %s for arm64: %v\n%s", pkg, err, out)
		}
		vet := exec.Command(goCmd, "vet", "./"+pkg)
		vet.Dir = root
		vet.Env = build.Env
		if out, err := vet.CombinedOutput(); err != nil {
			t.Fatalf("go vet of %s for arm64 (assembly frames): %v\n%s", pkg, err, out)
		}
		// max: every extension QEMU emulates (SDOT included); cortex-a72:
		// ARMv8.0, no SDOT, so the integer types take the portable code.
		// The two emulated CPUs run at once: each emulation is one host
		// thread, and this test is most of the suite's time on 2 cores.
		// model/llama's tests run whole on max; on the Cortex-A72 only
		// those whose bits depend on the integer kernels (the pinned
		// digests at every level, the quantized goldens, the quantized KV
		// caches): the rest (allocations, token trees, family goldens in
		// F32) runs the same NEON code on both and takes three quarters of
		// model/llama's emulated time (~170 of ~215 s, measured under
		// -cpu max; the A72's subset alone takes ~49 s).
		cpus := []struct {
			name, features string
			llamaRun       []string
		}{
			{"max", "asimd, sdot", nil},
			{"cortex-a72", "asimd, no sdot", a72LlamaTests},
		}
		errs := make([]string, len(cpus))
		var wg sync.WaitGroup
		for i, cpu := range cpus {
			var run []string
			if pkg == "model/llama" {
				run = cpu.llamaRun
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = runEmulated(qemu, cpu.name, cpu.features, bin, pkg, run, root, env, t.Logf)
			}()
		}
		wg.Wait()
		for _, e := range errs {
			if e != "" {
				t.Error(e)
			}
		}
		if t.Failed() {
			t.FailNow()
		}
	}
}

// a72LlamaTests are model/llama's tests that the emulated Cortex-A72 (no
// SDOT) runs: those whose results go through the integer kernels. Each
// must run (runEmulated checks), so that a rename cannot empty the list.
var a72LlamaTests = []string{
	"TestKernelLevelsSameLogits", "TestFamilyKernelLevelsSameLogits",
	"TestQuantizedGoldens", "TestKQuantModel",
	"TestGoldenStories260K", "TestGoldenTinyStories656K",
	"TestCacheTypesDeterministic", "TestCacheTypesClose", "TestBlockEqualsSteps",
}

// runEmulated runs the test binary bin of pkg under qemu-aarch64 -cpu
// cpu (for tensor first its level report, which must name features), the
// tests named in run (all when empty), and returns what went wrong, or "".
func runEmulated(qemu, cpu, features, bin, pkg string, run []string, root string, env []string, logf func(string, ...any)) string {
	if pkg == "tensor" {
		report := exec.Command(qemu, "-cpu", cpu, bin, "-test.run=^TestReportLevel$", "-test.v")
		report.Env = env
		out, err := report.CombinedOutput()
		want := "kernels: neon; available: portable, neon; cpu: " + features
		if err != nil || !strings.Contains(string(out), want) {
			return fmt.Sprintf("arm64 (qemu -cpu %s) does not run the kernels expected (%q): %v\n%s", cpu, want, err, out)
		}
	}
	// -test.short: the slow emulation runs TestEvalAllocs's short
	// count; no kernel or golden test depends on it.
	args := []string{"-cpu", cpu, bin, "-test.count=1", "-test.short"}
	if len(run) > 0 {
		args = append(args, "-test.run=^("+strings.Join(run, "|")+")$", "-test.v")
	}
	cmd := exec.Command(qemu, args...)
	cmd.Env = env
	cmd.Dir = filepath.Join(root, pkg) // the tests read ../shared relative to it
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Sprintf("%s tests on arm64 (qemu -cpu %s): %v\n%s", pkg, cpu, err, out)
	}
	for _, name := range run {
		if !strings.Contains(string(out), "--- PASS: "+name+" ") && !strings.Contains(string(out), "--- SKIP: "+name+" ") {
			return fmt.Sprintf("%s on arm64 (qemu -cpu %s): %s did not run (renamed? update the list)\n%s", pkg, cpu, name, out)
		}
	}
	logf("%s on arm64 (qemu -cpu %s): %s", pkg, cpu, lastLine(out))
	return ""
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}
