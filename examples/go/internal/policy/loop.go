package policy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"llmchaos.example/goclients/internal/chaos"
)

// Hooks is what one attempt gets from the loop.
type Hooks struct {
	HTTPClient *http.Client // the watched connection: give it to the library
	OnOpen     func()       // a stream's headers came (re-arms the idle timer)
	OnText     func(string) // a visible text delta (re-arms the idle timer)
}

// Attempt makes one call on route without retries of its own and returns the answer, or the library's
// error (chaos.ErrTruncated when a stream ended without its dialect's last event).
type Attempt func(ctx context.Context, route chaos.Route, h Hooks) (chaos.Answer, error)

// Run is the team's policy loop over routes (the primary then the fallbacks, as the policy tries them);
// it writes the exec contract's last line to out and returns the program's exit code.
func Run(env chaos.Env, routes []chaos.Route, attempt Attempt, out io.Writer, log io.Writer) int {
	b, err := BudgetOf(env.PolicyJSON, env.TimeScale)
	if err != nil {
		fmt.Fprintf(log, "LLMCHAOS_POLICY_JSON: %v\n", err)
		return 2
	}
	var tried []chaos.Route
	for k, r := range routes {
		if k == 0 || b.Approved(r.Name) { // an unapproved fallback is never tried
			tried = append(tried, r)
		}
	}
	if len(tried) == 0 {
		fmt.Fprintln(log, "no route of this case speaks a dialect this client has")
		return 2
	}
	var started time.Time // the request's budget runs from its first send, as the mock measures it
	var once sync.Once
	idx, attempts, retriesOnRoute := 0, 0, 0
	for {
		route := tried[idx]
		attempts++
		answer, facts, err := runAttempt(route, b.AttemptTimeout, attempt, func() { once.Do(func() { started = time.Now() }) })
		if err == nil {
			outcome := "primary_success"
			if idx > 0 {
				outcome = "fallback_recovery"
			} else if attempts > 1 {
				outcome = "retry_recovery"
			}
			_ = chaos.Report(out, outcome, route.Name, answer)
			return 0
		}
		c := Classify(facts, time.Now())
		next := ""
		if idx+1 < len(tried) {
			next = tried[idx+1].Name
		}
		elapsed := time.Duration(0)
		if !started.IsZero() {
			elapsed = time.Since(started)
		}
		d := Decide(c, LoopState{Attempts: attempts, RetriesOnRoute: retriesOnRoute, Route: route.Name, Next: next, Elapsed: elapsed}, b, rand.Float64())
		fmt.Fprintf(log, "%s attempt %d: %v -> owner %s, commit %s (%s); %s\n", route.Name, attempts, err, c.Owner, c.Commit, c.Why, d.Why)
		switch d.Step {
		case Retry:
			retriesOnRoute++
			time.Sleep(d.Wait)
		case Fallback:
			idx++
			retriesOnRoute = 0
		default:
			fmt.Fprintf(log, "fail closed: %s\n", d.Why)
			_ = chaos.Report(out, "fail_closed", "", chaos.Answer{})
			return 1
		}
	}
}

// runAttempt makes one attempt under the idle timer (armed at the headers, re-armed at every visible
// token) and the header timeout, and returns the answer or the error with the facts for Classify.
func runAttempt(route chaos.Route, timeout time.Duration, attempt Attempt, firstSend func()) (chaos.Answer, Facts, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var idleAborted, opened atomic.Bool
	var visible atomic.Int64
	idle := time.AfterFunc(time.Hour, func() { idleAborted.Store(true); cancel() })
	idle.Stop()
	touch := func() { idle.Reset(timeout) }
	watch := newAttemptWatch(timeout, firstSend, touch)
	defer watch.close()
	answer, err := attempt(ctx, route, Hooks{
		HTTPClient: &http.Client{Transport: watch},
		OnOpen:     func() { opened.Store(true); touch() },
		OnText:     func(t string) { visible.Add(int64(len(t))); touch() },
	})
	idle.Stop()
	// A library that ends a broken body quietly (a cut read as the end) returned a truncated answer.
	if err == nil && watch.broken() {
		err = chaos.ErrTruncated{Visible: int(visible.Load())}
	}
	if err == nil && answer.Filtered() {
		err = chaos.ErrFiltered{Reason: answer.FinishReason}
	}
	if err == nil {
		return answer, Facts{}, nil
	}
	f := watch.facts()
	var truncated chaos.ErrTruncated
	var filtered chaos.ErrFiltered
	f.Truncated, f.Filtered = errors.As(err, &truncated), errors.As(err, &filtered)
	f.IdleAborted, f.Opened, f.Visible, f.Err = idleAborted.Load(), opened.Load(), int(visible.Load()), err.Error()
	return chaos.Answer{}, f, err
}
