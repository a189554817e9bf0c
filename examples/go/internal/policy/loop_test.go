package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"llmchaos.example/goclients/internal/chaos"
)

// plainAttempt is a minimal library: one POST through the loop's client, the body read whole (its text
// visible as it arrives), an error status as an error.
func plainAttempt(ctx context.Context, route chaos.Route, h Hooks) (chaos.Answer, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, route.BaseURL, strings.NewReader("{}"))
	res, err := h.HTTPClient.Do(req)
	if err != nil {
		return chaos.Answer{}, err
	}
	defer res.Body.Close()
	if res.StatusCode >= 400 {
		return chaos.Answer{}, fmt.Errorf("status %d", res.StatusCode)
	}
	var text bytes.Buffer
	buf := make([]byte, 64)
	for {
		n, err := res.Body.Read(buf)
		text.Write(buf[:n])
		h.OnText(string(buf[:n]))
		if err == io.EOF {
			return chaos.Answer{Text: text.String(), FinishReason: "stop"}, nil
		}
		if err != nil {
			return chaos.Answer{}, err
		}
	}
}

func runAgainst(t *testing.T, policy string, handler func(n int32, w http.ResponseWriter)) (map[string]any, int, int32) {
	t.Helper()
	var count atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler(count.Add(1), w) }))
	defer srv.Close()
	env := chaos.Env{Primary: chaos.Route{Name: "primary", BaseURL: srv.URL, Dialect: "openai"}, TimeScale: 1, PolicyJSON: []byte(policy)}
	var out, log bytes.Buffer
	code := Run(env, env.Routes(), plainAttempt, &out, &log)
	var line map[string]any
	if err := json.Unmarshal(out.Bytes(), &line); err != nil {
		t.Fatalf("last line %q: %v (log %s)", out.String(), err, log.String())
	}
	return line, code, count.Load()
}

const twoAttempts = `{"workflow":{"max_total_attempts":2,"max_elapsed_ms":8000},"backoff":{"base_ms":10,"cap_ms":20}}`

func TestRunRetriesA503(t *testing.T) {
	line, code, n := runAgainst(t, twoAttempts, func(n int32, w http.ResponseWriter) {
		if n == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "whole answer")
	})
	if code != 0 || n != 2 || line["outcome"] != "retry_recovery" || line["text"] != "whole answer" {
		t.Fatalf("code %d, %d requests, %v", code, n, line)
	}
}

func TestRunFailsClosedOnACutAfterVisibleText(t *testing.T) {
	line, code, n := runAgainst(t, twoAttempts, func(_ int32, w http.ResponseWriter) {
		w.Header().Set("Content-Length", "100") // promised, then cut: the body breaks mid answer
		fmt.Fprint(w, "half an ans")
		w.(http.Flusher).Flush()
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	})
	if code != 1 || n != 1 || line["outcome"] != "fail_closed" {
		t.Fatalf("code %d, %d requests, %v", code, n, line)
	}
}

func TestRunNoHeadersInTimeIsSilent(t *testing.T) {
	hold := func(n int32, w http.ResponseWriter) {
		if n == 1 {
			time.Sleep(AttemptTimeoutFloor + 500*time.Millisecond)
		}
		fmt.Fprint(w, "late")
	}
	// Commit unknown: fail closed, unless the workflow is replay-safe.
	if line, code, n := runAgainst(t, twoAttempts, hold); code != 1 || n != 1 || line["outcome"] != "fail_closed" {
		t.Fatalf("code %d, %d requests, %v", code, n, line)
	}
	replaySafe := `{"workflow":{"max_total_attempts":2,"max_elapsed_ms":8000,"replay_safe":true},"backoff":{"base_ms":10,"cap_ms":20}}`
	if line, code, n := runAgainst(t, replaySafe, hold); code != 0 || n != 2 || line["outcome"] != "retry_recovery" {
		t.Fatalf("replay-safe: code %d, %d requests, %v", code, n, line)
	}
}
