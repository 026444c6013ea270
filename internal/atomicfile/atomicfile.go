// Package atomicfile writes files so that readers (and a crash, a full disk
// or Ctrl-C) never see a half-written file under the final name: the data
// goes to a temporary file in the same directory, is synced, and is renamed
// over the destination only when complete.
package atomicfile

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
)

// Write creates or replaces path with what write produces. The file is
// created with mode 0666 before the umask (0644 typically), like os.Create.
// On any error the destination is untouched and the temporary file removed.
func Write(path string, write func(io.Writer) error) error {
	return WriteMode(path, 0o666, write)
}

// WriteMode is Write with the file created with perm (before the umask)
// instead of 0666: 0600 for a private key, which then is never readable by
// others, not even halfway, and replaces a file that was.
func WriteMode(path string, perm os.FileMode, write func(io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	var f *os.File
	for range 100 {
		tmp := filepath.Join(dir, fmt.Sprintf(".%s.tmp-%d-%08x", base, os.Getpid(), rand.Uint32()))
		f, err = os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if !os.IsExist(err) {
			break
		}
	}
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	if err = write(bw); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = bw.Flush(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return err
	}
	return nil
}
