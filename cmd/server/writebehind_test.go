//go:build linux

package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// A file written through writeBehind holds what was written, in order, and the
// write-back of each full writeBehindBytes was started as it was written.
func TestWriteBehind(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := newWriteBehind(f).(*writeBehind)
	rng := rand.New(rand.NewPCG(3, 4))
	var want bytes.Buffer
	for want.Len() < 2*writeBehindBytes+12345 {
		p := make([]byte, rng.IntN(700<<10))
		for i := range p {
			p[i] = byte(rng.Uint32())
		}
		if n, err := w.Write(p); n != len(p) || err != nil {
			t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(p))
		}
		want.Write(p)
	}
	if w.written != int64(want.Len()) || w.begun < 2*writeBehindBytes || w.begun > w.written || w.written-w.begun >= writeBehindBytes {
		t.Errorf("after %d bytes: write-back begun up to %d; want the whole %d-byte spans written, with less than one left",
			want.Len(), w.begun, writeBehindBytes)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("the file holds %d bytes, not the %d written", len(got), want.Len())
	}
}
