package corpus

import (
	"encoding/json"
	"testing"
)

// AppendJSONString writes what json.Marshal writes, for plain ids and for every kind of
// byte it hands to json.Marshal: controls, quotes, HTML characters, non-ASCII, invalid
// UTF-8.
func TestAppendJSONString(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "doc-12345", "a b/c:d", "tab\there", `q"uote`, `back\slash`, "<a>&amp;", "héllo", "\x7f", "\xff\xfe", "line\n", "\u2028"} {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendJSONString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Errorf("AppendJSONString(%q) = %s; want %s", s, got[1:], want)
		}
	}
}

func FuzzAppendJSONString(f *testing.F) {
	f.Add("doc-1")
	f.Add("<\x00é\xff")
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := AppendJSONString(nil, s); string(got) != string(want) {
			t.Errorf("AppendJSONString(%q) = %s; want %s", s, got, want)
		}
	})
}
