// Package auth holds the rules of team access: roles and what each may do, password
// hashing (argon2id), session and invite tokens, and a limiter for login attempts. It
// does no I/O: the web layer stores what it returns through internal/db.
package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/argon2"
)

// Role is a team member's role.
type Role string

// Roles.
const (
	Annotator Role = "annotator" // labels pairs
	Reviewer  Role = "reviewer"  // labels, adjudicates, runs sweeps, prepares manifests, imports labels
	Approver  Role = "approver"  // reads labels, signs manifests off
	Admin     Role = "admin"     // everything: people and datasets too
)

// Roles lists every role, least to most administrative.
var Roles = []Role{Annotator, Reviewer, Approver, Admin}

// ParseRole validates a role name.
func ParseRole(s string) (Role, error) {
	for _, r := range Roles {
		if string(r) == s {
			return r, nil
		}
	}
	return "", fmt.Errorf("unknown role %q (want annotator, reviewer, approver or admin)", s)
}

// Permission is something a route needs.
type Permission string

// Permissions.
const (
	View             Permission = "view"              // see datasets, campaigns' progress, sweeps, manifests
	ReadLabels       Permission = "read-labels"       // see everyone's labels: pairs, the adjudication queue, label exports
	Label            Permission = "label"             // label pairs
	Adjudicate       Permission = "adjudicate"        // settle disagreements
	ManageCampaigns  Permission = "manage-campaigns"  // start campaigns, campaign settings, drawing pairs to label
	ImportData       Permission = "import-data"       // import documents as datasets
	ImportLabels     Permission = "import-labels"     // import label files
	RunSweeps        Permission = "run-sweeps"        // run parameter sweeps
	PrepareManifests Permission = "prepare-manifests" // propose removal manifests
	Approve          Permission = "approve"           // sign manifests off
	RequestAudit     Permission = "request-audit"     // draw a manifest's own audit: whoever prepares or approves manifests
	ManageUsers      Permission = "manage-users"      // invite, set roles, disable
)

// Permissions lists every permission. An admin holds them all: the first account,
// made by the setup link, can do every step itself.
var Permissions = []Permission{View, ReadLabels, Label, Adjudicate, ManageCampaigns, ImportData, ImportLabels,
	RunSweeps, PrepareManifests, Approve, RequestAudit, ManageUsers}

// Labels stay blind for annotators: they see their own and nobody else's, so only the
// roles above them read everyone's labels.
var grants = map[Role][]Permission{
	Annotator: {View, Label},
	Reviewer:  {View, ReadLabels, Label, Adjudicate, ManageCampaigns, ImportLabels, RunSweeps, PrepareManifests, RequestAudit},
	Approver:  {View, ReadLabels, Approve, RequestAudit},
	Admin:     Permissions,
}

// Can reports whether role r has permission p.
func (r Role) Can(p Permission) bool {
	for _, g := range grants[r] {
		if g == p {
			return true
		}
	}
	return false
}

// RolesWith lists the roles that have permission p, least to most administrative: the
// people a page names when it says who can take a step the viewer cannot.
func RolesWith(p Permission) []Role {
	var out []Role
	for _, r := range Roles {
		if r.Can(p) {
			out = append(out, r)
		}
	}
	return out
}

// MinPasswordLength is the shortest password accepted.
const MinPasswordLength = 10

// CheckNewPassword says what is wrong with a password someone chooses.
func CheckNewPassword(name, pw string) error {
	switch {
	case len(pw) < MinPasswordLength:
		return fmt.Errorf("the password needs at least %d characters", MinPasswordLength)
	case len(pw) > 1024:
		return errors.New("the password is longer than 1024 bytes")
	case strings.EqualFold(pw, name):
		return errors.New("the password cannot be the user name")
	}
	return nil
}

// Params are argon2id's cost parameters.
type Params struct {
	Memory  uint32 // KiB
	Time    uint32
	Threads uint8
}

// DefaultParams follow OWASP's argon2id recommendation (46 MiB, 1 pass, 1 lane).
var DefaultParams = Params{Memory: 46 * 1024, Time: 1, Threads: 1}

