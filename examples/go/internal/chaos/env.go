// Package chaos is the exec driver's side of a Go client (harness/drivers/README.md, "The exec
// contract"): the environment the harness passes, the answer a client returns and the last stdout line.
package chaos

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// Route is one route of the case, as the policy tries them.
type Route struct {
	Name    string
	BaseURL string // what an SDK takes as its base URL (openai: .../v1)
	Dialect string
}

// Request is the case's request (LLMCHAOS_REQUEST).
type Request struct {
	Model       string `json:"model"`
	Prompt      string `json:"prompt"`
	Stream      bool   `json:"stream"`
	Prefill     bool   `json:"prefill"`
	OperationID string `json:"operation_id"`
}

// Env is everything the harness passes to one run of the program.
type Env struct {
	Request     Request
	OperationID string
	Primary     Route
	Fallbacks   []Route
	// The team's own timeouts and budgets are multiplied by this (LLMCHAOS_SDK_TIME_SCALE), as the
	// cases' budgets are by `llmchaos run --time-scale`. 1 = real time.
	TimeScale float64
	// The case's policy (LLMCHAOS_POLICY_JSON), or nil: the client's own.
	PolicyJSON []byte
}

// Routes is the primary then the fallbacks.
func (e Env) Routes() []Route { return append([]Route{e.Primary}, e.Fallbacks...) }

var notRouteChar = regexp.MustCompile(`[^A-Z0-9]`)

// envRoute is a route's name as the harness spells it in variable names.
func envRoute(name string) string { return notRouteChar.ReplaceAllString(strings.ToUpper(name), "_") }

// ReadEnv reads the exec contract's variables through lookup (os.LookupEnv in a program).
func ReadEnv(lookup func(string) (string, bool)) (Env, error) {
	var missing []string
	need := func(k string) string {
		v, ok := lookup(k)
		if !ok {
			missing = append(missing, k)
		}
		return v
	}
	route := func(name string) Route {
		return Route{Name: name, BaseURL: need("LLMCHAOS_" + envRoute(name) + "_BASE_URL"), Dialect: need("LLMCHAOS_" + envRoute(name) + "_DIALECT")}
	}
	env := Env{TimeScale: 1}
	requestJSON := need("LLMCHAOS_REQUEST")
	env.Primary = route(need("LLMCHAOS_PRIMARY"))
	if fb, _ := lookup("LLMCHAOS_FALLBACK"); fb != "" {
		for _, name := range strings.Split(fb, ",") {
			if name != "" {
				env.Fallbacks = append(env.Fallbacks, route(name))
			}
		}
	}
	if len(missing) > 0 {
		return Env{}, fmt.Errorf("%s not set: run this under `llmchaos run --driver exec`", strings.Join(missing, ", "))
	}
	if err := json.Unmarshal([]byte(requestJSON), &env.Request); err != nil {
		return Env{}, fmt.Errorf("LLMCHAOS_REQUEST is not a JSON request: %w", err)
	}
	env.OperationID = env.Request.OperationID
	if op, ok := lookup("LLMCHAOS_OPERATION_ID"); ok {
		env.OperationID = op
	}
	if s, ok := lookup("LLMCHAOS_SDK_TIME_SCALE"); ok {
		if x, err := strconv.ParseFloat(s, 64); err == nil && x > 0 {
			env.TimeScale = x
		}
	}
	if p, ok := lookup("LLMCHAOS_POLICY_JSON"); ok && p != "" {
		if !json.Valid([]byte(p)) {
			return Env{}, errors.New("LLMCHAOS_POLICY_JSON is not valid JSON")
		}
		env.PolicyJSON = []byte(p)
	}
	return env, nil
}

// Answer is what one chat call returned.
type Answer struct {
	Text         string
	Model        string
	OutputTokens int64
	FinishReason string
}

// Filtered says whether the provider ended the answer for its content policy.
func (a Answer) Filtered() bool { return FilteredReason.MatchString(a.FinishReason) }

// FilteredReason matches the finish / stop reasons that mean a content-policy end.
var FilteredReason = regexp.MustCompile(`(?i)^(content[_-]?filter|refusal|safety|recitation|prohibited_content|blocklist|spii)$`)

// Report writes the contract's last stdout line: {"outcome", "route", "text", "model", "output_tokens"}.
func Report(w io.Writer, outcome string, route string, a Answer) error {
	line := map[string]any{"outcome": outcome, "text": a.Text}
	if route != "" {
		line["route"] = route
		line["model"] = a.Model
		line["output_tokens"] = a.OutputTokens
	}
	b, err := json.Marshal(line)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// Prefill is the assistant prefill a `prefill` request ends with (client/src/codec_detail.hpp).
const Prefill = "{"

// ErrTruncated: a stream that stopped before its dialect's end (no finish reason / message_stop).
type ErrTruncated struct{ Visible int }

func (e ErrTruncated) Error() string {
	return fmt.Sprintf("the stream ended without its final event after %d visible text chars", e.Visible)
}

// ErrFiltered: an answer the provider ended for its content policy.
type ErrFiltered struct{ Reason string }

func (e ErrFiltered) Error() string {
	return fmt.Sprintf("the answer was ended by the provider's content policy (finish reason %s)", e.Reason)
}
