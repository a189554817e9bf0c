package classifier

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"llmchaos.example/llmchaostest"
)

func TestMain(m *testing.M) { os.Exit(llmchaostest.Main(m)) }

// serviceFor builds the service the way production does, from the case's routes and policy (times at
// the session's scale).
func serviceFor(c *llmchaostest.Session) *Service {
	wf := c.Policy.Workflow
	routes := []Route{{Name: wf.Primary, BaseURL: c.BaseURL(wf.Primary), Dialect: c.Routes[wf.Primary].Dialect}}
	for _, name := range wf.Fallback {
		routes = append(routes, Route{Name: name, BaseURL: c.BaseURL(name), Dialect: c.Routes[name].Dialect})
	}
	return New(Config{
		Routes:         routes,
		Model:          c.Request.Model,
		MaxAttempts:    wf.MaxTotalAttempts,
		Budget:         c.Scaled(wf.MaxElapsedMS),
		AttemptTimeout: c.Scaled(wf.AttemptTimeoutMS),
		BackoffBase:    c.Scaled(c.Policy.Backoff.BaseMS),
		BackoffCap:     c.Scaled(c.Policy.Backoff.CapMS),
	})
}

// TestCases plays every bundled case against the service: the checker judges what it did.
func TestCases(t *testing.T) {
	files, err := filepath.Glob("../cases/*.toml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no bundled cases: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".toml"), func(t *testing.T) {
			c := llmchaostest.Case(t, file)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			answer, err := serviceFor(c).Classify(ctx, c.Request.Prompt, c.Request.OperationID)
			seen := llmchaostest.SeenFrom(answer.Text, answer.Route, answer.Model, err)
			seen.OutputTokens = answer.OutputTokens
			c.Finish(seen)
		})
	}
}