// HashPassword returns an argon2id hash in the PHC string format.
func HashPassword(pw string, p Params) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	key := argon2.IDKey([]byte(pw), salt, p.Time, p.Memory, p.Threads, 32)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.Memory, p.Time, p.Threads,
		b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// CheckPassword reports whether pw matches hash, in constant time.
func CheckPassword(hash, pw string) (bool, error) {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, errors.New("not an argon2id hash")
	}
	var version int
	var p Params
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, errors.New("unsupported argon2 version")
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.Memory, &p.Time, &p.Threads); err != nil {
		return false, errors.New("bad argon2 parameters")
	}
	b64 := base64.RawStdEncoding
	salt, err := b64.DecodeString(parts[4])
	if err != nil {
		return false, err
	}
	want, err := b64.DecodeString(parts[5])
	if err != nil {
		return false, err
	}
	got := argon2.IDKey([]byte(pw), salt, p.Time, p.Memory, p.Threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// NewToken returns a 128-bit random token for a cookie or a link, and the hash to store.
// Only the hash is kept server-side, so a leaked database does not leak live sessions.
func NewToken() (token string, hash []byte) {
	token = randomText(16)
	return token, HashToken(token)
}

// randomText is n random bytes in unpadded URL-safe base64.
func randomText(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// APITokenPrefix starts every API token, so a leaked one is recognisable (secret
// scanners, logs) and cannot be mistaken for a session cookie.
const APITokenPrefix = "dsk_"

// NewAPIToken returns a token for the search API, 256 random bits after
// APITokenPrefix, and the hash to store (HashToken). The token is shown once.
func NewAPIToken() (token string, hash []byte) {
	token = APITokenPrefix + randomText(32)
	return token, HashToken(token)
}

// HashToken is the stored form of a token.
func HashToken(token string) []byte {
	sum := sha256.Sum256([]byte(token))
	return sum[:]
}

// Limiter counts failures per key (an account name, a client address) in a sliding
// window and refuses further attempts once a key has too many.
type Limiter struct {
	mu     sync.Mutex
	max    int
	window time.Duration
	fails  map[string][]time.Time
}

// NewLimiter allows max failures per key within window.
func NewLimiter(max int, window time.Duration) *Limiter {
	return &Limiter{max: max, window: window, fails: map[string][]time.Time{}}
}

func (l *Limiter) recent(key string, now time.Time) []time.Time {
	ts := l.fails[key]
	i := 0
	for i < len(ts) && now.Sub(ts[i]) >= l.window {
		i++
	}
	ts = ts[i:]
	if len(ts) == 0 {
		delete(l.fails, key)
	} else {
		l.fails[key] = ts
	}
	return ts
}

// Allowed reports whether key may try again at now, and if not, when it may.
func (l *Limiter) Allowed(key string, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ts := l.recent(key, now)
	if len(ts) < l.max {
		return true, 0
	}
	return false, l.window - now.Sub(ts[0])
}

// Count returns how many failures key has within the window at now.
func (l *Limiter) Count(key string, now time.Time) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.recent(key, now))
}

// Fail records a failed attempt by key.
func (l *Limiter) Fail(key string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.fails[key] = append(l.recent(key, now), now)
	if len(l.fails) > 100_000 { // bound memory under a flood of distinct keys
		for k := range l.fails {
			l.recent(k, now)
		}
	}
}

// Release takes back one failure of key recorded at at: an attempt counted before it
// was checked that turned out not to be a failure.
func (l *Limiter) Release(key string, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ts := l.fails[key]
	for i := len(ts) - 1; i >= 0; i-- {
		if ts[i].Equal(at) {
			ts = append(ts[:i:i], ts[i+1:]...)
			break
		}
	}
	if len(ts) == 0 {
		delete(l.fails, key)
	} else {
		l.fails[key] = ts
	}
}

// keys returns the keys with failures on record that start with prefix.
func (l *Limiter) keys(prefix string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for k := range l.fails {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	return out
}

// Reset forgets key's failures (after a successful login).
func (l *Limiter) Reset(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.fails, key)
}
