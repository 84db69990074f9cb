package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/review"
	"github.com/dedupstudio/dedupstudio/internal/sigio"
	"github.com/dedupstudio/dedupstudio/internal/words"
)

func signatures(args []string, stdout, stderr io.Writer) (err error) {
	fs := newFlagSet("signatures",
		"server signatures: read documents (JSONL, CSV/TSV or Parquet; .gz and .zst too) and write MinHash signatures,\n"+
			"on all cores. -format jsonl writes {\"id\":..,\"signature\":[uint32...]} lines; -format binary writes k*4\n"+
			"little-endian bytes per document (a Milvus BINARY_VECTOR of dim 32*k) and the ids, one a line, to OUT.ids.\n"+
			"A bad record stops the run, naming its file and line; with -skip-bad the bad records are listed and\n"+
			"skipped, and the exit status is non-zero if there were any. Under scheme=milvus an empty text is signed\n"+
			"as Milvus's MinHash function signs it (every value 0xFFFFFFFF); other schemes refuse it, as the\n"+
			"studio's imports do. "+lsh.KernelEnv+"=avx512|avx2|generic forces a permutation kernel (default: the\n"+
			"fastest of those this CPU runs, measured at start; -v shows the figures).",
		`go run ./cmd/server signatures -spec 'level=word size=5 k=128' -in docs.jsonl.gz -out sigs.jsonl`, stderr)
	specText := fs.String("spec", lsh.DefaultSpec().String(), "representation, e.g. 'level=word size=5 k=128' (omitted fields keep their defaults), or a Milvus MinHash\n"+
		"function's params, e.g. '{\"num_hashes\": 128, \"shingle_size\": 3, \"token_level\": \"word\"}' for signatures bit-identical to Milvus's")
	in := fs.String("in", "", "input file: .jsonl, .csv, .tsv or .parquet, optionally .gz or .zst (- for JSONL on standard input)")
	out := fs.String("out", "", "output file (- or empty for standard output)")
	format := fs.String("format", "jsonl", "output format: jsonl or binary")
	idField := fs.String("id-field", "id", "field (JSON key, CSV column, Parquet column) holding the document id")
	textField := fs.String("text-field", "text", "field holding the document text")
	maxBytes := fs.Int("max-doc-bytes", corpus.DefaultMaxDocBytes, "largest document text accepted, in bytes")
	skipBad := fs.Bool("skip-bad", false, "skip bad records (listed on standard error with file, line and reason) instead of stopping")
	quiet := fs.Bool("q", false, "print nothing but errors")
	verbose := fs.Bool("v", false, "also print what the permutation kernels measured at start (ns per shingle and permutation)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile to this file (go tool pprof FILE)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *in == "" {
		fs.Usage()
		return fmt.Errorf("-in is required")
	}
	spec, err := lsh.ParseSpec(*specText)
	if err != nil {
		return err
	}
	if err := lsh.UseKernel(os.Getenv(lsh.KernelEnv)); err != nil {
		return fmt.Errorf("%s: %w", lsh.KernelEnv, err)
	}
	if spec.Scheme != lsh.Fast {
		// Measured now, on a quiet core, not by the first signer while the reader keeps
		// the other core busy; the fast scheme never permutes and does not wait for it.
		lsh.Kernel()
	}
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, stop()) }()
	}
	// Milvus signs an empty text (no shingle: every value the maximum) where the studio's
	// imports refuse one; under scheme=milvus the file is signed as Milvus would.
	r, err := openDocs(*in, corpus.Options{IDField: *idField, TextField: *textField, MetaFields: []string{}, MaxBytes: *maxBytes,
		EmptyText: spec.Scheme == lsh.Milvus})
	if err != nil {
		return err
	}
	defer r.Close()

	opt := sigio.Options{Format: sigio.Format(*format), Every: 500 * time.Millisecond, SkipBad: *skipBad}
	dst, outs, err := createOutputs(*out, opt.Format, stdout)
	if err != nil {
		return err
	}
	defer outs.abort()
	if len(outs.files) > 1 {
		opt.IDs = outs.files[1]
	}
	var skipped []*corpus.RecordError
	opt.Skipped = func(e *corpus.RecordError) {
		if len(skipped) < maxListed {
			skipped = append(skipped, e)
		}
	}
	if !*quiet {
		opt.Progress = progressLine(stderr)
		fmt.Fprintf(stderr, "spec %s (%s)\n%s\n", spec, spec.ID(), kernelLine(spec, *verbose))
	}
	sum, err := sigio.Write(r, dst, spec, opt)
	printRejects(stderr, skipped, sum.Skipped)
	if err != nil {
		if opt.Progress != nil {
			fmt.Fprintln(stderr)
		}
		return err
	}
	if err := outs.commit(); err != nil {
		return err
	}
	if sum.Skipped > 0 {
		return fmt.Errorf("%s skipped; the other %s signed", review.Quantity(sum.Skipped, "bad record", "bad records"),
			review.Quantity(sum.Docs, "document was", "documents were"))
	}
	return nil
}

