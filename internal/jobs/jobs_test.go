package jobs

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestJobLifecycle(t *testing.T) {
	t.Parallel()
	r := NewRegistry()
	ctx := context.Background()
	release := make(chan struct{})
	id := r.Start("import", "x", 7, func(ctx context.Context, report Reporter) (any, error) {
		report(42)
		<-release
		return "ok", nil
	})
	for {
		if s, _ := r.Get(id); s.Progress == 42 {
			if s.State != Running || s.Owner != 7 {
				t.Errorf("running job = %+v", s)
			}
			break
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	s, err := r.Wait(ctx, id)
	if err != nil || s.State != Done || s.Result != "ok" {
		t.Errorf("finished job = %+v, %v", s, err)
	}
	failing := r.Start("import", "y", 0, func(ctx context.Context, report Reporter) (any, error) { return nil, errors.New("boom") })
	if s, _ := r.Wait(ctx, failing); s.State != Failed || s.Err != "boom" {
		t.Errorf("failed job = %+v", s)
	}
	slow := r.Start("import", "z", 0, func(ctx context.Context, report Reporter) (any, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	r.Cancel(slow)
	if s, _ := r.Wait(ctx, slow); s.State != Cancelled {
		t.Errorf("cancelled job = %+v", s)
	}
	if _, ok := r.Get("nope"); ok {
		t.Error("unknown job found")
	}
}
