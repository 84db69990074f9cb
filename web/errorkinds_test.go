package web

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/bulk"
	"github.com/dedupstudio/dedupstudio/internal/campaign"
	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/errkind"
	"github.com/dedupstudio/dedupstudio/internal/handoff"
	"github.com/dedupstudio/dedupstudio/internal/incremental"
	"github.com/dedupstudio/dedupstudio/internal/ingest"
	"github.com/dedupstudio/dedupstudio/internal/jobs"
	"github.com/dedupstudio/dedupstudio/internal/labels"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/results"
	"github.com/dedupstudio/dedupstudio/internal/review"
	"github.com/dedupstudio/dedupstudio/internal/searchindex"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
	"github.com/dedupstudio/dedupstudio/internal/sweeprun"
)

// errorDecls are the exported error types and sentinels of the packages under dir, read
// from their source: "pkg.Name" -> the kind its Kind method returns ("" when it has
// none, "?" when the method computes it), sentinels marked by their initialiser.
type errorDecls struct {
	types     map[string]string // pkg.Type -> errkind constant returned, "?" computed, "" no Kind method
	sentinels map[string]string // pkg.ErrX -> its initialiser, as written
}

func scanErrorDecls(t *testing.T, dir string) errorDecls {
	t.Helper()
	out := errorDecls{types: map[string]string{}, sentinels: map[string]string{}}
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		pkg := f.Name.Name
		if strings.HasSuffix(filepath.Dir(path), "/dbtest") || pkg == "main" {
			return nil // test fixtures and commands
		}
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.FuncDecl:
				if decl.Recv == nil || len(decl.Recv.List) != 1 {
					continue
				}
				recv := decl.Recv.List[0].Type
				if st, ok := recv.(*ast.StarExpr); ok {
					recv = st.X
				}
				id, ok := recv.(*ast.Ident)
				if !ok || !id.IsExported() {
					continue
				}
				name := pkg + "." + id.Name
				switch decl.Name.Name {
				case "Error":
					if _, seen := out.types[name]; !seen {
						out.types[name] = ""
					}
				case "Kind":
					k := "?"
					if body := decl.Body.List; len(body) == 1 {
						if ret, ok := body[0].(*ast.ReturnStmt); ok && len(ret.Results) == 1 {
							if sel, ok := ret.Results[0].(*ast.SelectorExpr); ok {
								if x, ok := sel.X.(*ast.Ident); ok && x.Name == "errkind" {
									k = sel.Sel.Name
								}
							}
						}
					}
					out.types[name] = k
				}
			case *ast.GenDecl:
				if decl.Tok != token.VAR {
					continue
				}
				for _, spec := range decl.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, n := range vs.Names {
						if !n.IsExported() || !strings.HasPrefix(n.Name, "Err") || i >= len(vs.Values) {
							continue
						}
						var b strings.Builder
						if call, ok := vs.Values[i].(*ast.CallExpr); ok {
							if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
								if x, ok := sel.X.(*ast.Ident); ok {
									fmt.Fprintf(&b, "%s.%s", x.Name, sel.Sel.Name)
									if len(call.Args) > 0 {
										if a, ok := call.Args[0].(*ast.SelectorExpr); ok {
											fmt.Fprintf(&b, "(%s", a.Sel.Name)
										}
									}
								}
							}
						} else if sel, ok := vs.Values[i].(*ast.SelectorExpr); ok {
							if x, ok := sel.X.(*ast.Ident); ok {
								fmt.Fprintf(&b, "= %s.%s", x.Name, sel.Sel.Name)
							}
						}
						out.sentinels[pkg+"."+n.Name] = b.String()
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Every exported error type of our packages says its kind, and no kind it says is
// answered with a 500: a new error type without a Kind method fails here, before it can
// fall through to "internal error" on a page or in the API (sweep.InputError and
// handoff.SettingsError did). Sentinels are made with errkind.New (or are another
// package's).
func TestErrorKinds(t *testing.T) {
	t.Parallel()
	decls := scanErrorDecls(t, "../internal")
	if len(decls.types) < 20 || len(decls.sentinels) < 20 {
		t.Fatalf("found %d error types and %d sentinels under ../internal; the scan is broken", len(decls.types), len(decls.sentinels))
	}
	names := make([]string, 0, len(decls.types))
	for n := range decls.types {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		switch k := decls.types[n]; k {
		case "":
			t.Errorf("%s is an error without a Kind method: add func (e *%s) Kind() errkind.Kind (internal/errkind) so pages and the API answer it by its kind", n, n[strings.Index(n, ".")+1:])
		case "?": // computed: checked on values below
		case "Internal":
			t.Errorf("%s.Kind() returns errkind.Internal: a typed error is one a caller can act on", n)
		default:
			if !strings.HasPrefix(k, strings.ToUpper(k[:1])) || statusOf[kindNamed(t, k)] == http.StatusInternalServerError {
				t.Errorf("%s.Kind() returns errkind.%s, which answers 500", n, k)
			}
		}
	}
	for n, init := range decls.sentinels {
		if !strings.HasPrefix(init, "errkind.New(") && !strings.HasPrefix(init, "= ") {
			t.Errorf("%s is made with %q: make it with errkind.New(kind, msg) so pages and the API answer it by its kind", n, init)
		}
		if init == "errkind.New(Internal" {
			t.Errorf("%s is of kind Internal: a sentinel is one a caller can act on", n)
		}
	}
}

func kindNamed(t *testing.T, name string) errkind.Kind {
	for _, k := range errkind.Kinds {
		if strings.EqualFold(strings.ReplaceAll(k.String(), "-", ""), name) {
			return k
		}
	}
	t.Fatalf("errkind.%s is not a kind", name)
	return errkind.Internal
}

// Each error of our packages, as a handler meets it (wrapped), answers with the status
// of its kind on a page and in the JSON API alike; an internal error answers 500 in
// both, its text in neither.
func TestErrorsMapOnceForPagesAndAPI(t *testing.T) {
	t.Parallel()
	var log syncBuffer
	s := &server{log: slog.New(slog.NewTextHandler(&log, nil))}
	secret := errors.New("open /srv/dedupstudio.db-uploads/x: no space left on device")
	for _, tc := range []struct {
		err    error
		status int
	}{
		{&lsh.SpecError{Field: "level", Msg: "unknown"}, 422},
		{&corpus.RecordError{Msg: "bad"}, 422},
		{&corpus.FormatError{File: "x", Msg: "bad"}, 422},
		{&corpus.LimitError{File: "x", Docs: 3}, 413},
		{&campaign.InvalidError{Err: errors.New("overlap: too many")}, 422},
		{&campaign.PartyError{Others: []string{"ann"}}, 403},
		{&auth.LockedError{}, 429},
		{&review.InputError{Field: "f", Msg: "bad"}, 422},
		{&review.RefusedError{Msg: "refused"}, 409},
		{&review.StaleError{}, 409},
		{&bulk.OutError{Dir: "out"}, 422},
		{&bulk.DuplicateIDError{ID: "a"}, 422},
		{&sweep.GridError{Axis: "shapes", Msg: "empty"}, 422},
		{&sweep.InputError{Field: "labels", Msg: "none"}, 422},
		{&ingest.Error{Report: ingest.Report{Rejected: 1}}, 422},
		{&ingest.Error{Err: &corpus.LimitError{File: "x", Docs: 3}}, 422},
		{&ingest.IdenticalError{}, 409},
		{&ingest.LabelError{Err: ingest.ErrNoLabels}, 422},
		{&results.InputError{Field: "f", Msg: "bad"}, 422},
		{&results.BadInputError{File: "r"}, 422},
		{&results.UnknownIDsError{File: "r"}, 422},
		{&sweeprun.VolumeError{}, 413},
		{&handoff.SettingsError{File: "settings.json", Msg: "bad"}, 422},
		{&cluster.InputError{Field: "f", Msg: "bad"}, 422},
		{&formError{"f", "bad"}, 422},
		{jobs.ErrNotFound, 404},
		{jobs.ErrClosed, 503},
		{review.ErrSelfApproval, 403},
		{labels.ErrReservedName, 422},
		{sweep.ErrNothingToRecommend, 404},
		{incremental.ErrDuplicateID, 422},
		{searchindex.ErrRevoked, 409},
		{ingest.ErrEmpty, 422},
		{ingest.ErrNoCampaign, 404},
		{ingest.ErrNoLabels, 422},
		{sweeprun.ErrRunning, 409},
		{sweeprun.ErrNotResumable, 409},
		{sweeprun.ErrNotRunning, 409},
		{sweeprun.ErrNoLabels, 422},
		{db.ErrNoDatabase, 404},
		{db.ErrNotFound, 404},
		{db.ErrConflict, 409},
		{db.ErrStale, 409},
		{db.ErrLastAdmin, 409},
		{db.ErrSampleUndecided, 409},
		{db.ErrReplayed, 409},
		{&ingest.Error{Err: secret}, 500},
		{secret, 500},
	} {
		t.Run(fmt.Sprintf("%T %v", tc.err, tc.err), func(t *testing.T) {
			err := fmt.Errorf("an operation: %w", tc.err)
			r := httptest.NewRequest(http.MethodGet, "/x", nil)
			status, msg := s.problem(r, err)
			if status != tc.status {
				t.Errorf("page: problem(%v) = %d; want %d", err, status, tc.status)
			}
			if status != http.StatusInternalServerError && msg == "" {
				t.Errorf("page: problem(%v) has no message", err)
			}
			rec := httptest.NewRecorder()
			s.failAPI(rec, httptest.NewRequest(http.MethodPost, "/api/v1/x", nil), err)
			if rec.Code != tc.status || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
				t.Errorf("API: failAPI(%v) = %d %s; want %d, JSON", err, rec.Code, rec.Header().Get("Content-Type"), tc.status)
			}
			if strings.Contains(msg+rec.Body.String(), "/srv/") {
				t.Errorf("an internal error's text reached the answer: %q %s", msg, rec.Body.String())
			}
		})
	}
}
