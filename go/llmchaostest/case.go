// Package llmchaostest plays llmchaos cases inside `go test`: a test calls its own resilience code
// against the mock routes of a case and finishes with what its code returned; the checker's verdict
// passes or fails the test with the checker's own messages.
//
//	func TestQuotaFallsBack(t *testing.T) {
//		c := llmchaostest.Case(t, "cases/quota-429-falls-back.toml")
//		answer, err := myclient.Classify(c.BaseURL("primary"), c.BaseURL("backup"), c.Request.Prompt)
//		c.Finish(llmchaostest.SeenFrom(answer.Text, answer.Route, answer.Model, err))
//	}
//
// It is a thin client of `llmchaos serve`'s session API (harness/sessions/README.md): one server per
// test binary (the binary on PATH or LLMCHAOS_BIN, or the server at LLMCHAOS_URL), a session per Case,
// ended by t.Cleanup. Standard library only.
package llmchaostest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Seen is what the caller saw for one request: the exec contract's last line.
type Seen struct {
	// Outcome: primary_success, retry_recovery, fallback_recovery, degraded, queued, fail_closed, or
	// success / ok (the ledger says which success), error / failed (fail_closed), rate_limited.
	Outcome string `json:"outcome"`
	Text    string `json:"text,omitempty"`
	// Route is the route that served the answer (a key of the session's routes).
	Route        string `json:"route,omitempty"`
	Model        string `json:"model,omitempty"`
	OutputTokens int    `json:"output_tokens,omitempty"`
	LimitedBy    string `json:"limited_by,omitempty"`
}

// Route is one route of a case: the base URL an SDK takes and its dialect.
type Route struct {
	BaseURL string  `json:"base_url"`
	Dialect string  `json:"dialect"`
	Weight  float64 `json:"weight,omitempty"`
}

// Request is the case's request (LLMCHAOS_REQUEST).
type Request struct {
	Model       string `json:"model"`
	Prompt      string `json:"prompt"`
	Stream      bool   `json:"stream"`
	ToolCall    bool   `json:"tool_call"`
	Prefill     bool   `json:"prefill"`
	OperationID string `json:"operation_id"`
}

// Workflow is the case's budget and routing, unscaled (times run at the session's TimeScale).
type Workflow struct {
	Name             string   `json:"name"`
	Primary          string   `json:"primary"`
	Fallback         []string `json:"fallback"`
	MaxTotalAttempts int      `json:"max_total_attempts"`
	MaxElapsedMS     float64  `json:"max_elapsed_ms"`
	AttemptTimeoutMS float64  `json:"attempt_timeout_ms"`
	ReplaySafe       bool     `json:"replay_safe"`
	QueueAllowed     bool     `json:"queue_allowed"`
	DegradeAllowed   bool     `json:"degrade_allowed"`
	DegradeText      string   `json:"degrade_text"`
	OutputRequired   []string `json:"output_required"`
}

// Backoff is the case's retry backoff, unscaled.
type Backoff struct {
	BaseMS float64 `json:"base_ms"`
	CapMS  float64 `json:"cap_ms"`
}

// Policy is the case's policy (LLMCHAOS_POLICY_JSON); Raw holds every field.
type Policy struct {
	Workflow Workflow        `json:"workflow"`
	Backoff  Backoff         `json:"backoff"`
	Raw      json.RawMessage `json:"-"`
}

// Check is one check of the verdict.
type Check struct {
	Name    string `json:"name"`
	Passed  bool   `json:"passed"`
	Message string `json:"message"`
}

// Attempt is one ledger entry of the verdict's timeline.
type Attempt struct {
	Route   string  `json:"route"`
	Attempt int     `json:"attempt"`
	AtMS    float64 `json:"at_ms"`
	EndedMS float64 `json:"ended_ms"`
	Status  int     `json:"status"`
	Fault   string  `json:"fault"`
	Ended   string  `json:"ended"`
}

