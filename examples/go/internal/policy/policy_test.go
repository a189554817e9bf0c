package policy

import (
	"net/http"
	"testing"
	"time"
)

var now = time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)

func header(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

func TestBudgetOfPolicyAndDefaults(t *testing.T) {
	b, err := BudgetOf(nil, 1)
	if err != nil || b.MaxAttempts != 2 || b.SLO != 8*time.Second || b.AttemptTimeout != 2*time.Second || b.ExpectedLatency("x") != 300*time.Millisecond {
		t.Fatalf("defaults %+v %v", b, err)
	}
	raw := `{"workflow":{"max_total_attempts":3,"max_elapsed_ms":30000,"attempt_timeout_ms":5000,"replay_safe":true},
	         "backoff":{"base_ms":100,"cap_ms":400},
	         "routes":[{"name":"primary","expected_latency_ms":1000},{"name":"backup","approved":false}]}`
	b, err = BudgetOf([]byte(raw), 0.5)
	if err != nil {
		t.Fatal(err)
	}
	if b.MaxAttempts != 3 || b.SLO != 15*time.Second || b.AttemptTimeout != 2500*time.Millisecond || !b.ReplaySafe ||
		b.BackoffBase != 50*time.Millisecond || b.BackoffCap != 200*time.Millisecond ||
		b.ExpectedLatency("primary") != 500*time.Millisecond || b.Approved("backup") || !b.Approved("primary") {
		t.Fatalf("%+v", b)
	}
	// The attempt timeout keeps its floor under a small scale.
	if b, _ = BudgetOf([]byte(raw), 0.1); b.AttemptTimeout != AttemptTimeoutFloor {
		t.Fatalf("floor: %v", b.AttemptTimeout)
	}
}

func TestClassifyStatus(t *testing.T) {
	cases := []struct {
		status int
		h      http.Header
		body   string
		owner  Owner
		commit Commit
	}{
		{429, header("retry-after", "3"), `{"error":{"type":"rate_limit_exceeded"}}`, Rate, None},
		{429, header(), `{"error":{"code":"insufficient_quota"}}`, Quota, None},
		{429, header("x-should-retry", "false"), `{}`, Quota, None},
		{402, header(), ``, Quota, None},
		{401, header(), ``, Auth, None},
		{403, header(), ``, Auth, None},
		{500, header(), `{"error":{"message":"server error"}}`, Unknown, Uncertain},
		{500, header(), `the context is too long`, Request, None},
		{503, header(), ``, Transient, None},
		{529, header(), `overloaded_error`, Transient, None},
		{503, header("x-should-retry", "false"), ``, Quota, None},
		{400, header(), `{"error":{"code":"content_filter"}}`, Policy, None},
		{400, header(), `{"error":{"message":"bad schema"}}`, Request, None},
	}
	for _, c := range cases {
		got := ClassifyStatus(c.status, c.h, c.body, now)
		if got.Owner != c.owner || got.Commit != c.commit {
			t.Errorf("%d %q: %+v, want %s/%s", c.status, c.body, got, c.owner, c.commit)
		}
	}
}

func TestRetryAfterForms(t *testing.T) {
	d := func(h http.Header) time.Duration {
		p := RetryAfter(h, now)
		if p == nil {
			return -1
		}
		return *p
	}
	if got := d(header("retry-after", "90")); got != 90*time.Second {
		t.Errorf("seconds: %v", got)
	}
	if got := d(header("retry-after", "9", "retry-after-ms", "8500")); got != 8500*time.Millisecond {
		t.Errorf("ms first: %v", got)
	}
	if got := d(header("retry-after", now.Add(20*time.Second).Format(http.TimeFormat))); got != 20*time.Second {
		t.Errorf("date: %v", got)
	}
	if got := d(header("retry-after", "soon")); got != -1 {
		t.Errorf("garbage: %v", got)
	}
	if got := d(header()); got != -1 {
		t.Errorf("none: %v", got)
	}
}

func TestClassifyFacts(t *testing.T) {
	cases := []struct {
		name   string
		f      Facts
		owner  Owner
		commit Commit
		silent bool
	}{
		{"cut after tokens", Facts{Truncated: true, Visible: 12, Status: 200}, Transient, Committed, false},
		{"cut before tokens", Facts{Opened: true, Status: 200, Err: "unexpected EOF"}, Transient, None, false},
		{"broken after tokens", Facts{Opened: true, Visible: 3, Status: 200, Err: "unexpected EOF"}, Transient, Committed, false},
		{"stall after tokens", Facts{IdleAborted: true, Opened: true, Visible: 3, Status: 200}, Transient, Committed, false},
		{"no headers in time", Facts{HeaderTimeout: true}, Unknown, Uncertain, true},
		{"reset", Facts{Transport: Reset}, Transient, None, false},
		{"refused", Facts{Transport: Refused}, Transient, None, false},
		{"silent close", Facts{Transport: Closed, Err: "EOF"}, Unknown, Uncertain, true},
		{"filtered", Facts{Filtered: true, Status: 200}, Policy, None, false},
		{"error answer", Facts{Status: 503, Header: header()}, Transient, None, false},
	}
	for _, c := range cases {
		got := Classify(c.f, now)
		if got.Owner != c.owner || got.Commit != c.commit || got.Silent != c.silent {
			t.Errorf("%s: %+v", c.name, got)
		}
	}
}

func budget(t *testing.T, raw string) Budget {
	b, err := BudgetOf([]byte(raw), 1)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecideInSpecOrder(t *testing.T) {
	b := budget(t, `{"workflow":{"max_total_attempts":3,"max_elapsed_ms":8000},"backoff":{"base_ms":200,"cap_ms":2000}}`)
	first := LoopState{Attempts: 1, Route: "primary", Next: "backup"}
	ra := func(d time.Duration) *time.Duration { return &d }
	cases := []struct {
		name string
		c    Class
		s    LoopState
		step Step
		wait time.Duration
	}{
		{"auth fails closed", Class{Owner: Auth, Commit: None}, first, FailClosed, 0},
		{"committed fails closed", Class{Owner: Transient, Commit: Committed}, first, FailClosed, 0},
		{"silent fails closed", Class{Owner: Unknown, Commit: Uncertain, Silent: true}, first, FailClosed, 0},
		{"bare 500 fails closed", Class{Owner: Unknown, Commit: Uncertain}, first, FailClosed, 0},
		{"rate retried after its hint", Class{Owner: Rate, Commit: None, RetryAfter: ra(3 * time.Second)}, first, Retry, 3 * time.Second},
		{"a hint past the SLO falls back", Class{Owner: Rate, Commit: None, RetryAfter: ra(20 * time.Second)}, first, Fallback, 0},
		{"a hint past the SLO, no fallback", Class{Owner: Rate, Commit: None, RetryAfter: ra(20 * time.Second)}, LoopState{Attempts: 1, Route: "primary"}, FailClosed, 0},
		{"quota falls back", Class{Owner: Quota, Commit: None}, first, Fallback, 0},
		{"transient retried with backoff", Class{Owner: Transient, Commit: None}, LoopState{Attempts: 2, RetriesOnRoute: 1, Route: "primary"}, Retry, 200 * time.Millisecond},
		{"attempts exhausted", Class{Owner: Transient, Commit: None}, LoopState{Attempts: 3, Route: "primary", Next: "backup"}, FailClosed, 0},
		{"no time left for the fallback", Class{Owner: Quota, Commit: None}, LoopState{Attempts: 1, Route: "primary", Next: "backup", Elapsed: 7900 * time.Millisecond}, FailClosed, 0},
	}
	for _, c := range cases {
		got := Decide(c.c, c.s, b, 0.5)
		if got.Step != c.step || got.Wait != c.wait {
			t.Errorf("%s: %+v", c.name, got)
		}
	}
}

func TestDecideReplaySafeRetriesASilence(t *testing.T) {
	b := budget(t, `{"workflow":{"max_total_attempts":2,"max_elapsed_ms":8000,"replay_safe":true}}`)
	got := Decide(Class{Owner: Unknown, Commit: Uncertain, Silent: true}, LoopState{Attempts: 1, Route: "primary"}, b, 0)
	if got.Step != Retry {
		t.Fatalf("%+v", got)
	}
	// A bare 500 answered: replay safety does not make it transient.
	if got = Decide(Class{Owner: Unknown, Commit: Uncertain}, LoopState{Attempts: 1, Route: "primary"}, b, 0); got.Step != FailClosed {
		t.Fatalf("%+v", got)
	}
}

func TestDecideBackoffIsCappedFullJitter(t *testing.T) {
	b := budget(t, `{"workflow":{"max_total_attempts":20,"max_elapsed_ms":60000},"backoff":{"base_ms":200,"cap_ms":2000}}`)
	got := Decide(Class{Owner: Transient, Commit: None}, LoopState{Attempts: 1, RetriesOnRoute: 10, Route: "primary"}, b, 0.999)
	if got.Step != Retry || got.Wait > 2*time.Second || got.Wait < 1990*time.Millisecond {
		t.Fatalf("%+v", got)
	}
}
