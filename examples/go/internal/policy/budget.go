// Package policy is the hardened Go clients' failure policy: the SDK's own retries off, every attempt
// the team's decision, made once per failure in the order of SPEC section 3 (the same loop as the
// JavaScript clients' runPolicy, examples/sdk/lib/hardened.mjs):
//  1. a request / auth / policy error fails closed;
//  2. anything that may have been committed fails closed: visible tokens already streamed, or a
//     timeout / a silent close before the response headers (unless the workflow is replay-safe);
//  3. an unknown owner (a bare 500) fails closed (these clients have no queue);
//  4. transient or rate: retry on the same route when an attempt is left and the wait + the expected
//     latency fit the time left;
//  5. else transient / rate / quota go to the next approved route when an attempt is left;
//  6. else fail closed.
package policy

import (
	"encoding/json"
	"time"
)

// Defaults is the client's own budget when the harness passes no policy (examples/cases/policies/sdk.toml
// says the same).
var Defaults = struct {
	MaxAttempts                                                    int
	SLOMs, AttemptTimeoutMs, ExpectedLatencyMs, BackoffBaseMs, BackoffCapMs float64
}{2, 8000, 2000, 300, 200, 2000}

// AttemptTimeoutFloor: under a small time scale the scaled attempt timeout would be shorter than a busy
// machine takes to answer over loopback.
const AttemptTimeoutFloor = 2 * time.Second

// Budget is what the loop keeps; times scaled.
type Budget struct {
	MaxAttempts    int
	SLO            time.Duration
	AttemptTimeout time.Duration
	BackoffBase    time.Duration
	BackoffCap     time.Duration
	ReplaySafe     bool
	expected       map[string]time.Duration
	unapproved     map[string]bool
	defaultLatency time.Duration
}

// ExpectedLatency is what one more attempt on the route is expected to take.
func (b Budget) ExpectedLatency(route string) time.Duration {
	if d, ok := b.expected[route]; ok {
		return d
	}
	return b.defaultLatency
}

// Approved says whether the policy lets the route be a fallback.
func (b Budget) Approved(route string) bool { return !b.unapproved[route] }

type policyJSON struct {
	Workflow struct {
		MaxTotalAttempts *int     `json:"max_total_attempts"`
		MaxElapsedMs     *float64 `json:"max_elapsed_ms"`
		AttemptTimeoutMs *float64 `json:"attempt_timeout_ms"`
		ReplaySafe       bool     `json:"replay_safe"`
	} `json:"workflow"`
	Backoff struct {
		BaseMs *float64 `json:"base_ms"`
		CapMs  *float64 `json:"cap_ms"`
	} `json:"backoff"`
	Routes []struct {
		Name              string   `json:"name"`
		ExpectedLatencyMs *float64 `json:"expected_latency_ms"`
		Approved          *bool    `json:"approved"`
	} `json:"routes"`
}

func ms(x float64, scale float64) time.Duration {
	return time.Duration(x * scale * float64(time.Millisecond))
}

func or[T any](p *T, fallback T) T {
	if p == nil {
		return fallback
	}
	return *p
}

// BudgetOf reads the case's policy (LLMCHAOS_POLICY_JSON; nil: Defaults) at the time scale.
func BudgetOf(raw []byte, scale float64) (Budget, error) {
	var p policyJSON
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &p); err != nil {
			return Budget{}, err
		}
	}
	w, d := p.Workflow, Defaults
	b := Budget{
		MaxAttempts:    or(w.MaxTotalAttempts, d.MaxAttempts),
		SLO:            ms(or(w.MaxElapsedMs, d.SLOMs), scale),
		AttemptTimeout: max(ms(or(w.AttemptTimeoutMs, d.AttemptTimeoutMs), scale), AttemptTimeoutFloor),
		BackoffBase:    ms(or(p.Backoff.BaseMs, d.BackoffBaseMs), scale),
		BackoffCap:     ms(or(p.Backoff.CapMs, d.BackoffCapMs), scale),
		ReplaySafe:     w.ReplaySafe,
		expected:       map[string]time.Duration{},
		unapproved:     map[string]bool{},
		defaultLatency: ms(d.ExpectedLatencyMs, scale),
	}
	for _, r := range p.Routes {
		if r.ExpectedLatencyMs != nil {
			b.expected[r.Name] = ms(*r.ExpectedLatencyMs, scale)
		}
		if r.Approved != nil && !*r.Approved {
			b.unapproved[r.Name] = true
		}
	}
	return b, nil
}
