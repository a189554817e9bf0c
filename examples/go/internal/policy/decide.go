package policy

import (
	"fmt"
	"time"
)

// Step is what the loop does after a failure.
type Step int

const (
	FailClosed Step = iota
	Retry           // the same route, after Wait
	Fallback        // the next route
)

// Decision is one failure point's action.
type Decision struct {
	Step Step
	Wait time.Duration
	Why  string
}

// LoopState is where the request stands when an attempt failed.
type LoopState struct {
	Attempts       int           // made so far, this one included
	RetriesOnRoute int           // retries already made on the current route
	Route          string        // the current route
	Next           string        // the next route, "" when none is left
	Elapsed        time.Duration // since the request's first send
}

// Decide is the SPEC-ordered decision for one failure; jitter in [0, 1) draws the full-jitter backoff.
func Decide(c Class, s LoopState, b Budget, jitter float64) Decision {
	if b.ReplaySafe && c.Silent {
		c = Class{Owner: Transient, Commit: None, Why: c.Why + ", replay-safe"}
	}
	switch {
	case c.Owner == Request || c.Owner == Auth || c.Owner == Policy:
		return Decision{Step: FailClosed, Why: "owner " + string(c.Owner)}
	case c.Commit != None:
		return Decision{Step: FailClosed, Why: "commit " + string(c.Commit)}
	case c.Owner == Unknown:
		return Decision{Step: FailClosed, Why: "owner unknown, no queue"}
	}
	left := b.MaxAttempts - s.Attempts
	timeLeft := b.SLO - s.Elapsed
	if left > 0 && (c.Owner == Transient || c.Owner == Rate) {
		backoff := time.Duration(jitter * float64(min(b.BackoffCap, b.BackoffBase<<s.RetriesOnRoute)))
		wait := backoff
		if c.RetryAfter != nil {
			wait = max(wait, *c.RetryAfter)
		}
		if timeLeft >= wait+b.ExpectedLatency(s.Route) {
			return Decision{Step: Retry, Wait: wait, Why: fmt.Sprintf("retry on %s in %d ms", s.Route, wait.Milliseconds())}
		}
	}
	if left > 0 && s.Next != "" && timeLeft >= b.ExpectedLatency(s.Next) {
		return Decision{Step: Fallback, Why: "fall back to " + s.Next}
	}
	if left > 0 {
		return Decision{Step: FailClosed, Why: "no route or time left"}
	}
	return Decision{Step: FailClosed, Why: "attempts exhausted"}
}
