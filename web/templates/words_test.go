package templates

import "testing"

// The run form writes the documents it runs over with the thousands separator the rest
// of the product uses (walk 8: "Over all 2136 documents").
func TestLiveTextThousands(t *testing.T) {
	for _, c := range []struct {
		f    RunForm
		want string
	}{
		{RunForm{Docs: 2136}, "Over all 2,136 documents"},
		{RunForm{Docs: 1}, "Over the 1 document"},
	} {
		if got := liveText(c.f); got != c.want {
			t.Errorf("liveText(%d documents) = %q; want %q", c.f.Docs, got, c.want)
		}
	}
}
