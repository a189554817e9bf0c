// Package clients holds the Go example clients: per library one chat call, run either with the
// library's defaults (one client on the primary route, the library's own retries and timeouts, the
// stream loop its README shows, no fallback: an error goes to the caller) or hardened (the library's
// retries off, every attempt the team's decision: policy.Run).
package clients

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"llmchaos.example/goclients/internal/chaos"
	"llmchaos.example/goclients/internal/policy"
)

// Client is one runnable example client.
type Client struct {
	Name    string // the target's name in examples/run-target-suites
	Dialect string
	Module  string // the Go module it runs on (its version comes from the build info)
	Run     func(env chaos.Env, out, log io.Writer) int
}

// Chat is one call through a library on route. strict: a stream must end with its dialect's last event
// (else chaos.ErrTruncated); a default client takes what the library's usual loop gives.
type Chat func(ctx context.Context, route chaos.Route, env chaos.Env, h policy.Hooks, strict bool) (chaos.Answer, error)

// All is the table of clients, two per library.
var All = []Client{}

func register(name, dialect, module string, chat Chat) {
	All = append(All,
		Client{name + "-default", dialect, module, func(env chaos.Env, out, log io.Writer) int { return runDefault(env, dialect, chat, out, log) }},
		Client{name + "-hardened", dialect, module, func(env chaos.Env, out, log io.Writer) int { return runHardened(env, dialect, chat, out, log) }})
}

func noHooks() policy.Hooks {
	return policy.Hooks{OnOpen: func() {}, OnText: func(string) {}}
}

func runDefault(env chaos.Env, dialect string, chat Chat, out, log io.Writer) int {
	if env.Primary.Dialect != dialect {
		fmt.Fprintf(log, "primary route %s speaks %s, not %s\n", env.Primary.Name, env.Primary.Dialect, dialect)
		return 2
	}
	answer, err := chat(context.Background(), env.Primary, env, noHooks(), false)
	if err != nil {
		fmt.Fprintf(log, "%s: %T: %v\n", env.Primary.Name, err, err)
		_ = chaos.Report(out, "error", "", chaos.Answer{})
		return 1
	}
	_ = chaos.Report(out, "success", env.Primary.Name, answer)
	return 0
}

func runHardened(env chaos.Env, dialect string, chat Chat, out, log io.Writer) int {
	// Only routes this library speaks: a fallback of another dialect would need another SDK.
	var routes []chaos.Route
	for _, r := range env.Routes() {
		if r.Dialect == dialect {
			routes = append(routes, r)
		}
	}
	attempt := func(ctx context.Context, route chaos.Route, h policy.Hooks) (chaos.Answer, error) {
		return chat(ctx, route, env, h, true)
	}
	return policy.Run(env, routes, attempt, out, log)
}

// withHeader sends one more header with every request (the Idempotency-Key that ties a request's
// attempts together in the mock's ledger), for a library that has no option for it.
type withHeader struct {
	name, value string
	next        http.RoundTripper
}

func (t withHeader) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set(t.name, t.value)
	next := t.next
	if next == nil {
		next = http.DefaultTransport
	}
	return next.RoundTrip(req)
}

// streamEnd is what a strict stream loop returns once the library's stream ended without error.
func streamEnd(a chaos.Answer, finished, strict bool) (chaos.Answer, error) {
	if strict && !finished {
		return chaos.Answer{}, chaos.ErrTruncated{Visible: len(a.Text)}
	}
	return a, nil
}
