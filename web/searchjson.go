package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"unicode/utf8"
)

// encoding/json is lenient where the search API must not be: it replaces invalid UTF-8
// and lone surrogate escapes with U+FFFD (so the ids "u\xff1" and "u\xfe1" would become
// one id), matches keys case-insensitively ({"ID": …} fills id) and keeps the last of
// duplicate keys. checkSearchJSON scans the raw bytes of a search request before they are
// decoded and refuses each of these, naming the document and field.

// jsonRole is what a JSON value is in a search request.
type jsonRole int

const (
	roleOther jsonRole = iota
	roleTop            // the request object
	roleDocs           // its "documents" array
	roleDoc            // one document of it
)

// errNotJSON stops the raw scan at what is not JSON (or nested past any search
// request): the decoder then says what is wrong.
var errNotJSON = errors.New("not JSON")

// maxScanDepth is deeper than any search request; a body nested deeper is refused by
// the decoder in any case.
const maxScanDepth = 16

// checkSearchJSON returns an *apiError for a request body with invalid UTF-8 or a lone
// surrogate in a string, a duplicate key, or a key that is not exactly one the request
// or its documents have. What is not JSON at all it leaves to the decoder to describe.
// It scans the raw bytes once, without decoding (a decoder's tokens cost twice as much
// as the decoding itself).
func checkSearchJSON(body []byte) error {
	sc := rawScan{b: body}
	sc.ws()
	err := sc.value(roleTop, 0, -1, "")
	if errors.Is(err, errNotJSON) {
		return nil
	}
	return err
}

type rawScan struct {
	b   []byte
	pos int
}

func (sc *rawScan) ws() {
	for sc.pos < len(sc.b) {
		switch sc.b[sc.pos] {
		case ' ', '\t', '\n', '\r':
			sc.pos++
		default:
			return
		}
	}
}

// str scans a string at sc.pos and returns its raw text, quotes included.
func (sc *rawScan) str() ([]byte, error) {
	if sc.pos >= len(sc.b) || sc.b[sc.pos] != '"' {
		return nil, errNotJSON
	}
	start := sc.pos
	for i := start + 1; i < len(sc.b); i++ {
		switch sc.b[i] {
		case '\\':
			i++
		case '"':
			sc.pos = i + 1
			return sc.b[start:sc.pos], nil
		}
	}
	return nil, errNotJSON
}

// value scans one value of role; in a document (doc >= 0) its field is key.
func (sc *rawScan) value(role jsonRole, depth, doc int, key string) error {
	if depth > maxScanDepth || sc.pos >= len(sc.b) {
		return errNotJSON
	}
	c := sc.b[sc.pos]
	if role == roleDoc && c != '{' {
		// The decoder would take null for an empty document and report its id missing.
		return &apiError{Status: http.StatusUnprocessableEntity, Document: &doc,
			Message: fmt.Sprintf(`documents[%d]: not an object {"id": …, "text": …}`, doc)}
	}
	if depth == 1 && key == "insert" {
		// The decoder would take null for false.
		if !bytes.HasPrefix(sc.b[sc.pos:], []byte("true")) && !bytes.HasPrefix(sc.b[sc.pos:], []byte("false")) {
			return &apiError{Status: http.StatusBadRequest, Field: "insert", Message: "the body is not a search request: insert must be true or false"}
		}
	}
	switch {
	case c == '"':
		start := sc.pos
		raw, err := sc.str()
		if err != nil {
			return err
		}
		if bad, what := badJSONString(raw); bad >= 0 {
			if doc >= 0 && key != "" {
				return docError(http.StatusUnprocessableEntity, doc, key, "%s at byte %d", what, bad)
			}
			return &apiError{Status: http.StatusBadRequest, Message: fmt.Sprintf("the body is not a search request: %s in a string at byte %d of the body", what, start)}
		}
		return nil
	case c == '{':
		return sc.object(role, depth, doc)
	case c == '[':
		if sc.open(']') {
			return nil
		}
		elem := roleOther
		if role == roleDocs {
			elem = roleDoc
		}
		for i := 0; ; i++ {
			sc.ws()
			d := -1
			if elem == roleDoc {
				d = i
			}
			if err := sc.value(elem, depth+1, d, ""); err != nil {
				return err
			}
			if end, err := sc.sep(']'); end || err != nil {
				return err
			}
		}
	default: // a number, true, false or null: the decoder checks them
		for sc.pos < len(sc.b) && bytes.IndexByte([]byte("0123456789+-.eEtruefalsn"), sc.b[sc.pos]) >= 0 {
			sc.pos++
		}
		return nil
	}
}

