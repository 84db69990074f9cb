package migrations

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"testing"
)

// shipped pins the content of every migration that has been released. A shipped
// migration is never edited: a schema change is a new numbered file (add its hash here
// when it ships).
var shipped = map[string]string{
	"0001_init.sql": "bf50de782e1407fe2eb4445e8c1f9134be701fcab840112acd7cb50594016fb7",
}

func TestShippedMigrationsUnchanged(t *testing.T) {
	for name, want := range shipped {
		b, err := fs.ReadFile(Files, name)
		if err != nil {
			t.Fatalf("shipped migration %s is missing: %v", name, err)
		}
		sum := sha256.Sum256(b)
		if got := hex.EncodeToString(sum[:]); got != want {
			t.Errorf("%s changed (sha256 %s, shipped %s): add a new migration instead", name, got, want)
		}
	}
}
