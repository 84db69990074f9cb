// Command minhashpeer is the peer that Dedup Studio's signature speed is measured
// against: github.com/dgryski/go-minhash, the MinHash library most Go programs use, fed
// as its own tests feed it (spooky and metro hashes, MinWise of k minimums), inside a
// program that does what `server signatures` does: read {"id":..,"text":..} JSONL,
// lowercase, split into words, push every word 5-shingle, and write one JSON line of k
// minimums per document, in input order, on all cores.
//
// It lives in a module of its own so that the main module does not carry the peer; its
// tests compare the two on the same file (see peer_test.go and the README's speed
// section):
//
//	go run . -in /tmp/corpus100.jsonl -out /tmp/peer.jsonl -k 256
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/dgryski/go-metro"
	minhash "github.com/dgryski/go-minhash"
	"github.com/dgryski/go-spooky"
)

func main() {
	in := flag.String("in", "", "JSONL input, one {\"id\":..,\"text\":..} a line")
	out := flag.String("out", "", "output file (JSONL signatures)")
	k := flag.Int("k", 256, "minimums per signature")
	size := flag.Int("size", 5, "words per shingle")
	workers := flag.Int("workers", runtime.GOMAXPROCS(0), "goroutines that sign")
	flag.Parse()
	if err := run(*in, *out, *k, *size, *workers); err != nil {
		fmt.Fprintln(os.Stderr, "minhashpeer:", err)
		os.Exit(1)
	}
}

func run(in, out string, k, size, workers int) error {
	if in == "" || out == "" {
		return errors.New("-in and -out are required")
	}
	r, err := os.Open(in)
	if err != nil {
		return err
	}
	defer r.Close()
	w, err := os.Create(out)
	if err != nil {
		return err
	}
	if err := Sign(r, w, k, size, workers); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// hash1 and hash2 are the two hashes go-minhash's MinWise combines (h1 + i*h2 for the
// i-th minimum), the pair its own tests use.
func hash1(b []byte) uint64 { return spooky.Hash64(b) }
func hash2(b []byte) uint64 { return metro.Hash64(b, 0) }

// batchBytes is how much JSONL one worker takes at a time.
const batchBytes = 1 << 20

type batch struct {
	seq   int
	lines [][]byte
	out   []byte
	err   error
}

// Sign writes the signature of every document of r to w, one JSON line each in input
// order, signing batches of lines on workers goroutines.
func Sign(r io.Reader, w io.Writer, k, size, workers int) error {
	todo := make(chan *batch, workers)
	done := make(chan *batch, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for b := range todo {
				b.out, b.err = signBatch(b.lines, k, size)
				done <- b
			}
		})
	}
	readErr := make(chan error, 1)
	go func() {
		defer close(todo)
		br := bufio.NewReaderSize(r, 1<<20)
		seq, n := 0, 0
		cur := &batch{}
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				cur.lines = append(cur.lines, line)
				n += len(line)
			}
			if n >= batchBytes || err != nil && len(cur.lines) > 0 {
				cur.seq = seq
				todo <- cur
				seq++
				cur, n = &batch{}, 0
			}
			if err == io.EOF {
				readErr <- nil
				return
			}
			if err != nil {
				readErr <- err
				return
			}
		}
	}()
	go func() { wg.Wait(); close(done) }()

	bw := bufio.NewWriterSize(w, 1<<20)
	pending := map[int]*batch{}
	next := 0
	var firstErr error
	for b := range done {
		pending[b.seq] = b
		for p, ok := pending[next]; ok; p, ok = pending[next] {
			delete(pending, next)
			next++
			if firstErr == nil {
				firstErr = p.err
			}
			if firstErr == nil {
				if _, err := bw.Write(p.out); err != nil {
					firstErr = err
				}
			}
		}
	}
	if err := <-readErr; err != nil && firstErr == nil {
		firstErr = err
	}
	if firstErr != nil {
		return firstErr
	}
	return bw.Flush()
}

// doc is what each JSONL line is decoded into.
type doc struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// signBatch signs each line: the text lowercased and split into words, every run of
// size words joined by a space pushed into a MinWise of k minimums (a document shorter
// than size words is one shingle), the minimums written as JSON.
func signBatch(lines [][]byte, k, size int) ([]byte, error) {
	var out []byte
	var shingle []byte
	for _, line := range lines {
		var d doc
		if err := json.Unmarshal(line, &d); err != nil {
			return nil, fmt.Errorf("line %q: %w", truncate(line), err)
		}
		words := strings.Fields(strings.ToLower(d.Text))
		m := minhash.NewMinWise(hash1, hash2, k)
		for i := 0; i == 0 || i+size <= len(words); i++ {
			shingle = shingle[:0]
			for j := i; j < min(i+size, len(words)); j++ {
				if j > i {
					shingle = append(shingle, ' ')
				}
				shingle = append(shingle, words[j]...)
			}
			m.Push(shingle)
		}
		out = append(out, `{"id":`...)
		out = strconv.AppendQuote(out, d.ID)
		out = append(out, `,"signature":[`...)
		for i, v := range m.Signature() {
			if i > 0 {
				out = append(out, ',')
			}
			out = strconv.AppendUint(out, v, 10)
		}
		out = append(out, "]}\n"...)
	}
	return out, nil
}

func truncate(b []byte) []byte {
	if len(b) > 60 {
		return b[:60]
	}
	return b
}
