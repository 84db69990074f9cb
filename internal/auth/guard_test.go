package auth

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var testLimits = LoginLimits{Pair: Limit{5, 15 * time.Minute}, Address: Limit{30, 15 * time.Minute}, Account: Limit{12, time.Hour}}

// fail makes n failed attempts on account from addr at now.
func fail(t *testing.T, g *Guard, account, addr string, n int, now time.Time) {
	t.Helper()
	for i := range n {
		a, err := g.Begin(account, addr, now)
		if err != nil {
			t.Fatalf("attempt %d on %s from %s: %v", i+1, account, addr, err)
		}
		a.Failed(now)
	}
}

func scopeOf(err error) Scope {
	var le *LockedError
	if errors.As(err, &le) {
		return le.Scope
	}
	return ""
}

func TestGuardLocksPerAddressFirst(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_000_000, 0)
	for _, tc := range []struct {
		name   string
		setup  func(g *Guard)
		addr   string
		want   Scope
		within time.Duration // the refusal's wait
	}{
		{"the attacker's address is locked out", func(g *Guard) { fail(t, g, "Ada", "198.51.100.1", 5, now) }, "198.51.100.1", ScopePair, 15 * time.Minute},
		{"the owner's address is not", func(g *Guard) { fail(t, g, "ada", "198.51.100.1", 5, now) }, "203.0.113.7", "", 0},
		{"the ceiling locks every address", func(g *Guard) {
			for i := range 3 {
				fail(t, g, "ada", fmt.Sprintf("198.51.100.%d", i), 4, now)
			}
		}, "203.0.113.7", ScopeAccount, time.Hour},
		{"one address cannot reach the ceiling alone", func(g *Guard) {
			for m := range 4 { // 5 an hour per 15 minutes: 20 in an hour
				fail(t, g, "ada", "198.51.100.1", 5, now.Add(time.Duration(m)*15*time.Minute-time.Hour))
			}
		}, "203.0.113.7", "", 0},
		{"an address trying many accounts", func(g *Guard) {
			for i := range 30 {
				fail(t, g, fmt.Sprintf("user%d", i), "198.51.100.1", 1, now)
			}
		}, "198.51.100.1", ScopeAddress, 15 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The ceiling of the "one address" case is the default (50): what it is set for.
			limits := testLimits
			if tc.name == "one address cannot reach the ceiling alone" {
				limits = DefaultLoginLimits
			}
			g := NewGuard(limits)
			tc.setup(g)
			a, err := g.Begin("ada", tc.addr, now)
			if got := scopeOf(err); got != tc.want {
				t.Fatalf("Begin(ada, %s) err = %v; want scope %q", tc.addr, err, tc.want)
			}
			if err == nil {
				a.Abandon()
				return
			}
			var le *LockedError
			errors.As(err, &le)
			if le.Wait <= 0 || le.Wait > tc.within || !le.Until.Equal(now.Add(le.Wait)) {
				t.Errorf("refusal %+v; want a wait in (0, %v] ending at now+wait", le, tc.within)
			}
		})
	}
}

// Parallel attempts are counted before any is checked: 200 at once on one account
// from one address get 5 through, the lockout's worth.
func TestGuardCountsBeforeChecking(t *testing.T) {
	t.Parallel()
	g := NewGuard(DefaultLoginLimits)
	now := time.Unix(1_000_000, 0)
	var through atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 200 {
		wg.Go(func() {
			<-start
			if a, err := g.Begin("ada", "198.51.100.1", now); err == nil {
				through.Add(1)
				time.Sleep(time.Millisecond) // the password check
				a.Failed(now)
			}
		})
	}
	close(start)
	wg.Wait()
	if n := through.Load(); n != 5 {
		t.Errorf("%d of 200 parallel attempts let through; want 5", n)
	}
}

func TestGuardSuccessAbandonUnlock(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_000_000, 0)
	g := NewGuard(testLimits)
	// A success forgets the pair's failures and does not count against the address.
	fail(t, g, "ada", "198.51.100.1", 4, now)
	a, _ := g.Begin("ada", "198.51.100.1", now)
	a.Succeeded()
	fail(t, g, "ada", "198.51.100.1", 4, now) // 4 more: allowed, the earlier ones are gone
	// An abandoned attempt (no password checked) counts nowhere.
	for range 10 {
		a, err := g.Begin("ada", "198.51.100.1", now)
		if err != nil {
			t.Fatalf("Begin after abandoned attempts: %v", err)
		}
		a.Abandon()
	}
	if lk, locked := g.Locked("ada", now); locked {
		t.Errorf("Locked = %+v; want none", lk)
	}
	// Locked out from two addresses, and the ceiling (12): an admin sees it and clears it.
	g = NewGuard(testLimits)
	fail(t, g, "ada", "198.51.100.1", 1, now)
	fail(t, g, "ada", "198.51.100.2", 5, now.Add(time.Minute))
	fail(t, g, "ada", "198.51.100.3", 5, now)
	fail(t, g, "ada", "198.51.100.4", 1, now)
	lk, locked := g.Locked("ADA", now.Add(time.Minute))
	if !locked || !lk.Account || lk.Addresses != 2 || !lk.Until.Equal(now.Add(time.Hour)) {
		t.Errorf("Locked = %+v, %v; want the account and 2 addresses until %v", lk, locked, now.Add(time.Hour))
	}
	g.Unlock("Ada")
	if lk, locked := g.Locked("ada", now.Add(time.Minute)); locked {
		t.Errorf("after Unlock: Locked = %+v", lk)
	}
	if _, err := g.Begin("ada", "198.51.100.2", now.Add(time.Minute)); err != nil {
		t.Errorf("after Unlock: %v", err)
	}
	// The lockout ends by itself when its failures leave the window.
	fail(t, g, "bob", "198.51.100.9", 5, now)
	if _, err := g.Begin("bob", "198.51.100.9", now.Add(15*time.Minute)); err != nil {
		t.Errorf("15 minutes later: %v", err)
	}
}

func TestHashGate(t *testing.T) {
	t.Parallel()
	g := NewHashGate(2)
	ctx := context.Background()
	r1, ok1 := g.Enter(ctx, time.Millisecond)
	r2, ok2 := g.Enter(ctx, time.Millisecond)
	if !ok1 || !ok2 {
		t.Fatal("the first two did not enter")
	}
	if _, ok := g.Enter(ctx, 20*time.Millisecond); ok {
		t.Error("a third entered a gate of 2")
	}
	go func() { time.Sleep(10 * time.Millisecond); r1() }()
	r3, ok := g.Enter(ctx, 5*time.Second)
	if !ok {
		t.Fatal("a waiter did not enter after a release")
	}
	r1() // a second release of the same slot changes nothing
	if _, ok := g.Enter(ctx, 20*time.Millisecond); ok {
		t.Error("a double release freed a slot")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, ok := g.Enter(cancelled, time.Second); ok {
		t.Error("entered with a cancelled context and no free slot")
	}
	r2()
	r3()
}
