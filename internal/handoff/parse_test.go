package handoff

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseSettingsReadsWhatExportWrites(t *testing.T) {
	t.Parallel()
	s := sample(t, "v1 scheme=classic norm=nfkc+lower+space level=word size=5 k=128 hash=xxhash seed=1")
	s.Params.Budget = 64
	s.Params.CodeVersion = "abc123"
	files, err := Files(s, JSON)
	if err != nil {
		t.Fatal(err)
	}
	p, d, err := ParseSettings(strings.NewReader(file(t, files, "settings.json")), "settings.json")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p, s.Params) {
		t.Errorf("ParseSettings = %+v; want %+v", p, s.Params)
	}
	if d.Source.Manifest != 3 || !d.Source.SignedOff {
		t.Errorf("source = %+v; want manifest 3, signed off", d.Source)
	}
}

func TestParseSettingsNamesTheField(t *testing.T) {
	t.Parallel()
	s := sample(t, "v1 scheme=classic norm=nfkc+lower+space level=word size=5 k=128 hash=xxhash seed=1")
	files, err := Files(s, JSON)
	if err != nil {
		t.Fatal(err)
	}
	good := file(t, files, "settings.json")
	tests := []struct {
		name, from, to, field string
	}{
		{"unknown field", `"bands":`, `"bandz": 3, "bands":`, "bandz"},
		{"missing field", `"threshold": 0.8,`, ``, "threshold"},
		{"wrong type", `"bands": 16`, `"bands": "16"`, "bands"},
		{"format", `dedupstudio-settings/1`, `dedupstudio-settings/9`, "format"},
		{"bad spec", `size=5 k=128`, `size=0 k=128`, "spec"},
		{"spec id", `"spec_id": "r`, `"spec_id": "rx`, "spec_id"},
		{"representation", `"size": 5`, `"size": 4`, "representation"},
		{"shape too big", `"rows": 8`, `"rows": 80`, "bands"},
		{"threshold", `"threshold": 0.8`, `"threshold": 1.8`, "threshold"},
		{"verification", `"verification": "exact"`, `"verification": "guess"`, "verification"},
		{"policy", `"cluster_policy": "keeper-star"`, `"cluster_policy": "all"`, "cluster_policy"},
		{"rule", `"keeper_rule": "longest"`, `"keeper_rule": "tallest"`, "keeper_rule"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(good, tc.from) {
				t.Fatalf("settings.json has no %q:\n%s", tc.from, good)
			}
			bad := strings.Replace(good, tc.from, tc.to, 1)
			_, _, err := ParseSettings(strings.NewReader(bad), "cfg.json")
			var se *SettingsError
			if !errors.As(err, &se) || se.Field != tc.field || se.File != "cfg.json" {
				t.Fatalf("ParseSettings = %v; want a SettingsError on field %s of cfg.json", err, tc.field)
			}
		})
	}
}

func FuzzParseSettings(f *testing.F) {
	f.Add(`{"format":"dedupstudio-settings/1","spec":"v1 scheme=classic norm=none level=word size=5 k=128 hash=xxhash seed=1","bands":16,"rows":8,"threshold":0.8,"verification":"exact","cluster_policy":"components","keeper_rule":"longest"}`)
	f.Fuzz(func(t *testing.T, s string) {
		p, _, err := ParseSettings(strings.NewReader(s), "f.json")
		if err == nil {
			if verr := p.Validate(); verr != nil {
				t.Fatalf("accepted params that do not validate: %v", verr)
			}
		}
	})
}
