// Command transfermem measures the peak memory (VmHWM, the resident set's
// high-water mark) of Export, Copy and Import (package transfer) on file
// stores, to check the bound docs/limits.md states: transfers hold whole
// files, never more than the read limit each, so Export, Copy and Import
// (of a tar stream, spooled to disk as cloudmem import - does) are bounded
// by the read limit times the files in flight, whatever the input's size.
// Each source holds
// -files files of -size bytes (random, so nothing compresses) and one
// planted 300 MB object, which every transfer must skip without reading.
// Each operation runs in a child process of its own, so each peak is its own.
//
//	cd bench && go run ./transfermem -files 8,32
//
// Everything is local (temporary directories); it stops by itself.
package main

import (
	"archive/tar"
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	_ "github.com/cloudmem/cloudmem/backends/all"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/storeurl"
	"github.com/cloudmem/cloudmem/transfer"
)

// plantedBytes is the size of the object over every limit that each source
// holds (a sparse file: it takes no disk space).
const plantedBytes = 300 << 20

func main() {
	child := flag.String("child", "", "(internal) run one operation and print its peak: baseline, export, copy or import")
	src := flag.String("src", "", "(internal) the source store's directory")
	work := flag.String("work", "", "(internal) a directory for the operation's output")
	counts := flag.String("files", "8,32", "the source sizes to measure, in files, comma-separated")
	size := flag.Int("size", 4<<20, "the size of each file, in bytes (at most the read limit, 5 MiB)")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("transfermem: ")
	if *child != "" {
		if err := runChild(*child, *src, *work); err != nil {
			log.Fatalf("%s: %v", *child, err)
		}
		fmt.Println(peakKiB())
		return
	}

	root, err := os.MkdirTemp("", "transfermem-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)
	fmt.Printf("| Operation | Files (of %.1f MiB) | Peak RSS | Over the baseline | Over the baseline, per MiB of files |\n", float64(*size)/(1<<20))
	fmt.Printf("| --- | --- | --- | --- | --- |\n")
	for _, c := range strings.Split(*counts, ",") {
		n, err := strconv.Atoi(c)
		if err != nil || n < 1 {
			log.Fatalf("-files: %q is not a count", c)
		}
		dir := filepath.Join(root, "src-"+c)
		if err := seed(dir, n, *size); err != nil {
			log.Fatal(err)
		}
		var base int
		for _, op := range []string{"baseline", "export", "copy", "import"} {
			kib, err := measure(op, dir, filepath.Join(root, op+"-"+c))
			if err != nil {
				log.Fatal(err)
			}
			if op == "baseline" {
				base = kib
			}
			data := float64(n) * float64(*size) / (1 << 20)
			over := float64(kib-base) / 1024
			fmt.Printf("| %s | %d | %.0f MiB | %.0f MiB | %.2f |\n", op, n, float64(kib)/1024, over, over/data)
		}
	}
}

// storeURL is the URL of the file store in dir, whose file size limit
// admits the files (the read limit stays 5 MiB).
func storeURL(dir string) string { return "file://" + dir + "?max_file_bytes=" + strconv.Itoa(5<<20) }

// seed writes n files of size random bytes into a new file store in dir,
// and the planted object.
func seed(dir string, n, size int) error {
	ctx := context.Background()
	s, err := storeurl.Open(ctx, storeURL(dir))
	if err != nil {
		return err
	}
	defer blob.Close(s)
	data := make([]byte, size)
	for i := range n {
		rand.Read(data)
		if _, err := s.Put(ctx, fmt.Sprintf("notes/f%03d.md", i), data, blob.Cond{}); err != nil {
			return err
		}
	}
	f, err := os.Create(filepath.Join(dir, "notes", "planted.md"))
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Truncate(plantedBytes); err != nil {
		return err
	}
	// The tar Import reads, made here so that its making is not measured:
	// the planted object as its first entry, then the export of the files.
	out, err := os.Create(dir + ".tar")
	if err != nil {
		return err
	}
	defer out.Close()
	tw := tar.NewWriter(out)
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "notes/planted.md", Mode: 0o600, Size: plantedBytes}); err != nil {
		return err
	}
	if _, err := io.CopyN(tw, zeros{}, plantedBytes); err != nil {
		return err
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err = transfer.Export(ctx, s, transfer.NewTarWriter(out))
	var problems *transfer.ProblemsError
	if errors.As(err, &problems) && len(problems.Problems) == 1 {
		err = nil // the planted object, skipped
	}
	return err
}

// zeros reads as endless zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// measure runs op in a child process and returns its peak RSS in KiB.
func measure(op, src, work string) (int, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(self, "-child", op, "-src", src, "-work", work)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("%s: %w", op, err)
	}
	return strconv.Atoi(strings.TrimSpace(string(out)))
}

// runChild runs one operation. Each must skip the planted object: one
// Problem of kind ErrTooLarge, and every other file moved.
func runChild(op, src, work string) error {
	ctx := context.Background()
	s, err := storeurl.Open(ctx, storeURL(src))
	if err != nil {
		return err
	}
	defer blob.Close(s)
	switch op {
	case "baseline": // the process with the store open and its files listed
		_, err = blob.ListAll(ctx, s, "")
		return err
	case "export":
		w, err := transfer.NewDirWriter(work)
		if err != nil {
			return err
		}
		defer w.Close()
		_, err = transfer.Export(ctx, s, w)
		return skippedOne(err)
	case "copy":
		dst, err := storeurl.Open(ctx, storeURL(work))
		if err != nil {
			return err
		}
		defer blob.Close(dst)
		_, err = transfer.Copy(ctx, s, dst, nil)
		return skippedOne(err)
	case "import":
		f, err := os.Open(src + ".tar")
		if err != nil {
			return err
		}
		defer f.Close()
		dst, err := storeurl.Open(ctx, storeURL(work))
		if err != nil {
			return err
		}
		defer blob.Close(dst)
		spool, err := os.MkdirTemp("", "transfermem-spool-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(spool)
		files, err := transfer.ReadTar(bufio.NewReader(f), memory.ReadLimit(dst), spool)
		if err != nil {
			return err
		}
		_, err = transfer.Import(ctx, dst, files, nil)
		return skippedOne(err)
	}
	return fmt.Errorf("unknown operation %q", op)
}

// skippedOne returns nil when err reports exactly the planted object as too
// large, and an error otherwise.
func skippedOne(err error) error {
	var problems *transfer.ProblemsError
	if !errors.As(err, &problems) || len(problems.Problems) != 1 ||
		!errors.Is(problems.Problems[0].Kind, transfer.ErrTooLarge) || problems.Problems[0].Key != "notes/planted.md" {
		return fmt.Errorf("want the planted object alone skipped as too large, got %v", err)
	}
	return nil
}

// peakKiB returns this process's VmHWM in KiB (Linux).
func peakKiB() int {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		log.Fatal(err)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			if err != nil {
				log.Fatal(err)
			}
			return n
		}
	}
	log.Fatal("no VmHWM in /proc/self/status")
	return 0
}
