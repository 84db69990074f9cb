package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"unicode/utf8"
)

// encoding/json is lenient where the search API must not be: it replaces invalid UTF-8
// and lone surrogate escapes with U+FFFD (so the ids "u\xff1" and "u\xfe1" would become
// one id), matches keys case-insensitively ({"ID": …} fills id) and keeps the last of
// duplicate keys. checkSearchJSON reads the raw tokens of a search request before it is
// decoded and refuses each of these, naming the document and field.

// jsonRole is what a JSON value is in a search request.
type jsonRole int

const (
	roleOther jsonRole = iota
	roleTop            // the request object
	roleDocs           // its "documents" array
	roleDoc            // one document of it
)

type jsonFrame struct {
	role    jsonRole
	object  bool
	keys    map[string]bool
	key     string // the key whose value comes next (objects)
	wantKey bool
	index   int // the index of the next element (arrays)
}

// checkSearchJSON returns an *apiError for a request body with invalid UTF-8 or a lone
// surrogate in a string, a duplicate key, or a key that is not exactly one the request
// or its documents have. What is not JSON at all it leaves to the decoder to describe.
func checkSearchJSON(body []byte) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var stack []*jsonFrame
	for first := true; first || len(stack) > 0; first = false {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return nil // a syntax error: the decoder names it
		}
		end := dec.InputOffset()
		var top *jsonFrame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if s, ok := tok.(string); ok {
			q := bytes.IndexByte(body[start:end], '"')
			if q < 0 {
				return nil
			}
			raw := body[int(start)+q : end]
			if top != nil && top.object && top.wantKey {
				if err := checkKey(top, s, raw); err != nil {
					return err
				}
				if top.role == roleDoc {
					if err := checkDocKey(top, docIndex(stack), s); err != nil {
						return err
					}
				}
				top.keys[s] = true
				top.key, top.wantKey = s, false
				continue
			}
			if bad, what := badJSONString(raw); bad >= 0 {
				if top != nil && top.role == roleDoc {
					i := docIndex(stack)
					return docError(http.StatusUnprocessableEntity, i, top.key, "%s at byte %d", what, bad)
				}
				return &apiError{Status: http.StatusBadRequest, Message: fmt.Sprintf("the body is not a search request: %s in a string at byte %d of the body", what, int(start)+q)}
			}
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			f := &jsonFrame{object: tok == json.Delim('{'), wantKey: true, keys: map[string]bool{}}
			switch {
			case top == nil && f.object:
				f.role = roleTop
			case top != nil && top.role == roleTop && top.key == "documents" && !f.object:
				f.role = roleDocs
			case top != nil && top.role == roleDocs && f.object:
				f.role = roleDoc
			}
			stack = append(stack, f)
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return nil
			}
			top = stack[len(stack)-1]
		}
		// A value of top ended.
		if top == nil {
			return nil // a bare value: the decoder refuses it
		}
		if top.object {
			top.wantKey = true
		} else {
			top.index++
		}
	}
	return nil
}

// docIndex is the index of the document whose object is on top of the stack.
func docIndex(stack []*jsonFrame) int {
	return stack[len(stack)-2].index
}

// checkKey checks a key of an object of the request: valid UTF-8, given once, and, in
// the request and its documents, exactly a known field.
func checkKey(f *jsonFrame, key string, raw []byte) error {
	if bad, what := badJSONString(raw); bad >= 0 {
		return &apiError{Status: http.StatusBadRequest, Message: fmt.Sprintf("the body is not a search request: a key holds %s at byte %d", what, bad)}
	}
	if f.role != roleTop {
		return nil
	}
	if f.keys[key] {
		return &apiError{Status: http.StatusBadRequest, Field: key, Message: fmt.Sprintf("the body is not a search request: field %q is given twice", key)}
	}
	if key != "documents" && key != "insert" {
		return &apiError{Status: http.StatusBadRequest, Message: fmt.Sprintf(`the body is not a search request: unknown field %q (a request has "documents" and "insert", spelled so)`, key)}
	}
	return nil
}

// checkDocKey checks a key of documents[i]: given once, and exactly id or text.
func checkDocKey(f *jsonFrame, i int, key string) error {
	if f.keys[key] {
		return docError(http.StatusUnprocessableEntity, i, key, "given twice")
	}
	if key != "id" && key != "text" {
		return &apiError{Status: http.StatusUnprocessableEntity, Document: &i,
			Message: fmt.Sprintf(`documents[%d]: unknown field %q (a document has "id" and "text", spelled so)`, i, key)}
	}
	return nil
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
