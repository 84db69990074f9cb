package auth

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Sign-in attempts are limited as OWASP's authentication guidance asks, so that the
// limits stop guessing without letting anyone lock a person out (an account lockout is
// a denial of service anyone can cause: 50 wrong passwords from 10 addresses used to lock
// the only admin out of every address for an hour, and lock it again the moment it was
// unlocked). Each attempt is counted before its password is checked, so parallel
// attempts cannot all pass the check before any failure is recorded:
//
//   - per account and client address: a few failures lock that account for that address
//     only, so nobody elsewhere can lock a person out;
//   - per client address, across accounts: one address cannot try many accounts;
//   - per account, from every address: past a number of failures an account is under
//     attack, and sign-ins to it from addresses that are themselves failing (a failed
//     sign-in on record, on any account) are slowed to one every Spacing, shared by all
//     of them. An account is never locked as a whole: a sign-in from an address with no
//     failure on record is always checked, so its owner signs in from anywhere else.
//
// Distributed guessing is then bounded by one guess per fresh address (a failure makes
// it a failing one) plus one every Spacing. Every lock and every slowing is reported
// once, when it starts (Failure.Started), for the audit log. The counts live in
// memory, per process, and are forgotten at a restart.

// LoginLimits are the sign-in limits: at most N failures within Window per key.
type LoginLimits struct {
	Pair    Limit // per account and client address: that address locked out of that account
	Address Limit // per client address: that address locked out of every account
	Account Limit // per account from every address: past it, sign-ins from failing addresses are slowed
	// Spacing is how far apart sign-ins to an account past its Account limit may come
	// from failing addresses; 0 is a minute.
	Spacing time.Duration
}

// Limit allows N failures within Window.
type Limit struct {
	N      int
	Window time.Duration
}

// DefaultLoginLimits: 5 failures per account and address in 15 minutes (one address can
// then reach at most 20 an hour on an account), 30 per address in 15 minutes, and past
// 20 failures on an account in an hour, one sign-in a minute to it from failing
// addresses.
var DefaultLoginLimits = LoginLimits{
	Pair:    Limit{5, 15 * time.Minute},
	Address: Limit{30, 15 * time.Minute},
	Account: Limit{20, time.Hour},
	Spacing: time.Minute,
}

// Scope says which limit refused a sign-in.
type Scope string

// Scopes of a refusal.
const (
	ScopePair    Scope = "pair"    // this account from this address
	ScopeAddress Scope = "address" // this address, whatever the account
	ScopeAccount Scope = "account" // this account, under attack, from a failing address: slowed
)

// LockedError refuses a sign-in attempt until a limit lets one more through.
type LockedError struct {
	Scope Scope
	Until time.Time // when one more attempt is allowed
	Wait  time.Duration
}

func (e *LockedError) Error() string {
	if e.Scope == ScopeAccount {
		return fmt.Sprintf("too many failed sign-ins on this account: sign-ins from failing addresses are slowed; try again in %s", e.Wait.Round(time.Second))
	}
	return fmt.Sprintf("too many failed sign-ins (%s): try again in %s", e.Scope, e.Wait.Round(time.Second))
}

// Guard counts sign-in attempts against LoginLimits. Its methods are safe for
// concurrent use.
type Guard struct {
	mu      sync.Mutex // Begin checks and reserves in every limiter as one step
	pair    *Limiter
	address *Limiter
	account *Limiter
	// failing holds each address's settled failures (on any account, within the address
	// window): an address with none is not failing, and is never slowed. busy holds its
	// sign-ins turned away while waiting for a password check: such an address is not
	// quiet, and waits behind quiet ones (a flood's address cannot keep its place among
	// them by sending again).
	failing *Limiter
	busy    *Limiter
	spacing time.Duration
	next    map[string]time.Time // account -> when the next slowed sign-in may come
	started map[string]time.Time // scope and key -> until when the lock was reported
	known   map[string]time.Time // account and address -> its last sign-in
}

// knownFor is how long an address that signed in to an account stays known for it.
const knownFor = 30 * 24 * time.Hour

