package auth

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Sign-in attempts are limited three ways, and each attempt is counted before its
// password is checked, so that parallel attempts cannot all pass the check before any
// failure is recorded:
//
//   - per account and client address (the lockout): a few failures lock that account
//     for that address only, so nobody elsewhere can lock a person out;
//   - per client address, across accounts: one address cannot try many accounts;
//   - per account, across addresses (the ceiling): a slower limit that bounds guessing
//     spread over many addresses. It is high enough that one address cannot reach it
//     alone; an admin can clear it (Unlock).
//
// The counts live in memory, per process, and are forgotten at a restart.

// LoginLimits are the sign-in limits: at most N failures within Window per key.
type LoginLimits struct {
	Pair    Limit // per account and client address
	Address Limit // per client address
	Account Limit // per account, from every address
}

// Limit allows N failures within Window.
type Limit struct {
	N      int
	Window time.Duration
}

// DefaultLoginLimits: 5 failures per account and address in 15 minutes (one address can
// then reach at most 20 an hour on an account), 30 per address in 15 minutes, and a
// ceiling of 50 per account in an hour.
var DefaultLoginLimits = LoginLimits{
	Pair:    Limit{5, 15 * time.Minute},
	Address: Limit{30, 15 * time.Minute},
	Account: Limit{50, time.Hour},
}

// Scope says which limit refused a sign-in.
type Scope string

// Scopes of a refusal.
const (
	ScopePair    Scope = "pair"    // this account from this address
	ScopeAddress Scope = "address" // this address, whatever the account
	ScopeAccount Scope = "account" // this account, from every address
)

// LockedError refuses a sign-in attempt until a limit's oldest failure leaves its
// window.
type LockedError struct {
	Scope Scope
	Until time.Time // when one more attempt is allowed
	Wait  time.Duration
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("too many failed sign-ins (%s): try again in %s", e.Scope, e.Wait.Round(time.Second))
}

// Guard counts sign-in attempts against LoginLimits. Its methods are safe for
// concurrent use.
type Guard struct {
	mu      sync.Mutex // Begin checks and reserves in all three limiters as one step
	pair    *Limiter
	address *Limiter
	account *Limiter
}

// NewGuard returns a Guard with limits l.
func NewGuard(l LoginLimits) *Guard {
	return &Guard{
		pair:    NewLimiter(l.Pair.N, l.Pair.Window),
		address: NewLimiter(l.Address.N, l.Address.Window),
		account: NewLimiter(l.Account.N, l.Account.Window),
	}
}

func pairKey(account, addr string) string { return account + "\x00" + addr }

// Attempt is a sign-in attempt counted as a failure until it is shown to be otherwise.
type Attempt struct {
	g             *Guard
	account, addr string
	at            time.Time
	done          bool
}

// Begin counts an attempt on account (compared case-insensitively) from addr at now,
// or refuses it with a *LockedError when a limit is reached. The attempt counts as a
// failure from here on: call Succeeded when the password matched, Abandon when no
// password was checked.
func (g *Guard) Begin(account, addr string, now time.Time) (*Attempt, error) {
	account = strings.ToLower(account)
	g.mu.Lock()
	defer g.mu.Unlock()
	if refusal := g.refusal(account, addr, now); refusal != nil {
		return nil, refusal
	}
	g.address.Fail(addr, now)
	g.account.Fail(account, now)
	g.pair.Fail(pairKey(account, addr), now)
	return &Attempt{g: g, account: account, addr: addr, at: now}, nil
}

// Succeeded records that the password matched: the failures of this account from this
// address are forgotten, and the attempt no longer counts against the address or the
// account.
func (a *Attempt) Succeeded() {
	if a.done {
		return
	}
	a.done = true
	a.g.pair.Reset(pairKey(a.account, a.addr))
	a.g.address.Release(a.addr, a.at)
	a.g.account.Release(a.account, a.at)
}

// Abandon gives the attempt back: no password was checked (the server was busy, or
// failed).
func (a *Attempt) Abandon() {
	if a.done {
		return
	}
	a.done = true
	a.g.pair.Release(pairKey(a.account, a.addr), a.at)
	a.g.address.Release(a.addr, a.at)
	a.g.account.Release(a.account, a.at)
}

// Failed records that the password did not match (the attempt counts as a failure
// already) and returns the refusal the next attempt from the same address on the same
// account would meet at now, or nil when it would be allowed.
func (a *Attempt) Failed(now time.Time) *LockedError {
	a.done = true
	a.g.mu.Lock()
	defer a.g.mu.Unlock()
	return a.g.refusal(a.account, a.addr, now)
}

// refusal is the refusal an attempt would meet at now (the one that lasts longest), or
// nil; the caller holds g.mu.
func (g *Guard) refusal(account, addr string, now time.Time) *LockedError {
	var refusal *LockedError
	for _, c := range []struct {
		l     *Limiter
		key   string
		scope Scope
	}{{g.address, addr, ScopeAddress}, {g.account, account, ScopeAccount}, {g.pair, pairKey(account, addr), ScopePair}} {
		if ok, wait := c.l.Allowed(c.key, now); !ok && (refusal == nil || wait > refusal.Wait) {
			refusal = &LockedError{Scope: c.scope, Until: now.Add(wait), Wait: wait}
		}
	}
	return refusal
}

// Lock is what an admin sees of an account's lockouts.
type Lock struct {
	Account   bool      // the ceiling is reached: locked from every address
	Addresses int       // addresses locked out of this account
	Until     time.Time // when the last of these lockouts ends
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
	if ok, wait := g.account.Allowed(account, now); !ok {
		lk.Account = true
		later(wait)
	}
	prefix := pairKey(account, "")
	for _, key := range g.pair.keys(prefix) {
		if ok, wait := g.pair.Allowed(key, now); !ok {
			lk.Addresses++
			later(wait)
		}
	}
	return lk, lk.Account || lk.Addresses > 0
}

// Unlock forgets every failure counted against account: its ceiling and its lockouts
// for each address. Failures counted against addresses stay.
func (g *Guard) Unlock(account string) {
	account = strings.ToLower(account)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.account.Reset(account)
	for _, key := range g.pair.keys(pairKey(account, "")) {
		g.pair.Reset(key)
	}
}

// HashGate bounds how many password hashes run at once. An argon2id hash holds
// Params.Memory for its duration, so without a bound, parallel sign-ins hold that much
// each: a few hundred at once exhaust memory. Size it to the cores: more hashes at once
// would not finish sooner.
type HashGate struct{ slots chan struct{} }

// NewHashGate allows n hashes at once (at least 1).
func NewHashGate(n int) *HashGate {
	return &HashGate{slots: make(chan struct{}, max(1, n))}
}

// Enter waits up to wait for a slot and returns the function that gives it back, or
// false when none came free in time (or ctx ended).
func (g *HashGate) Enter(ctx context.Context, wait time.Duration) (release func(), ok bool) {
	release = sync.OnceFunc(func() { <-g.slots })
	select {
	case g.slots <- struct{}{}:
		return release, true
	default:
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case g.slots <- struct{}{}:
		return release, true
	case <-t.C:
		return nil, false
	case <-ctx.Done():
		return nil, false
	}
}