// Verdict is the checker's verdict over the session's ledger.
type Verdict struct {
	Verdict         string         `json:"verdict"` // pass, fail, unknown, n/a
	Case            string         `json:"case"`
	File            string         `json:"file"`
	Expected        string         `json:"expected"`
	Observed        string         `json:"observed"`
	ExpectedOutcome string         `json:"expected_outcome"`
	ObservedOutcome string         `json:"observed_outcome"`
	Actions         []string       `json:"actions"`
	Checks          []Check        `json:"checks"`
	Timeline        []Attempt      `json:"timeline"`
	Attempts        map[string]int `json:"attempts"`
	Summary         string         `json:"summary"`
	Reason          string         `json:"reason"`
	UnknownReason   string         `json:"unknown_reason"`
}

// Passed reports whether the verdict is a pass.
func (v Verdict) Passed() bool { return v.Verdict == "pass" }

// Failed returns the checks that did not pass.
func (v Verdict) Failed() []Check {
	var out []Check
	for _, c := range v.Checks {
		if !c.Passed {
			out = append(out, c)
		}
	}
	return out
}

// Message is the verdict in words: which case, the verdict, the expected and observed action, then each
// failed check with the checker's message on a line of its own.
func (v Verdict) Message() string {
	var b strings.Builder
	fmt.Fprintf(&b, "case %q", v.Case)
	if v.File != "" {
		fmt.Fprintf(&b, " (%s)", v.File)
	}
	fmt.Fprintf(&b, ": %s", v.Verdict)
	if v.UnknownReason != "" {
		fmt.Fprintf(&b, " (%s)", v.UnknownReason)
	}
	fmt.Fprintf(&b, ": expected %s, observed %s", v.Expected, v.Observed)
	if v.Reason != "" {
		fmt.Fprintf(&b, "; %s", v.Reason)
	}
	for _, c := range v.Failed() {
		fmt.Fprintf(&b, "\n  %s: %s", c.Name, c.Message)
	}
	return b.String()
}

// Session is one case played against the mock: what the code under test is given, and Finish.
type Session struct {
	ID        string           `json:"id"`
	Namespace string           `json:"namespace"`
	Name      string           `json:"case"`
	File      string           `json:"file"`
	Routes    map[string]Route `json:"routes"`
	Request   Request          `json:"request"`
	Policy    Policy           `json:"-"`
	Primary   string           `json:"primary"`
	Fallback  []string         `json:"fallback"`
	TimeScale float64          `json:"time_scale"`
	Requests  int              `json:"requests"`
	// OperationIDs: request N's Idempotency-Key (send it: a sequence's attempts are tied to their request by it).
	OperationIDs []string `json:"operation_ids"`
	IntervalMS   float64  `json:"interval_ms"`
	AliveAfter   bool     `json:"alive_after"`
	NotRun       string   `json:"not_run"`

	t      testing.TB
	server *Server
	ended  bool
}

// Case starts a session of the case file at path (relative to the test's directory) on the shared
// server, and ends it when the test ends. A missing binary, a server that does not start or a bad case
// (file:line:col) fails the test at once.
func Case(t testing.TB, path string) *Session {
	t.Helper()
	srv, err := Shared()
	if err != nil {
		t.Fatalf("llmchaostest: %v", err)
	}
	return CaseOn(t, srv, path)
}

// CaseOn is Case on a given server. On a server with a CasesDir (a container), a path inside it is
// sent relative to it (the server resolves it against its cases root), and a case outside it is sent
// as its TOML text (so a `policy = "..."` it names must then be inside the cases root too).
func CaseOn(t testing.TB, srv *Server, path string) *Session {
	t.Helper()
	casePath := absPath(path)
	if srv.CasesDir != "" {
		rel, err := filepath.Rel(srv.CasesDir, casePath)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			text, err := os.ReadFile(casePath)
			if err != nil {
				t.Fatalf("llmchaostest: case %s: %v", path, err)
			}
			return create(t, srv, "application/toml", text, path)
		}
		casePath = filepath.ToSlash(rel)
	}
	body, _ := json.Marshal(map[string]string{"case_path": casePath})
	return create(t, srv, "application/json", body, path)
}