// object scans an object of role, checking its keys.
func (sc *rawScan) object(role jsonRole, depth, doc int) error {
	seen := map[string]bool{}
	if sc.open('}') {
		return nil
	}
	for {
		sc.ws()
		raw, err := sc.str()
		if err != nil {
			return err
		}
		key := string(raw[1 : len(raw)-1])
		if bytes.IndexByte(raw, '\\') >= 0 {
			if json.Unmarshal(raw, &key) != nil {
				return errNotJSON
			}
		}
		if bad, what := badJSONString(raw); bad >= 0 {
			return &apiError{Status: http.StatusBadRequest, Message: fmt.Sprintf("the body is not a search request: a key holds %s at byte %d", what, bad)}
		}
		switch role {
		case roleTop:
			if seen[key] {
				return &apiError{Status: http.StatusBadRequest, Field: key, Message: fmt.Sprintf("the body is not a search request: field %q is given twice", key)}
			}
			if key != "documents" && key != "insert" {
				return &apiError{Status: http.StatusBadRequest, Message: fmt.Sprintf(`the body is not a search request: unknown field %q (a request has "documents" and "insert", spelled so)`, key)}
			}
		case roleDoc:
			if seen[key] {
				return docError(http.StatusUnprocessableEntity, doc, key, "given twice")
			}
			if key != "id" && key != "text" {
				return &apiError{Status: http.StatusUnprocessableEntity, Document: &doc,
					Message: fmt.Sprintf(`documents[%d]: unknown field %q (a document has "id" and "text", spelled so)`, doc, key)}
			}
		}
		seen[key] = true
		sc.ws()
		if sc.pos >= len(sc.b) || sc.b[sc.pos] != ':' {
			return errNotJSON
		}
		sc.pos++
		sc.ws()
		next, d := roleOther, -1
		if role == roleTop && key == "documents" {
			next = roleDocs
		}
		if role == roleDoc {
			d = doc
		}
		if err := sc.value(next, depth+1, d, key); err != nil {
			return err
		}
		if end, err := sc.sep('}'); end || err != nil {
			return err
		}
	}
}

// open steps over the opening byte of an array or object and reports whether it is
// empty, its closing byte (consumed) next.
func (sc *rawScan) open(closing byte) (empty bool) {
	sc.pos++
	sc.ws()
	if sc.pos < len(sc.b) && sc.b[sc.pos] == closing {
		sc.pos++
		return true
	}
	return false
}

// sep reads what follows a member of an array or object: a comma (another member
// comes) or its closing byte (end, consumed); anything else is not JSON.
func (sc *rawScan) sep(closing byte) (end bool, err error) {
	sc.ws()
	if sc.pos >= len(sc.b) {
		return false, errNotJSON
	}
	switch sc.b[sc.pos] {
	case ',':
		sc.pos++
		return false, nil
	case closing:
		sc.pos++
		return true, nil
	}
	return false, errNotJSON
}

// badJSONString finds, in the raw text of a JSON string (quotes included), the first byte
// that is not valid UTF-8 or the first lone surrogate escape, both of which a decoder
// turns into U+FFFD. It returns their byte offset in the decoded string and what they
// are, or -1.
func badJSONString(raw []byte) (int, string) {
	if len(raw) < 2 {
		return -1, ""
	}
	s := raw[1 : len(raw)-1]
	if utf8.Valid(s) && !bytes.Contains(s, []byte(`\u`)) {
		return -1, "" // the common case, at memory speed
	}
	decoded := 0 // bytes of the decoded string before s[i]
	for i := 0; i < len(s); {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			if s[i+1] != 'u' || i+6 > len(s) {
				i, decoded = i+2, decoded+1
				continue
			}
			r, err := strconv.ParseUint(string(s[i+2:i+6]), 16, 32)
			if err != nil {
				return -1, "" // not JSON: the decoder says so
			}
			switch {
			case r >= 0xd800 && r < 0xdc00: // a high surrogate needs a low one next
				if i+12 <= len(s) && s[i+6] == '\\' && s[i+7] == 'u' {
					if lo, err := strconv.ParseUint(string(s[i+8:i+12]), 16, 32); err == nil && lo >= 0xdc00 && lo < 0xe000 {
						i, decoded = i+12, decoded+4
						continue
					}
				}
				return decoded, fmt.Sprintf(`a lone surrogate \u%04x`, r)
			case r >= 0xdc00 && r < 0xe000:
				return decoded, fmt.Sprintf(`a lone surrogate \u%04x`, r)
			}
			i, decoded = i+6, decoded+utf8.RuneLen(rune(r))
			continue
		}
		if c < utf8.RuneSelf {
			i, decoded = i+1, decoded+1
			continue
		}
		r, n := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && n <= 1 {
			return decoded, "invalid UTF-8"
		}
		i, decoded = i+n, decoded+n
	}
	return -1, ""
}
