package db

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Every foreign key column has an index that starts with it (for a key of several
// columns: starts with all of them). Without one, deleting or changing a parent row
// scans the whole child table, once per parent row: a failed import of 123k documents
// held the write lock for minutes. The test reads the schema as migrated, so a table
// added later by anyone is checked too.
func TestEveryForeignKeyIsIndexed(t *testing.T) {
	t.Parallel()
	d, ctx := openTest(t), t.Context()
	missing, err := unindexedForeignKeys(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range missing {
		t.Errorf("foreign key %s has no index starting with its columns: add one in a new migration", m)
	}
}

// unindexedForeignKeys lists, as table(columns) -> parent, each foreign key of the schema
// that no index (nor an INTEGER PRIMARY KEY, nor a WITHOUT ROWID primary key) begins
// with.
func unindexedForeignKeys(ctx context.Context, d *DB) ([]string, error) {
	tables, err := queryAll(ctx, d, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`,
		func(sc scanner) (string, error) {
			var s string
			return s, sc.Scan(&s)
		})
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, table := range tables {
		// Foreign keys: one row per column, grouped by id, in order of seq.
		type fk struct {
			parent string
			cols   []string
		}
		var fks []*fk
		byID := map[int]*fk{}
		rows, err := d.r.QueryContext(ctx, `SELECT id, seq, "table", "from" FROM pragma_foreign_key_list(?) ORDER BY id, seq`, table)
		if err != nil {
			return nil, fmt.Errorf("foreign keys of %s: %w", table, err)
		}
		for rows.Next() {
			var id, seq int
			var parent, from string
			if err := rows.Scan(&id, &seq, &parent, &from); err != nil {
				rows.Close()
				return nil, err
			}
			if byID[id] == nil {
				byID[id] = &fk{parent: parent}
				fks = append(fks, byID[id])
			}
			byID[id].cols = append(byID[id].cols, from)
		}
		rows.Close()
		if len(fks) == 0 {
			continue
		}
		// The column lists every index of the table begins with.
		var indexed [][]string
		idx, err := queryAll(ctx, d, `SELECT name FROM pragma_index_list(?)`, func(sc scanner) (string, error) {
			var s string
			return s, sc.Scan(&s)
		}, table)
		if err != nil {
			return nil, fmt.Errorf("indexes of %s: %w", table, err)
		}
		for _, name := range idx {
			cols, err := queryAll(ctx, d, `SELECT coalesce(name, '') FROM pragma_index_info(?) ORDER BY seqno`, func(sc scanner) (string, error) {
				var s string
				return s, sc.Scan(&s)
			}, name)
			if err != nil {
				return nil, fmt.Errorf("index %s: %w", name, err)
			}
			indexed = append(indexed, cols)
		}
		// A rowid alias (INTEGER PRIMARY KEY) is the table's own order.
		pk, err := queryAll(ctx, d, `SELECT name, type FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk`, func(sc scanner) (string, error) {
			var name, typ string
			err := sc.Scan(&name, &typ)
			return name + " " + strings.ToUpper(typ), err
		}, table)
		if err != nil {
			return nil, fmt.Errorf("primary key of %s: %w", table, err)
		}
		if len(pk) == 1 && strings.HasSuffix(pk[0], " INTEGER") {
			indexed = append(indexed, []string{strings.TrimSuffix(pk[0], " INTEGER")})
		}
		for _, k := range fks {
			covered := slices.ContainsFunc(indexed, func(cols []string) bool {
				return len(cols) >= len(k.cols) && slices.Equal(cols[:len(k.cols)], k.cols)
			})
			if !covered {
				missing = append(missing, fmt.Sprintf("%s(%s) -> %s", table, strings.Join(k.cols, ", "), k.parent))
			}
		}
	}
	return missing, nil
}
