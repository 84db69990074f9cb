package handoff

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// SettingsFormat is the format line of settings.json.
const SettingsFormat = "dedupstudio-settings/1"

// SettingsError is a settings.json that cannot be used, naming the file and the field at
// fault ("" when the file as a whole is).
type SettingsError struct {
	File  string
	Field string
	Msg   string
}

func (e *SettingsError) Error() string {
	if e.Field == "" {
		return e.File + ": " + e.Msg
	}
	return e.File + ": field " + e.Field + ": " + e.Msg
}

// settingsIn is settings.json as read: pointers tell a missing field from a zero one.
type settingsIn struct {
	Format         *string         `json:"format"`
	Source         *DescSource     `json:"source"`
	Spec           *string         `json:"spec"`
	SpecID         *string         `json:"spec_id"`
	Representation *DescRep        `json:"representation"`
	Bands          *int            `json:"bands"`
	Rows           *int            `json:"rows"`
	Threshold      *float64        `json:"threshold"`
	SCurveMidpoint *float64        `json:"s_curve_threshold"`
	Verification   *string         `json:"verification"`
	Policy         *string         `json:"cluster_policy"`
	KeeperRule     *string         `json:"keeper_rule"`
	Budget         *int            `json:"budget"`
	CodeVersion    *string         `json:"code_version"`
	MilvusFunction json.RawMessage `json:"milvus_function"`
	MilvusNote     *string         `json:"milvus_function_unavailable"`
}

// maxSettingsBytes bounds a settings file: the real ones are about 1 KB.
const maxSettingsBytes = 1 << 20

// ParseSettings reads settings.json, as `export -format json` and the settings.json
// downloads of a manifest or a sweep result write it, back into the parameters it
// describes. It is strict: an unknown field, a missing one, a value of the wrong type,
// a spec_id or representation that disagrees with the spec, or parameters that
// review.Params.Validate refuses are a *SettingsError naming file and field.
func ParseSettings(r io.Reader, file string) (review.Params, Description, error) {
	fail := func(field, format string, args ...any) (review.Params, Description, error) {
		return review.Params{}, Description{}, &SettingsError{File: file, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	b, err := io.ReadAll(io.LimitReader(r, maxSettingsBytes+1))
	if err != nil {
		return review.Params{}, Description{}, fmt.Errorf("%s: %w", file, err)
	}
	if len(b) > maxSettingsBytes {
		return fail("", "larger than %d bytes: not a settings.json", maxSettingsBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var in settingsIn
	if err := dec.Decode(&in); err != nil {
		var te *json.UnmarshalTypeError
		var se *json.SyntaxError
		switch {
		case errors.As(err, &te):
			return fail(te.Field, "want %s, got a JSON %s", te.Type, te.Value)
		case errors.As(err, &se):
			return fail("", "not JSON: %v (at byte %d)", se, se.Offset)
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			// encoding/json has no type for this one; its text is documented.
			return fail(strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`), "unknown field (a settings.json has format, source, spec, spec_id, representation, bands, rows, threshold, s_curve_threshold, verification, cluster_policy, keeper_rule, budget, code_version and the milvus_function fields)")
		}
		return fail("", "not a settings object: %v", err)
	}
	if dec.More() {
		return fail("", "more than one JSON value")
	}
	required := []struct {
		name    string
		missing bool
	}{{"format", in.Format == nil}, {"spec", in.Spec == nil}, {"bands", in.Bands == nil}, {"rows", in.Rows == nil},
		{"threshold", in.Threshold == nil}, {"verification", in.Verification == nil}, {"cluster_policy", in.Policy == nil},
		{"keeper_rule", in.KeeperRule == nil}}
	for _, f := range required {
		if f.missing {
			return fail(f.name, "missing")
		}
	}
	if *in.Format != SettingsFormat {
		return fail("format", "%q is not %q", *in.Format, SettingsFormat)
	}
	spec, err := lsh.ParseSpec(*in.Spec)
	if err != nil {
		var se *lsh.SpecError
		if errors.As(err, &se) {
			return fail("spec", "%s: %s", se.Field, se.Msg)
		}
		return fail("spec", "%v", err)
	}
	if in.SpecID != nil && *in.SpecID != spec.ID() {
		return fail("spec_id", "%q is not the id of the spec (%s): was the spec edited by hand?", *in.SpecID, spec.ID())
	}
	if rep := in.Representation; rep != nil {
		want := DescRep{Scheme: string(spec.Scheme), Norm: spec.Norm.String(), Level: string(spec.Level), Size: spec.Size,
			K: spec.Hashes, Hash: string(spec.Hash), Seed: spec.Seed}
		if *rep != want {
			return fail("representation", "%+v disagrees with the spec %q", *rep, *in.Spec)
		}
	}
	ver, err := review.ParseVerification(*in.Verification)
	if err != nil {
		return fail("verification", "unknown verification %q (want estimate or exact)", *in.Verification)
	}
	pol, err := cluster.ParsePolicy(*in.Policy)
	if err != nil {
		return fail("cluster_policy", "%v", msgOf(err))
	}
	rule, err := cluster.ParseRule(*in.KeeperRule)
	if err != nil {
		return fail("keeper_rule", "%v", msgOf(err))
	}
	p := review.Params{Spec: spec, Shape: lsh.Shape{Bands: *in.Bands, Rows: *in.Rows}, Threshold: *in.Threshold,
		Verification: ver, Policy: pol, Rule: rule}
	if in.Budget != nil {
		p.Budget = *in.Budget
	}
	if in.CodeVersion != nil {
		p.CodeVersion = *in.CodeVersion
	}
	if err := p.Validate(); err != nil {
		var ie *review.InputError
		if errors.As(err, &ie) {
			field := map[string]string{"bands × rows": "bands"}[ie.Field]
			if field == "" {
				field = ie.Field
			}
			return fail(field, "%s", ie.Msg)
		}
		return fail("", "%v", err)
	}
	d := describe(Settings{Params: p})
	if in.Source != nil {
		d.Source = *in.Source
	}
	return p, d, nil
}

// msgOf is a cluster.InputError's message without its field (the caller names the field).
func msgOf(err error) string {
	var ie *cluster.InputError
	if errors.As(err, &ie) {
		return ie.Msg
	}
	return err.Error()
}
