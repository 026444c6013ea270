package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestWriteReplacesWhole(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.bin")
	if err := Write(p, func(w io.Writer) error { _, err := w.Write([]byte("first")); return err }); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("disk full")
	err := Write(p, func(w io.Writer) error {
		w.Write([]byte("second, half"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want the writer's", err)
	}
	b, _ := os.ReadFile(p)
	if string(b) != "first" {
		t.Fatalf("destination is %q after a failed write, want the old content", b)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("%d files left in the directory, want only the destination", len(ents))
	}
}

func TestWriteHonoursUmask(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	p := filepath.Join(t.TempDir(), "f")
	if err := Write(p, func(w io.Writer) error { return nil }); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v, want 0644 under umask 022", st.Mode().Perm())
	}
}

func TestWriteFullDisk(t *testing.T) {
	// /dev/full fails every write with ENOSPC; a file "on" it cannot be
	// created, so emulate with a writer that fails after some bytes.
	p := filepath.Join(t.TempDir(), "g")
	err := Write(p, func(w io.Writer) error {
		for i := 0; i < 1<<12; i++ {
			if _, err := w.Write(make([]byte, 1024)); err != nil {
				return err
			}
		}
		return syscall.ENOSPC
	})
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("error %v", err)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Fatalf("destination exists after a failed write: %v", err)
	}
}

// TestWriteModeReplacesWiderFile: WriteMode(0600) over a file that was 0644
// leaves it 0600 with the new contents.
func TestWriteModeReplacesWiderFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteMode(path, 0o600, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	b, _ := os.ReadFile(path)
	if err != nil || fi.Mode().Perm() != 0o600 || string(b) != "new" {
		t.Errorf("after WriteMode: mode %v, contents %q (%v); want 0600 and \"new\"", fi.Mode().Perm(), b, err)
	}
}