// NewGuard returns a Guard with limits l.
func NewGuard(l LoginLimits) *Guard {
	g := &Guard{
		pair:    NewLimiter(l.Pair.N, l.Pair.Window),
		address: NewLimiter(l.Address.N, l.Address.Window),
		account: NewLimiter(l.Account.N, l.Account.Window),
		failing: NewLimiter(1, max(l.Address.Window, l.Pair.Window)),
		busy:    NewLimiter(1, max(l.Address.Window, l.Pair.Window)),
		spacing: l.Spacing,
		next:    map[string]time.Time{},
		started: map[string]time.Time{},
		known:   map[string]time.Time{},
	}
	if g.spacing <= 0 {
		g.spacing = time.Minute
	}
	return g
}

func pairKey(account, addr string) string { return account + "\x00" + addr }

// Attempt is a sign-in attempt counted as a failure until it is shown to be otherwise.
type Attempt struct {
	g             *Guard
	account, addr string
	at            time.Time
	done          bool
	// Failing is true when the address has a failed sign-in on record (on any
	// account); Slowed when, besides, the account is under attack: the attempt took the
	// account's slowed turn.
	Failing, Slowed bool
	// Priority is where its password check waits (HashGate): Known when the address
	// signed in to the account before, Quiet when it has neither a failure nor a
	// sign-in turned away on record, Failing otherwise.
	Priority Priority
}

// Begin counts an attempt on account (compared case-insensitively) from addr at now,
// or refuses it with a *LockedError when a limit holds for that address. The attempt
// counts as a failure from here on: call Succeeded when the password matched, Failed
// when it did not, Abandon when no password was checked.
func (g *Guard) Begin(account, addr string, now time.Time) (*Attempt, error) {
	account = strings.ToLower(account)
	g.mu.Lock()
	defer g.mu.Unlock()
	if refusal := g.refusal(account, addr, now); refusal != nil {
		return nil, refusal
	}
	clean, _ := g.failing.Allowed(addr, now)
	calm, _ := g.busy.Allowed(addr, now)
	a := &Attempt{g: g, account: account, addr: addr, at: now, Failing: !clean, Priority: Failing}
	switch last, known := g.known[pairKey(account, addr)]; {
	case known && now.Sub(last) <= knownFor:
		a.Priority = Known
	case clean && calm:
		a.Priority = Quiet
	}
	if g.slowed(account, addr, now) {
		if next := g.next[account]; now.Before(next) {
			return nil, &LockedError{Scope: ScopeAccount, Until: next, Wait: next.Sub(now)}
		}
		g.next[account] = now.Add(g.spacing)
		a.Slowed = true
		if len(g.next) > 100_000 { // bound memory under a flood of distinct accounts
			for k, t := range g.next {
				if !now.Before(t) {
					delete(g.next, k)
				}
			}
		}
	}
	g.address.Fail(addr, now)
	g.account.Fail(account, now)
	g.pair.Fail(pairKey(account, addr), now)
	return a, nil
}

// slowed reports whether an attempt on account from addr takes the account's slowed
// turn: the account is past its limit and the address is failing. The caller holds g.mu.
func (g *Guard) slowed(account, addr string, now time.Time) bool {
	if ok, _ := g.account.Allowed(account, now); ok {
		return false
	}
	clean, _ := g.failing.Allowed(addr, now)
	return !clean
}

// Succeeded records that the password matched: the failures of this account from this
// address are forgotten, the attempt no longer counts against the address or the
// account, and the address is known for the account from now on.
func (a *Attempt) Succeeded() {
	if a.done {
		return
	}
	a.done = true
	key := pairKey(a.account, a.addr)
	a.g.pair.Reset(key)
	a.g.address.Release(a.addr, a.at)
	a.g.account.Release(a.account, a.at)
	a.g.mu.Lock()
	defer a.g.mu.Unlock()
	a.g.known[key] = a.at
	if len(a.g.known) > 100_000 { // bound memory: forget the stale ones
		for k, t := range a.g.known {
			if a.at.Sub(t) > knownFor {
				delete(a.g.known, k)
			}
		}
	}
}

