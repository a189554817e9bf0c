// Package classifier is a small service with its own resilience code: it classifies a text with an LLM,
// trying its primary route, retrying what may clear by waiting, and falling back to the next route for
// what will not (a quota, a billing refusal). Standard library only: OpenAI Chat Completions and
// Anthropic Messages over net/http.
package classifier

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Route is one provider endpoint: a base URL as an SDK takes it (OpenAI: .../v1) and its dialect.
type Route struct {
	Name    string
	BaseURL string
	Dialect string // "openai" or "anthropic"
}

// Config is the service's policy.
type Config struct {
	Routes         []Route // the primary first, then the fallbacks in order
	Model          string
	MaxAttempts    int           // every attempt on every route counts
	Budget         time.Duration // the whole request
	AttemptTimeout time.Duration
	BackoffBase    time.Duration
	BackoffCap     time.Duration
}

// Answer is what Classify returns.
type Answer struct {
	Text         string
	Route        string
	Model        string
	OutputTokens int
}

// Service classifies texts.
type Service struct {
	cfg  Config
	http *http.Client
}

// New returns a service with cfg.
func New(cfg Config) *Service { return &Service{cfg: cfg, http: &http.Client{}} }

// callError is a failed attempt: its HTTP status (0: no answer) and what the provider said.
type callError struct {
	status     int
	code       string // the error body's code or type ("insufficient_quota", "rate_limit_error", ...)
	retryAfter time.Duration
	err        error
}

func (e *callError) Error() string {
	if e.err != nil {
		return e.err.Error()
	}
	return fmt.Sprintf("status %d (%s)", e.status, e.code)
}

// Classify sends prompt to the routes under the policy; key ties its attempts together (Idempotency-Key).
func (s *Service) Classify(ctx context.Context, prompt, key string) (Answer, error) {
	deadline := time.Now().Add(s.cfg.Budget)
	attempts := 0
	var last error
	for _, route := range s.cfg.Routes {
		for try := 0; attempts < s.cfg.MaxAttempts; try++ {
			attempts++
			answer, err := s.attempt(ctx, route, prompt, key, deadline)
			if err == nil {
				return answer, nil
			}
			last = err
			var ce *callError
			if !errors.As(err, &ce) {
				return Answer{}, err
			}
			act := decide(ce)
			if act == stop {
				return Answer{}, err
			}
			if act == nextRoute {
				break
			}
			wait := backoff(s.cfg, try, ce.retryAfter)
			if time.Now().Add(wait).After(deadline) {
				break // the wait does not fit the budget: the next route may
			}
			time.Sleep(wait)
		}
	}
	return Answer{}, fmt.Errorf("every route failed: %w", last)
}

type action int

const (
	retrySameRoute action = iota
	nextRoute
	stop
)

func backoff(cfg Config, try int, retryAfter time.Duration) time.Duration {
	wait := cfg.BackoffBase << try
	if wait > cfg.BackoffCap {
		wait = cfg.BackoffCap
	}
	if retryAfter > wait {
		wait = retryAfter
	}
	return wait
}

func (s *Service) attempt(ctx context.Context, route Route, prompt, key string, deadline time.Time) (Answer, error) {
	timeout := s.cfg.AttemptTimeout
	if left := time.Until(deadline); left < timeout {
		timeout = left
	}
	if timeout <= 0 {
		return Answer{}, &callError{err: errors.New("no time left in the budget")}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	url, body, headers := request(route, s.cfg.Model, prompt)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return Answer{}, err
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	resp, err := s.http.Do(req)
	if err != nil {
		return Answer{}, &callError{err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return Answer{}, &callError{status: resp.StatusCode, err: err}
	}
	if resp.StatusCode != http.StatusOK {
		return Answer{}, &callError{status: resp.StatusCode, code: errorCode(data), retryAfter: retryAfter(resp.Header)}
	}
	answer, err := parse(route, data)
	if err != nil {
		return Answer{}, &callError{status: resp.StatusCode, err: err}
	}
	answer.Route = route.Name
	return answer, nil
}

func request(route Route, model, prompt string) (string, []byte, map[string]string) {
	messages := []map[string]string{{"role": "user", "content": prompt}}
	if route.Dialect == "anthropic" {
		body, _ := json.Marshal(map[string]any{"model": model, "max_tokens": 64, "messages": messages})
		return route.BaseURL + "/v1/messages", body, map[string]string{"x-api-key": "sk-example", "anthropic-version": "2023-06-01"}
	}
	body, _ := json.Marshal(map[string]any{"model": model, "messages": messages})
	return route.BaseURL + "/chat/completions", body, map[string]string{"Authorization": "Bearer sk-example"}
}

func parse(route Route, data []byte) (Answer, error) {
	if route.Dialect == "anthropic" {
		var m struct {
			Model   string `json:"model"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			Usage struct {
				OutputTokens int `json:"output_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal(data, &m); err != nil || len(m.Content) == 0 {
			return Answer{}, fmt.Errorf("malformed anthropic answer: %v", err)
		}
		var text strings.Builder
		for _, c := range m.Content {
			text.WriteString(c.Text)
		}
		return Answer{Text: text.String(), Model: m.Model, OutputTokens: m.Usage.OutputTokens}, nil
	}
	var c struct {
		Model   string `json:"model"`
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
		Usage struct {
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(data, &c); err != nil || len(c.Choices) == 0 {
		return Answer{}, fmt.Errorf("malformed openai answer: %v", err)
	}
	return Answer{Text: c.Choices[0].Message.Content, Model: c.Model, OutputTokens: c.Usage.CompletionTokens}, nil
}

// errorCode is the error body's code, else its type (OpenAI {"error": {"code", "type"}}, Anthropic
// {"error": {"type"}}).
func errorCode(data []byte) string {
	var e struct {
		Error struct {
			Code any    `json:"code"`
			Type string `json:"type"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &e) != nil {
		return ""
	}
	if code, ok := e.Error.Code.(string); ok && code != "" {
		return code
	}
	return e.Error.Type
}

func retryAfter(h http.Header) time.Duration {
	if ms, err := strconv.ParseFloat(h.Get("retry-after-ms"), 64); err == nil {
		return time.Duration(ms * float64(time.Millisecond))
	}
	if s, err := strconv.ParseFloat(h.Get("retry-after"), 64); err == nil {
		return time.Duration(s * float64(time.Second))
	}
	return 0
}
