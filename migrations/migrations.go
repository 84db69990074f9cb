// Package migrations holds Dedup Studio's schema as numbered SQL files, applied in order
// by internal/db. A shipped migration is never edited: change the schema with a new file.
package migrations

import "embed"

// Files are the NNNN_name.sql migrations.
//
//go:embed *.sql
var Files embed.FS