// Busy gives the attempt back, as Abandon, for a sign-in turned away because no
// password check came free in time: its address is no longer quiet for a while.
func (a *Attempt) Busy(now time.Time) {
	if a.done {
		return
	}
	a.Abandon()
	a.g.busy.Fail(a.addr, now)
}

// Abandon gives the attempt back: no password was checked (the server failed, or the
// client left before its turn).
func (a *Attempt) Abandon() {
	if a.done {
		return
	}
	a.done = true
	a.g.pair.Release(pairKey(a.account, a.addr), a.at)
	a.g.address.Release(a.addr, a.at)
	a.g.account.Release(a.account, a.at)
}

// Failure is what a failed attempt leaves: the refusal the next attempt from the same
// address on the same account would meet (nil when it would be allowed), and the locks
// this failure started, each reported once (for the audit log).
type Failure struct {
	Next    *LockedError
	Started []Lockout
}

// Lockout is a lock a failure started: Scope's limit reached for Key (an address, an
// account, or both), until Until.
type Lockout struct {
	Scope   Scope
	Account string
	Address string // "" for the account's slowing
	Until   time.Time
}

// Failed records that the password did not match (the attempt counts as a failure
// already: this marks its address failing) and reports the locks it started and the
// refusal the next attempt would meet at now.
func (a *Attempt) Failed(now time.Time) Failure {
	a.g.mu.Lock()
	defer a.g.mu.Unlock()
	if !a.done {
		a.done = true
		a.g.failing.Fail(a.addr, now)
	}
	g := a.g
	var f Failure
	for _, c := range []struct {
		l     *Limiter
		key   string
		scope Scope
		lock  Lockout
	}{
		{g.pair, pairKey(a.account, a.addr), ScopePair, Lockout{Scope: ScopePair, Account: a.account, Address: a.addr}},
		{g.address, a.addr, ScopeAddress, Lockout{Scope: ScopeAddress, Address: a.addr}},
		{g.account, a.account, ScopeAccount, Lockout{Scope: ScopeAccount, Account: a.account}},
	} {
		ok, wait := c.l.Allowed(c.key, now)
		if ok {
			continue
		}
		until := now.Add(wait)
		id := string(c.scope) + "\x00" + c.key
		if reported, seen := g.started[id]; !seen || !now.Before(reported) {
			c.lock.Until = until
			f.Started = append(f.Started, c.lock)
		}
		g.started[id] = until
	}
	if len(g.started) > 100_000 { // bound memory under a flood of distinct keys
		for id, until := range g.started {
			if !now.Before(until) {
				delete(g.started, id)
			}
		}
	}
	f.Next = g.refusal(a.account, a.addr, now)
	if f.Next == nil && g.slowed(a.account, a.addr, now) {
		if next := g.next[a.account]; now.Before(next) {
			f.Next = &LockedError{Scope: ScopeAccount, Until: next, Wait: next.Sub(now)}
		}
	}
	return f
}

// refusal is the refusal an attempt from addr on account would meet at now from the
// address's own limits (the one that lasts longest), or nil; the caller holds g.mu.
func (g *Guard) refusal(account, addr string, now time.Time) *LockedError {
	var refusal *LockedError
	for _, c := range []struct {
		l     *Limiter
		key   string
		scope Scope
	}{{g.address, addr, ScopeAddress}, {g.pair, pairKey(account, addr), ScopePair}} {
		if ok, wait := c.l.Allowed(c.key, now); !ok && (refusal == nil || wait > refusal.Wait) {
			refusal = &LockedError{Scope: c.scope, Until: now.Add(wait), Wait: wait}
		}
	}
	return refusal
}

// Lock is what an admin sees of an account's lockouts.
type Lock struct {
	Slowed    bool      // past its limit: sign-ins from failing addresses are slowed
	Failures  int       // failures on the account within its window
	Addresses int       // addresses locked out of this account
	Until     time.Time // when the last of these ends
}