// CaseText is Case for a case given as TOML text (errors name the pseudo file <session>).
func CaseText(t testing.TB, toml string) *Session {
	t.Helper()
	srv, err := Shared()
	if err != nil {
		t.Fatalf("llmchaostest: %v", err)
	}
	return create(t, srv, "application/toml", []byte(toml), "<session>")
}

// CaseTextOn is CaseText on a given server.
func CaseTextOn(t testing.TB, srv *Server, toml string) *Session {
	t.Helper()
	return create(t, srv, "application/toml", []byte(toml), "<session>")
}

func create(t testing.TB, srv *Server, contentType string, body []byte, what string) *Session {
	t.Helper()
	var raw json.RawMessage
	status, err := srv.do(http.MethodPost, "/__llmchaos/sessions", contentType, body, &raw)
	if err != nil {
		t.Fatalf("llmchaostest: case %s: %v", what, err)
	}
	if status != http.StatusCreated {
		t.Fatalf("llmchaostest: case %s: %s", what, apiError(status, raw))
	}
	s := &Session{t: t, server: srv}
	if err := json.Unmarshal(raw, s); err != nil {
		t.Fatalf("llmchaostest: case %s: the session's JSON: %v", what, err)
	}
	var withPolicy struct {
		Policy json.RawMessage `json:"policy"`
	}
	if err := json.Unmarshal(raw, &withPolicy); err == nil {
		s.Policy.Raw = withPolicy.Policy
		_ = json.Unmarshal(withPolicy.Policy, &s.Policy)
	}
	t.Cleanup(s.End)
	return s
}

// BaseURL is the base URL of route (what an SDK takes: openai .../v1); an unknown route fails the test.
func (s *Session) BaseURL(route string) string {
	s.t.Helper()
	r, ok := s.Routes[route]
	if !ok {
		names := make([]string, 0, len(s.Routes))
		for n := range s.Routes {
			names = append(names, n)
		}
		s.t.Fatalf("llmchaostest: case %q has no route %q (routes: %s)", s.Name, route, strings.Join(names, ", "))
	}
	return r.BaseURL
}

// Scaled is a time of the case (scripted ms) as the session plays it.
func (s *Session) Scaled(ms float64) time.Duration {
	return time.Duration(ms * s.TimeScale * float64(time.Millisecond))
}

// Alive asks for the alive_after probe (the routes turn healthy) and returns the probe's operation id;
// send one more request, then Finish with one more Seen.
func (s *Session) Alive() string {
	s.t.Helper()
	var out struct {
		OperationID string `json:"operation_id"`
	}
	var raw json.RawMessage
	status, err := s.server.do(http.MethodPost, "/__llmchaos/sessions/"+s.ID+"/alive", "", nil, &raw)
	if err == nil && status == http.StatusOK {
		err = json.Unmarshal(raw, &out)
	} else if err == nil {
		err = fmt.Errorf("%s", apiError(status, raw))
	}
	if err != nil {
		s.t.Fatalf("llmchaostest: case %q: alive: %v", s.Name, err)
	}
	return out.OperationID
}

// Judge returns the checker's verdict over what the code saw (one Seen per request, in order) without
// failing the test.
func (s *Session) Judge(seen ...Seen) (Verdict, error) {
	var body []byte
	if len(seen) == 1 {
		body, _ = json.Marshal(seen[0])
	} else {
		body, _ = json.Marshal(seen)
	}
	var raw json.RawMessage
	status, err := s.server.do(http.MethodPost, "/__llmchaos/sessions/"+s.ID+"/finish", "application/json", body, &raw)
	if err != nil {
		return Verdict{}, err
	}
	if status != http.StatusOK {
		return Verdict{}, fmt.Errorf("%s", apiError(status, raw))
	}
	var v Verdict
	err = json.Unmarshal(raw, &v)
	return v, err
}

