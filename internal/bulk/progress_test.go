package bulk

import (
	"testing"
	"time"
)

func TestQuantity(t *testing.T) {
	t.Parallel()
	tests := []struct {
		x    float64
		unit string
		want string
	}{
		{512, "bytes", "512 B"},
		{3 << 10, "bytes", "3 KiB"},
		{12.34 * (1 << 20), "bytes", "12.3 MiB"},
		{2.5 * (1 << 30), "bytes", "2.50 GiB"},
		{9999, "docs", "9999 docs"},
		{45_600, "docs", "45.6k docs"},
		{1_234_567, "pairs", "1.23M pairs"},
	}
	for _, tt := range tests {
		if got := Quantity(tt.x, tt.unit); got != tt.want {
			t.Errorf("Quantity(%v, %q) = %q; want %q", tt.x, tt.unit, got, tt.want)
		}
	}
}

func TestProgressSpeed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		p        Progress
		elapsed  time.Duration
		wantRate float64
		wantLeft time.Duration
	}{
		{"too soon", Progress{Done: 100, Total: 400}, 400 * time.Millisecond, 0, 0},
		{"nothing done", Progress{Done: 0, Total: 400}, 2 * time.Second, 0, 0},
		{"a quarter in two seconds", Progress{Done: 100, Total: 400}, 2 * time.Second, 50, 6 * time.Second},
		{"no total", Progress{Done: 100}, 2 * time.Second, 50, 0},
		{"total reached", Progress{Done: 400, Total: 400}, 2 * time.Second, 200, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rate, left := tt.p.Speed(tt.elapsed)
			if rate != tt.wantRate || left != tt.wantLeft {
				t.Errorf("%+v.Speed(%v) = %v, %v; want %v, %v", tt.p, tt.elapsed, rate, left, tt.wantRate, tt.wantLeft)
			}
		})
	}
}
