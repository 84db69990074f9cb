package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHomeShapeCalculator(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 0)
	h, me := f.h, f.signIn("annotator")
	for _, tc := range []struct {
		path       string
		status     int
		bands      string
		rows       string
		wantInBody string
	}{
		{"/", 200, "9", "13", `value="0.8"`},
		{"/?threshold=0.9&hashes=128", 200, "5", "25", `value="0.9"`},
		{"/?threshold=0.5&hashes=256", 200, "", "", ""},
		{"/?threshold=abc", 422, "", "", "threshold: &#34;abc&#34; is not a number between 0 and 1"},
		{"/?hashes=0", 422, "", "", "hashes:"},
		{"/?w-fp=0&w-fn=0", 422, "", "", "cannot both be 0"},
	} {
		res, body := get(t, h, tc.path, me)
		if res.StatusCode != tc.status {
			t.Errorf("GET %s: status %d; want %d", tc.path, res.StatusCode, tc.status)
		}
		if tc.bands != "" && !strings.Contains(body, `data-testid="shape-bands">`+tc.bands+`<`) {
			t.Errorf("GET %s: bands %s not shown", tc.path, tc.bands)
		}
		if tc.rows != "" && !strings.Contains(body, `data-testid="shape-rows">`+tc.rows+`<`) {
			t.Errorf("GET %s: rows %s not shown", tc.path, tc.rows)
		}
		if !strings.Contains(body, tc.wantInBody) {
			t.Errorf("GET %s: body lacks %q", tc.path, tc.wantInBody)
		}
	}
}

func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 0)
	h, me := f.h, f.signIn("annotator")
	for _, path := range []string{"/", "/nope", "/static/app.css", "/login"} {
		res, _ := get(t, h, path, me)
		csp := res.Header.Get("Content-Security-Policy")
		for _, want := range []string{"object-src 'none'", "base-uri 'none'", "frame-ancestors 'none'", "script-src 'self' 'nonce-"} {
			if !strings.Contains(csp, want) {
				t.Errorf("GET %s: CSP %q lacks %q", path, csp, want)
			}
		}
		if res.Header.Get("X-Content-Type-Options") != "nosniff" || res.Header.Get("Referrer-Policy") == "" {
			t.Errorf("GET %s: missing nosniff or Referrer-Policy", path)
		}
	}
	// An SVG, a chart or a static file, needs nothing from anywhere (issue 8 item 8): it
	// renders under default-src 'none' when opened on its own.
	for _, path := range []string{"/shape.svg?bands=2&rows=3", "/static/favicon.svg"} {
		res, _ := get(t, h, path, me)
		if csp := res.Header.Get("Content-Security-Policy"); !strings.HasPrefix(csp, "default-src 'none'") || strings.Contains(csp, "'self'") {
			t.Errorf("GET %s: CSP %q; want default-src 'none'", path, csp)
		}
		if res.Header.Get("Content-Type") != "image/svg+xml" || res.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: Content-Type %q, nosniff %q", path, res.Header.Get("Content-Type"), res.Header.Get("X-Content-Type-Options"))
		}
	}
	// The nonce in the header is the one on the page's script tag, and changes per request.
	res1, body1 := get(t, h, "/", me)
	res2, _ := get(t, h, "/", me)
	n1 := strings.TrimSuffix(strings.SplitN(strings.SplitN(res1.Header.Get("Content-Security-Policy"), "'nonce-", 2)[1], "'", 2)[0], "")
	if !strings.Contains(body1, `nonce="`+n1+`"`) {
		t.Errorf("page script does not carry the header's nonce %q", n1)
	}
	if res1.Header.Get("Content-Security-Policy") == res2.Header.Get("Content-Security-Policy") {
		t.Error("nonce repeated across requests")
	}
}

func TestShapeDownloads(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 0)
	h, me := f.h, f.signIn("annotator")
	res, body := get(t, h, "/shape.svg?bands=20&rows=5&threshold=0.5&download=1", me)
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "image/svg+xml" || !strings.HasPrefix(strings.TrimSpace(body), "<?xml") {
		t.Errorf("SVG: status %d, type %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	if !strings.Contains(res.Header.Get("Content-Disposition"), `s-curve-20x5.svg`) {
		t.Errorf("SVG download disposition %q", res.Header.Get("Content-Disposition"))
	}
	res, body = get(t, h, "/shape.csv?bands=20&rows=5", me)
	lines := strings.Split(strings.TrimSpace(body), "\n")
	if res.StatusCode != 200 || len(lines) != 102 || lines[0] != "similarity,p_candidate,bands,rows" {
		t.Fatalf("CSV: status %d, %d lines, header %q", res.StatusCode, len(lines), lines[0])
	}
	// s = 0.50 on 20x5 is the textbook 0.470.
	if lines[51] != "0.50,0.470051,20,5" {
		t.Errorf("CSV row for s=0.5 is %q", lines[51])
	}
	if res, _ := get(t, h, "/shape.svg?bands=0&rows=5", me); res.StatusCode != 422 {
		t.Errorf("bands=0: status %d; want 422", res.StatusCode)
	}
}

func TestNotFoundAndMethods(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 0)
	h := f.h
	res, body := get(t, h, "/no/such/page")
	if res.StatusCode != 404 || !strings.Contains(body, `data-testid="error-status">404<`) {
		t.Errorf("404 page: status %d", res.StatusCode)
	}
	req := httptest.NewRequest(http.MethodPost, "/", nil)
	req.AddCookie(f.signIn("annotator"))
	rec := serve(h, req)
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /: status %d; want 405", rec.Code)
	}
}
