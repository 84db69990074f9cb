package web

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// encoding/json is lenient where the search API must not be: it replaces invalid UTF-8
// and lone surrogate escapes with U+FFFD (so the ids "u\xff1" and "u\xfe1" would become
// one id), matches keys case-insensitively ({"ID": …} fills id) and keeps the last of
// duplicate keys. The request is therefore read with go-json-experiment/json (the
// encoding/json/v2 of Go 1.25+, which needs GOEXPERIMENT=jsonv2 in Go 1.26), whose
// defaults refuse each of these, and unknown members too when asked; its errors carry
// the JSON Pointer of the value at fault, from which decodeSearch names the document and
// field.

// searchRequest is the body of a search.
type searchRequest struct {
	Documents []*searchDoc `json:"documents"` // nil: a JSON null in the list
	// Insert is kept raw: null, which a decoder takes for false, must be refused.
	Insert jsontext.Value `json:"insert"`
}

type searchDoc struct {
	ID   *string `json:"id"`
	Text *string `json:"text"`
}

// decodeSearch reads a search request's body: 400 for what is not JSON of a search
// request's shape (naming the request's field where one is at fault), 422 for a document
// that is not one (naming it and its field), as an *apiError.
func decodeSearch(body []byte) ([]searchDoc, bool, error) {
	var req searchRequest
	dec := jsontext.NewDecoder(bytes.NewReader(body))
	if err := json.UnmarshalDecode(dec, &req, json.RejectUnknownMembers(true)); err != nil {
		return nil, false, searchJSONError(err)
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil, false, &apiError{Status: http.StatusBadRequest, Message: "the body holds more than one JSON value"}
	}
	var insert bool
	switch string(req.Insert) {
	case "", "false":
	case "true":
		insert = true
	default:
		return nil, false, &apiError{Status: http.StatusBadRequest, Field: "insert", Message: "the body is not a search request: insert must be true or false"}
	}
	switch {
	case len(req.Documents) == 0:
		return nil, false, &apiError{Status: http.StatusUnprocessableEntity, Message: `documents: give at least one {"id": …, "text": …}`, Field: "documents"}
	case len(req.Documents) > maxSearchDocs:
		return nil, false, &apiError{Status: http.StatusUnprocessableEntity, Message: fmt.Sprintf("documents: %d documents; a request takes at most %d", len(req.Documents), maxSearchDocs), Field: "documents"}
	}
	docs := make([]searchDoc, len(req.Documents))
	for i, d := range req.Documents {
		if d == nil {
			return nil, false, notADocument(i)
		}
		docs[i] = *d
	}
	return docs, insert, nil
}

func notADocument(i int) *apiError {
	return &apiError{Status: http.StatusUnprocessableEntity, Document: &i, Message: fmt.Sprintf(`documents[%d]: not an object {"id": …, "text": …}`, i)}
}

// searchJSONError turns the decoder's error into the API's: where the JSON Pointer of
// the value at fault is in a document (/documents/N/...), a 422 naming the document and
// its field; elsewhere a 400 naming the request's field.
func searchJSONError(err error) *apiError {
	var (
		ptr    jsontext.Pointer
		offset int64
		what   string
	)
	if errors.Is(err, io.EOF) { // nothing but white space
		return &apiError{Status: http.StatusBadRequest, Message: "the body is not a search request: it is empty"}
	}
	syn, isSyntax := errors.AsType[*jsontext.SyntacticError](err)
	sem, isSemantic := errors.AsType[*json.SemanticError](err)
	switch {
	case isSyntax:
		ptr, offset = syn.JSONPointer, syn.ByteOffset
		switch {
		case errors.Is(syn.Err, jsontext.ErrDuplicateName):
			what = "given twice"
		case errors.Is(syn.Err, io.ErrUnexpectedEOF):
			return &apiError{Status: http.StatusBadRequest, Message: "the body is not a search request: the JSON ends early"}
		default:
			what = syn.Err.Error() // "invalid UTF-8", "invalid surrogate pair …", "invalid character …"
		}
	case isSemantic:
		ptr, offset = sem.JSONPointer, sem.ByteOffset
		if errors.Is(sem.Err, json.ErrUnknownName) {
			what = "unknown"
		} else {
			what = "must be " + jsonKindOf(sem.GoType.String()) + ", not " + jsonValueOf(sem.JSONKind)
		}
	default:
		return &apiError{Status: http.StatusBadRequest, Message: "the body is not a search request: " + err.Error()}
	}
	tokens := slices.Collect(ptr.Tokens())
	// A document, or a member of one: /documents/N[/field].
	if len(tokens) >= 2 && tokens[0] == "documents" {
		doc, err := strconv.Atoi(tokens[1])
		if err == nil {
			switch {
			case len(tokens) == 2 && what == "given twice":
				// The pointer names the object whose member is repeated only when the
				// name cannot be said: not the case for a document's members.
			case len(tokens) == 2 && isSemantic:
				return notADocument(doc)
			case len(tokens) == 3 && what == "unknown":
				return &apiError{Status: http.StatusUnprocessableEntity, Document: &doc,
					Message: fmt.Sprintf(`documents[%d]: unknown field %q (a document has "id" and "text", spelled so)`, doc, tokens[2])}
			case len(tokens) == 3 && (tokens[2] == "id" || tokens[2] == "text"):
				if isSyntax && what != "given twice" {
					what += fmt.Sprintf(" (at byte %d of the body)", offset)
				}
				return docError(http.StatusUnprocessableEntity, doc, tokens[2], "%s", what)
			}
		}
	}
	switch {
	case len(tokens) == 1 && what == "unknown":
		return &apiError{Status: http.StatusBadRequest, Message: fmt.Sprintf(`the body is not a search request: unknown field %q (a request has "documents" and "insert", spelled so)`, tokens[0])}
	case len(tokens) == 1 && what == "given twice":
		return &apiError{Status: http.StatusBadRequest, Field: tokens[0], Message: fmt.Sprintf("the body is not a search request: field %q is given twice", tokens[0])}
	case len(tokens) == 1 && tokens[0] == "insert":
		return &apiError{Status: http.StatusBadRequest, Field: "insert", Message: "the body is not a search request: insert must be true or false"}
	case len(tokens) == 0 && isSemantic:
		return &apiError{Status: http.StatusBadRequest, Message: "the body is not a search request: the body " + what}
	case len(tokens) > 0 && isSemantic:
		return &apiError{Status: http.StatusBadRequest, Message: fmt.Sprintf("the body is not a search request: %s %s", strings.Join(tokens, "."), what)}
	}
	return &apiError{Status: http.StatusBadRequest, Message: fmt.Sprintf("the body is not a search request: %s at byte %d", what, offset)}
}

// jsonKindOf says what a Go type of a search request is in JSON.
func jsonKindOf(goType string) string {
	switch goType {
	case "string", "*string":
		return "a string"
	case "[]*web.searchDoc":
		return "an array"
	case "web.searchRequest", "web.searchDoc":
		return "an object"
	}
	return goType
}

// jsonValueOf names a JSON value's kind.
func jsonValueOf(k jsontext.Kind) string {
	switch k {
	case 'n':
		return "null"
	case 't', 'f':
		return "true or false"
	case '"':
		return "a string"
	case '0':
		return "a number"
	case '{':
		return "an object"
	case '[':
		return "an array"
	}
	return "a JSON value"
}
