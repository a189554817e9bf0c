package policy

import (
	"math"
	"net/http"
	"regexp"
	"strconv"
	"time"
)

// Owner and commit state of a failure (SPEC sections 2 and 3).
type Owner string

const (
	Transient Owner = "transient"
	Rate      Owner = "rate"
	Quota     Owner = "quota"
	Request   Owner = "request"
	Auth      Owner = "auth"
	Policy    Owner = "policy"
	Unknown   Owner = "unknown"
)

type Commit string

const (
	None      Commit = "none"
	Committed Commit = "committed"
	Uncertain Commit = "unknown"
)

// Class is one failure's classification.
type Class struct {
	Owner      Owner
	Commit     Commit
	RetryAfter *time.Duration // the server's hint, when it sent one
	Silent     bool           // the request went out and no byte came back: a replay-safe workflow retries it
	Why        string
}

// TransportFailure is what the connection said when no HTTP answer came.
type TransportFailure int

const (
	NoTransportFailure TransportFailure = iota
	Refused                                // nothing was sent
	Reset                                  // RST before any response byte: nothing was answered, the server said so
	Closed                                 // any other end before a response byte (a silent hold that ended)
)

// Facts is everything one failed attempt left: the library's error kind (filtered, truncated) and what
// the connection saw (watch.go). Classify is a pure function of them.
type Facts struct {
	Filtered, Truncated        bool
	IdleAborted, HeaderTimeout bool
	Opened                     bool // a stream's headers came
	Visible                    int  // visible text chars received
	Status                     int  // the HTTP answer's status, 0: none came
	Header                     http.Header
	Body                       string // an error answer's body
	Transport                  TransportFailure
	Err                        string
}

var quotaText = regexp.MustCompile(`(?i)insufficient_quota|quota|billing|credit`)
var inputText = regexp.MustCompile(`(?i)context|too long|input`)
var policyText = regexp.MustCompile(`(?i)content.?(filter|policy)|refus|safety`)

func silent(why string) Class { return Class{Owner: Unknown, Commit: Uncertain, Silent: true, Why: why} }

func streamed(why string, visible int) Class {
	if visible > 0 {
		return Class{Owner: Transient, Commit: Committed, Why: why}
	}
	return Class{Owner: Transient, Commit: None, Why: why}
}

// Classify maps one failed attempt to its owner and commit state.
func Classify(f Facts, now time.Time) Class {
	answered := f.Status == http.StatusOK // a 200: what broke is its body
	switch {
	case f.Filtered:
		return Class{Owner: Policy, Commit: None, Why: "content-policy finish"}
	case f.Truncated:
		return streamed("stream ended early", f.Visible)
	case f.IdleAborted && (f.Opened || answered):
		return streamed("idle timeout after the headers", f.Visible)
	case f.IdleAborted || f.HeaderTimeout:
		return silent("no headers in time")
	case f.Status >= 400:
		return ClassifyStatus(f.Status, f.Header, f.Body, now)
	case f.Opened || answered:
		return streamed("stream broke: "+f.Err, f.Visible)
	case f.Transport == Refused:
		return Class{Owner: Transient, Commit: None, Why: "refused"}
	case f.Transport == Reset:
		return Class{Owner: Transient, Commit: None, Why: "reset before any byte"}
	}
	return silent("closed before any byte: " + f.Err)
}

// ClassifyStatus classifies an HTTP error answer.
func ClassifyStatus(status int, h http.Header, body string, now time.Time) Class {
	shouldRetry := h.Get("x-should-retry")
	ra := RetryAfter(h, now)
	s := strconv.Itoa(status)
	switch {
	case status == 402:
		return Class{Owner: Quota, Commit: None, Why: "402"}
	case status == 429 && (quotaText.MatchString(body) || shouldRetry == "false"):
		return Class{Owner: Quota, Commit: None, Why: "quota 429"}
	case status == 429:
		return Class{Owner: Rate, Commit: None, RetryAfter: ra, Why: "rate 429"}
	case status == 401 || status == 403:
		return Class{Owner: Auth, Commit: None, Why: s}
	case status == 500 && inputText.MatchString(body):
		return Class{Owner: Request, Commit: None, Why: "500 naming the input"}
	case status == 500:
		return Class{Owner: Unknown, Commit: Uncertain, Why: "bare 500"}
	case (status == 408 || status == 409 || status >= 500) && shouldRetry == "false":
		return Class{Owner: Quota, Commit: None, Why: s + ", x-should-retry false"}
	case status == 408 || status == 409 || status >= 500:
		return Class{Owner: Transient, Commit: None, RetryAfter: ra, Why: s}
	case policyText.MatchString(body):
		return Class{Owner: Policy, Commit: None, Why: s}
	}
	return Class{Owner: Request, Commit: None, Why: s}
}

// RetryAfter reads the server's hint: retry-after-ms, else retry-after in seconds or as an HTTP date.
func RetryAfter(h http.Header, now time.Time) *time.Duration {
	if v, err := strconv.ParseFloat(h.Get("retry-after-ms"), 64); err == nil && v >= 0 && !math.IsInf(v, 0) {
		d := time.Duration(v * float64(time.Millisecond))
		return &d
	}
	s := h.Get("retry-after")
	if s == "" {
		return nil
	}
	if v, err := strconv.ParseFloat(s, 64); err == nil && v >= 0 && !math.IsInf(v, 0) {
		d := time.Duration(v * float64(time.Second))
		return &d
	}
	if t, err := http.ParseTime(s); err == nil {
		d := max(0, t.Sub(now))
		return &d
	}
	return nil
}