// createOutputs opens where the signatures go: out, or stdout for "", "-" and the names
// of standard output; with the binary format also OUT.ids for the ids, which needs a
// named file. Named files are written whole (createWhole): a run a bad record or a
// failure stops leaves no file that looks whole.
func createOutputs(out string, format sigio.Format, stdout io.Writer) (io.Writer, *outputs, error) {
	if out == "" || out == "-" || isStdout(out) {
		if format == sigio.Binary {
			return nil, &outputs{}, fmt.Errorf("-format binary needs -out FILE (the ids go to FILE.ids)")
		}
		return stdout, &outputs{}, nil
	}
	names := []string{out}
	if format == sigio.Binary {
		if _, direct, err := outTarget(out); err != nil {
			return nil, &outputs{}, err
		} else if direct {
			return nil, &outputs{}, fmt.Errorf("-format binary writes FILE and FILE.ids: name a file for -out, not %s", out)
		}
		names = append(names, out+".ids")
	}
	o, err := createWhole(names...)
	if err != nil {
		return nil, o, err
	}
	if o.names[0] == "" {
		return o.files[0], o, nil // a device or a pipe: nothing to write back
	}
	return newWriteBehind(o.files[0]), o, nil
}

// isStdout reports whether name is one of the names of standard output, which
// signatures writes to as it writes to "-": its own standard output, not the file
// reopened (createWhole would open it to append, as any name reached through /proc).
func isStdout(name string) bool {
	switch filepath.Clean(name) {
	case "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1":
		return true
	}
	return false
}

// outTarget says how createWhole writes name. A regular file, or a name that does not
// exist yet, is written whole at resolved: name with the symbolic links of its last part
// followed, a link to a missing file included, so that links stay links. A character
// device, a pipe or a socket (/dev/null, a FIFO), and anything reached through /proc (the
// /dev/fd names), is written as it is (direct): a file renamed over it would replace it,
// and, run as root, replace /dev/null itself. A directory or a block device is refused.
func outTarget(name string) (resolved string, direct bool, err error) {
	orig := name
	for range 40 {
		if strings.HasPrefix(filepath.Clean(name), "/proc/") {
			return orig, true, nil
		}
		st, err := os.Lstat(name)
		if errors.Is(err, fs.ErrNotExist) {
			return name, false, nil
		}
		if err != nil {
			return "", false, err
		}
		mode := st.Mode()
		switch {
		case mode&fs.ModeSymlink != 0:
			target, err := os.Readlink(name)
			if err != nil {
				return "", false, err
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(name), target)
			}
			name = target
		case mode.IsRegular():
			return name, false, nil
		case mode.IsDir():
			return "", false, fmt.Errorf("%s is a directory; name a file to write", orig)
		case mode&fs.ModeDevice != 0 && mode&fs.ModeCharDevice == 0:
			return "", false, fmt.Errorf("%s is a block device: the commands do not write over disks", orig)
		default:
			return name, true, nil
		}
	}
	return "", false, fmt.Errorf("%s: too many levels of symbolic links", orig)
}