// Locked reports the lockouts on account at now; ok is false when there are none.
func (g *Guard) Locked(account string, now time.Time) (Lock, bool) {
	account = strings.ToLower(account)
	g.mu.Lock()
	defer g.mu.Unlock()
	var lk Lock
	later := func(wait time.Duration) {
		if t := now.Add(wait); t.After(lk.Until) {
			lk.Until = t
		}
	}
	lk.Failures = g.account.Count(account, now)
	if ok, wait := g.account.Allowed(account, now); !ok {
		lk.Slowed = true
		later(wait)
	}
	prefix := pairKey(account, "")
	for _, key := range g.pair.keys(prefix) {
		if ok, wait := g.pair.Allowed(key, now); !ok {
			lk.Addresses++
			later(wait)
		}
	}
	return lk, lk.Slowed || lk.Addresses > 0
}

// Unlock forgets every failure counted against account: its slowing and its lockouts
// for each address. Failures counted against addresses stay.
func (g *Guard) Unlock(account string) {
	account = strings.ToLower(account)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.account.Reset(account)
	delete(g.next, account)
	delete(g.started, string(ScopeAccount)+"\x00"+account)
	for _, key := range g.pair.keys(pairKey(account, "")) {
		g.pair.Reset(key)
		delete(g.started, string(ScopePair)+"\x00"+key)
	}
}

// HashGate bounds how many password hashes run at once. An argon2id hash holds
// Params.Memory for its duration, so without a bound, parallel sign-ins hold that much
// each: a few hundred at once exhaust memory. Size it to the cores: more hashes at once
// would not finish sooner.
//
// A slot that comes free goes by Priority: first to a sign-in from an address that has
// signed in to the account before (Known), then to one from a quiet address (Quiet),
// the newest first, then to the others (Failing), oldest first. Newest first because
// when a burst of first tries from a flood's many addresses waits for more checks than
// can run before they give up, serving the oldest first serves only sign-ins about to
// be turned away, and a person who comes after the burst waits behind all of it;
// newest first, they are checked at once and the burst's oldest wait longest.
type HashGate struct {
	mu    sync.Mutex
	free  int
	queue [3][]chan struct{} // waiters by Priority
}

// Priority orders the waiters of a HashGate.
type Priority int

// Priorities, highest first.
const (
	Known   Priority = iota // the address signed in to this account before
	Quiet                   // no failure and no sign-in turned away on record
	Failing                 // the rest
)

// NewHashGate allows n hashes at once (at least 1).
func NewHashGate(n int) *HashGate {
	return &HashGate{free: max(1, n)}
}

// Enter waits up to wait for a slot, served by p, and returns the function that gives
// it back, or false when none came free in time (or ctx ended).
func (g *HashGate) Enter(ctx context.Context, wait time.Duration, p Priority) (release func(), ok bool) {
	release = sync.OnceFunc(g.release)
	g.mu.Lock()
	if g.free > 0 { // a free slot means nobody waits: handOver serves waiters first
		g.free--
		g.mu.Unlock()
		return release, true
	}
	ch := make(chan struct{}, 1) // a slot handed over
	g.queue[p] = append(g.queue[p], ch)
	g.mu.Unlock()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ch:
		return release, true
	case <-t.C:
	case <-ctx.Done():
	}
	// Gone: leave the queue, or pass on a slot handed over meanwhile.
	g.mu.Lock()
	defer g.mu.Unlock()
	q := g.queue[p]
	for i, c := range q {
		if c == ch {
			g.queue[p] = append(q[:i:i], q[i+1:]...)
			return nil, false
		}
	}
	<-ch // handed a slot just as it gave up
	g.handOver()
	return nil, false
}

// release gives a slot back: to the next waiter, if any.
func (g *HashGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.handOver()
}

// handOver gives one slot to the next waiter by priority (the newest of the quiet
// ones, the oldest of the others), or frees it; the caller holds g.mu and the slot.
func (g *HashGate) handOver() {
	for p := range g.queue {
		q := g.queue[p]
		if len(q) == 0 {
			continue
		}
		i := 0
		if Priority(p) == Quiet {
			i = len(q) - 1
		}
		ch := q[i]
		g.queue[p] = append(q[:i:i], q[i+1:]...)
		ch <- struct{}{}
		return
	}
	g.free++
}
