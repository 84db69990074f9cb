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

var testLimits = LoginLimits{Pair: Limit{5, 15 * time.Minute}, Address: Limit{30, 15 * time.Minute}, Account: Limit{12, time.Hour}, Spacing: time.Minute}

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
		{"past the account's limit a fresh address is not refused", func(g *Guard) {
			for i := range 3 {
				fail(t, g, "ada", fmt.Sprintf("198.51.100.%d", i), 4, now)
			}
		}, "203.0.113.7", "", 0},
		{"past the account's limit a failing address is slowed", func(g *Guard) {
			for i := range 3 {
				fail(t, g, "ada", fmt.Sprintf("198.51.100.%d", i), 4, now)
			}
			fail(t, g, "bob", "203.0.113.9", 1, now)     // failing, on another account
			a, err := g.Begin("ada", "203.0.113.9", now) // takes the slowed turn
			if err != nil || !a.Slowed {
				t.Fatalf("the first slowed attempt: %+v, %v; want it let through as slowed", a, err)
			}
			a.Failed(now)
		}, "203.0.113.9", ScopeAccount, time.Minute},
		{"one address alone does not slow the account", func(g *Guard) {
			for m := range 4 { // 5 per 15 minutes: 15 within the hour, under the default 20
				fail(t, g, "ada", "198.51.100.1", 5, now.Add(time.Duration(m)*15*time.Minute-time.Hour))
			}
			fail(t, g, "bob", "203.0.113.7", 1, now) // a failing address
		}, "203.0.113.7", "", 0},
		{"an address trying many accounts", func(g *Guard) {
			for i := range 30 {
				fail(t, g, fmt.Sprintf("user%d", i), "198.51.100.1", 1, now)
			}
		}, "198.51.100.1", ScopeAddress, 15 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The account's limit of the "one address" case is the default: what it is set for.
			limits := testLimits
			if tc.name == "one address alone does not slow the account" {
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
	// Locked out from two addresses, and past the account's limit (12): an admin sees it
	// and clears it.
	g = NewGuard(testLimits)
	fail(t, g, "ada", "198.51.100.1", 1, now)
	fail(t, g, "ada", "198.51.100.2", 5, now.Add(time.Minute))
	fail(t, g, "ada", "198.51.100.3", 5, now)
	fail(t, g, "ada", "198.51.100.4", 1, now)
	lk, locked := g.Locked("ADA", now.Add(time.Minute))
	if !locked || !lk.Slowed || lk.Failures != 12 || lk.Addresses != 2 || !lk.Until.Equal(now.Add(time.Hour)) {
		t.Errorf("Locked = %+v, %v; want slowed (12 failures) and 2 addresses until %v", lk, locked, now.Add(time.Hour))
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
	r1, ok1 := g.Enter(ctx, time.Millisecond, Quiet)
	r2, ok2 := g.Enter(ctx, time.Millisecond, Quiet)
	if !ok1 || !ok2 {
		t.Fatal("the first two did not enter")
	}
	if _, ok := g.Enter(ctx, 20*time.Millisecond, Known); ok {
		t.Error("a third entered a gate of 2")
	}
	go func() { time.Sleep(10 * time.Millisecond); r1() }()
	r3, ok := g.Enter(ctx, 5*time.Second, Failing)
	if !ok {
		t.Fatal("a waiter did not enter after a release")
	}
	r1() // a second release of the same slot changes nothing
	if _, ok := g.Enter(ctx, 20*time.Millisecond, Quiet); ok {
		t.Error("a double release freed a slot")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, ok := g.Enter(cancelled, time.Second, Known); ok {
		t.Error("entered with a cancelled context and no free slot")
	}
	r2()
	r3()
}

// The report's attack: 50 wrong passwords from 10 addresses used to lock the account
// from every address for an hour. Now the owner, from an address with no failure on
// record, is never refused; the attackers' addresses are locked out of the account, and
// any failing address is slowed to the account's one turn a minute. Every lock is
// reported once, when it starts.
func TestGuardAttackFromManyAddressesLocksNobodyOut(t *testing.T) {
	t.Parallel()
	g := NewGuard(DefaultLoginLimits)
	now := time.Unix(1_000_000, 0)
	started := map[Scope]int{}
	checked, slowed := 0, 0
	for i := range 10 {
		addr := fmt.Sprintf("198.51.100.%d", i)
		for range 5 {
			a, err := g.Begin("root", addr, now)
			if scopeOf(err) == ScopeAccount {
				slowed++
				continue
			}
			if err != nil {
				t.Fatalf("attack from %s: %v", addr, err)
			}
			checked++
			for _, lk := range a.Failed(now).Started {
				started[lk.Scope]++
			}
		}
	}
	// 4 addresses lock themselves out (20 failures), then each new address gets one try
	// (it was not failing), and the account's one slowed turn goes to the first of them.
	if checked != 20+6+1 || slowed != 50-checked {
		t.Errorf("%d passwords checked, %d slowed; want 27 checked, the rest slowed", checked, slowed)
	}
	if started[ScopePair] != 4 || started[ScopeAccount] != 1 {
		t.Errorf("locks started %v; want 4 address locks and the account's slowing, each once", started)
	}
	// The owner from a fresh address: let through at once, ahead of the slowed turn.
	for i := range 3 {
		a, err := g.Begin("root", "192.0.2.44", now.Add(time.Duration(i)*time.Second))
		if err != nil || a.Slowed || a.Failing || a.Priority == Failing {
			t.Fatalf("the owner's sign-in %d from a fresh address: %+v, %v; want it let through, not slowed", i, a, err)
		}
		a.Succeeded()
	}
	// An attacker address is locked out; another that failed elsewhere is slowed.
	if _, err := g.Begin("root", "198.51.100.3", now); scopeOf(err) != ScopePair {
		t.Errorf("an attacking address: %v; want locked out of the account", err)
	}
	now = now.Add(time.Minute) // the turn the attack took has passed
	fail(t, g, "someone", "203.0.113.5", 1, now)
	a, err := g.Begin("root", "203.0.113.5", now)
	if err != nil || !a.Slowed {
		t.Fatalf("a failing address's first try on the account under attack: %+v, %v; want the slowed turn", a, err)
	}
	if f := a.Failed(now); f.Next == nil || f.Next.Scope != ScopeAccount || f.Next.Wait != time.Minute {
		t.Errorf("after the slowed turn failed: next %+v; want the account's next turn a minute on", f.Next)
	}
	if _, err := g.Begin("root", "203.0.113.5", now.Add(30*time.Second)); scopeOf(err) != ScopeAccount {
		t.Errorf("a second slowed try within the minute: %v; want slowed", err)
	}
	if a, err := g.Begin("root", "203.0.113.5", now.Add(61*time.Second)); err != nil || !a.Slowed {
		t.Errorf("a slowed try a minute later: %v; want its turn", err)
	}
}

// A slot that comes free goes to a sign-in from a known address first, then from a
// quiet one (the newest first), then to the others (the oldest first).
func TestHashGatePriorities(t *testing.T) {
	t.Parallel()
	g := NewHashGate(1)
	ctx := context.Background()
	hold, ok := g.Enter(ctx, time.Second, Failing)
	if !ok {
		t.Fatal("the first did not enter")
	}
	order := make(chan string, 6)
	var wg sync.WaitGroup
	enter := func(name string, p Priority) {
		wg.Go(func() {
			release, ok := g.Enter(ctx, 5*time.Second, p)
			if !ok {
				t.Errorf("%s did not enter", name)
				return
			}
			order <- name
			release()
		})
		time.Sleep(20 * time.Millisecond) // queued in this order
	}
	enter("flood 1", Failing)
	enter("flood 2", Failing)
	enter("quiet 1", Quiet)
	enter("quiet 2", Quiet)
	enter("known 1", Known)
	enter("known 2", Known)
	hold()
	wg.Wait()
	close(order)
	var got []string
	for name := range order {
		got = append(got, name)
	}
	if want := "[known 1 known 2 quiet 2 quiet 1 flood 1 flood 2]"; fmt.Sprint(got) != want {
		t.Errorf("served %v; want %s", got, want)
	}
	// A waiter that gives up leaves no slot behind it lost.
	hold, _ = g.Enter(ctx, time.Second, Quiet)
	if _, ok := g.Enter(ctx, 10*time.Millisecond, Known); ok {
		t.Error("entered a full gate")
	}
	hold()
	if r, ok := g.Enter(ctx, 10*time.Millisecond, Failing); !ok {
		t.Error("the slot was lost after a waiter gave up")
	} else {
		r()
	}
}
