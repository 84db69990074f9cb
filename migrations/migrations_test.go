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
	"0001_init.sql":             "bf50de782e1407fe2eb4445e8c1f9134be701fcab840112acd7cb50594016fb7",
	"0002_invites.sql":          "fbd8fe9c420a97f6c591859fb5fae3e43d91d6d1e469af2c8687c97eed075a92",
	"0003_labeling.sql":         "1bdc07fd9e9f1ea6c55c41691ef63b33fb61a115681dcf9dbdb1e3bf4d1d8670",
	"0004_overview_indexes.sql": "0afb6372469f4dc6f6a7e81d700c06fc8a2676751f25ea8e597f0683105da2b5",
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