// createWhole opens files to be written whole or not at all: each under a temporary
// name beside its own until commit gives them all their names; abort (deferred) removes
// what was not committed. The one way the commands write a file a failure must not leave
// half written (manifest export writes inside an os.Root with writeWhole). How each name
// is written, and what is refused, is outTarget's.
func createWhole(names ...string) (*outputs, error) {
	o := &outputs{}
	for _, name := range names {
		target, direct, err := outTarget(name)
		if err != nil {
			o.abort()
			return o, err
		}
		if direct {
			f, err := openDirect(target)
			if err != nil {
				o.abort()
				return o, err
			}
			o.files, o.names = append(o.files, f), append(o.names, "")
			continue
		}
		f, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".*.partial")
		if err != nil {
			o.abort()
			return o, err
		}
		o.files, o.names = append(o.files, f), append(o.names, target)
		if err := f.Chmod(0o644); err != nil { // as os.Create would leave it under a usual umask
			o.abort()
			return o, err
		}
	}
	return o, nil
}

// outputs are files written whole (createWhole), under temporary names until commit.
type outputs struct {
	files     []*os.File
	names     []string // each file's name once committed; "" for a device or pipe written as it is
	committed bool
}

// commit closes the files and gives them their names.
func (o *outputs) commit() error {
	for i, f := range o.files {
		if err := f.Close(); err != nil {
			return err
		}
		if o.names[i] == "" {
			continue
		}
		if err := os.Rename(f.Name(), o.names[i]); err != nil {
			return err
		}
	}
	o.committed = true
	return nil
}

// abort removes what was not committed.
func (o *outputs) abort() {
	if o.committed {
		return
	}
	for i, f := range o.files {
		f.Close()
		if o.names[i] != "" {
			os.Remove(f.Name())
		}
	}
}

// maxListed is how many skipped records signatures lists before counting the rest.
const maxListed = 100

func openDocs(in string, opts corpus.Options) (corpus.Reader, error) {
	if in == "-" {
		return corpus.NewReader(os.Stdin, "stdin", corpus.JSONL, opts)
	}
	return corpus.OpenFile(in, "", opts)
}

// progressLine prints one updating line of documents and speed.
func progressLine(stderr io.Writer) func(sigio.Progress) {
	return func(p sigio.Progress) {
		secs := max(p.Elapsed.Seconds(), 1e-9)
		end := "\r"
		if p.Done {
			end = "\n"
		}
		skipped := ""
		if p.Skipped > 0 {
			skipped = fmt.Sprintf(", %d skipped", p.Skipped)
		}
		fmt.Fprintf(stderr, "signatures: %s%s, %.1f MB, %.0f docs/s, %.1f MB/s%s",
			words.Count(p.Docs, "doc", "docs"), skipped, float64(p.Bytes)/1e6, float64(p.Docs)/secs, float64(p.Bytes)/1e6/secs, end)
	}
}

// startCPUProfile starts writing a CPU profile to path; stop ends it and closes the file.
func startCPUProfile(path string) (stop func() error, err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}

// kernelLine names the permutation kernel that signs spec's signatures and why; verbose
// adds what the calibration measured.
func kernelLine(spec lsh.Spec, verbose bool) string {
	if spec.Scheme == lsh.Fast {
		return "kernel: none (the fast scheme hashes each shingle once, with no permutations)"
	}
	line := fmt.Sprintf("kernel %s (%s)", lsh.Kernel(), lsh.KernelReason())
	if verbose {
		line += ": " + lsh.KernelCalibration()
	}
	return line
}