// Finish judges what the code saw (one Seen per request, in order) and returns the verdict; a verdict
// other than pass fails the test with the checker's messages (n/a skips it: only a virtual clock can
// play the case).
func (s *Session) Finish(seen ...Seen) Verdict {
	s.t.Helper()
	v, err := s.Judge(seen...)
	if err != nil {
		s.t.Fatalf("llmchaostest: case %q: finish: %v", s.Name, err)
	}
	switch v.Verdict {
	case "pass":
	case "n/a":
		s.t.Skipf("llmchaostest: %s", v.Message())
	default:
		s.t.Errorf("llmchaostest: %s", v.Message())
	}
	return v
}

// End ends the session (DELETE); t.Cleanup calls it.
func (s *Session) End() {
	if s.ended {
		return
	}
	s.ended = true
	s.server.do(http.MethodDelete, "/__llmchaos/sessions/"+s.ID, "", nil, nil)
}

// SeenFrom is the Seen of one call of the code under test: its error makes it fail_closed, else a
// success served by route (the ledger says which success).
func SeenFrom(text, route, model string, err error) Seen {
	if err != nil {
		return Seen{Outcome: "fail_closed"}
	}
	return Seen{Outcome: "success", Text: text, Route: route, Model: model}
}

func (s *Server) do(method, path, contentType string, body []byte, out *json.RawMessage) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := s.call(ctx, method, path, contentType, bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("%s %s%s: %w", method, s.URL, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, err
	}
	if out != nil {
		*out = data
	}
	return resp.StatusCode, nil
}

func apiError(status int, raw json.RawMessage) string {
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(raw, &e) == nil && e.Error != "" {
		return fmt.Sprintf("%d: %s", status, e.Error)
	}
	return fmt.Sprintf("%d: %s", status, strings.TrimSpace(string(raw)))
}

// Reports is what WriteReports wrote.
type Reports struct {
	Written       []string `json:"written"`
	Cases         int      `json:"cases"`
	Passed        int      `json:"passed"`
	Failed        int      `json:"failed"`
	Unknown       int      `json:"unknown"`
	NotApplicable int      `json:"not_applicable"`
}

// WriteReports writes junit.xml, report.json, report.md and report.html of every case this server
// judged into dir (POST /__llmchaos/sessions/reports). On a server with a Backend (a container) the
// server writes them under its reports root (the image's /tmp) and they are copied out into dir; Written
// then names the copies.
func (s *Server) WriteReports(dir string) (Reports, error) {
	folder := absPath(dir)
	if err := os.MkdirAll(folder, 0o755); err != nil {
		return Reports{}, err
	}
	target := folder
	if s.Backend != nil {
		target = "llmchaostest-reports-" + NewToken()[:8] // relative: inside the server's reports root
	}
	body, _ := json.Marshal(map[string]string{"dir": target})
	var raw json.RawMessage
	status, err := s.do(http.MethodPost, "/__llmchaos/sessions/reports", "application/json", body, &raw)
	if err != nil {
		return Reports{}, err
	}
	if status != http.StatusOK {
		return Reports{}, fmt.Errorf("reports: %s", apiError(status, raw))
	}
	var r Reports
	if err := json.Unmarshal(raw, &r); err != nil {
		return Reports{}, err
	}
	if s.Backend != nil {
		for i, written := range r.Written {
			if !strings.HasPrefix(written, "/") {
				written = ContainerReportsDir + "/" + written
			}
			local := filepath.Join(folder, filepath.Base(written))
			if err := s.Backend.CopyOut(written, local); err != nil {
				return r, err
			}
			r.Written[i] = local
		}
	}
	return r, nil
}
