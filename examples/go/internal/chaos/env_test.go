package chaos

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func lookupFrom(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func baseEnv() map[string]string {
	return map[string]string{
		"LLMCHAOS_REQUEST":            `{"model":"mock-model","prompt":"classify this","stream":true,"operation_id":"op-1"}`,
		"LLMCHAOS_PRIMARY":            "primary",
		"LLMCHAOS_FALLBACK":           "backup,eu-west.2",
		"LLMCHAOS_PRIMARY_BASE_URL":   "http://127.0.0.1:1/ns/primary/v1",
		"LLMCHAOS_PRIMARY_DIALECT":    "openai",
		"LLMCHAOS_BACKUP_BASE_URL":    "http://127.0.0.1:1/ns/backup",
		"LLMCHAOS_BACKUP_DIALECT":     "anthropic",
		"LLMCHAOS_EU_WEST_2_BASE_URL": "http://127.0.0.1:1/ns/eu-west.2/v1",
		"LLMCHAOS_EU_WEST_2_DIALECT":  "openai",
	}
}

func TestReadEnvRoutesInPolicyOrder(t *testing.T) {
	env, err := ReadEnv(lookupFrom(baseEnv()))
	if err != nil {
		t.Fatal(err)
	}
	routes := env.Routes()
	if len(routes) != 3 || routes[0].Name != "primary" || routes[1].Dialect != "anthropic" || routes[2].BaseURL != "http://127.0.0.1:1/ns/eu-west.2/v1" {
		t.Fatalf("routes %+v", routes)
	}
	if !env.Request.Stream || env.Request.Model != "mock-model" || env.OperationID != "op-1" || env.TimeScale != 1 || env.PolicyJSON != nil {
		t.Fatalf("env %+v", env)
	}
}

func TestReadEnvOverridesAndPolicy(t *testing.T) {
	m := baseEnv()
	m["LLMCHAOS_OPERATION_ID"] = "op-2"
	m["LLMCHAOS_SDK_TIME_SCALE"] = "0.2"
	m["LLMCHAOS_POLICY_JSON"] = `{"workflow":{"max_total_attempts":3}}`
	env, err := ReadEnv(lookupFrom(m))
	if err != nil {
		t.Fatal(err)
	}
	if env.OperationID != "op-2" || env.TimeScale != 0.2 || string(env.PolicyJSON) != m["LLMCHAOS_POLICY_JSON"] {
		t.Fatalf("env %+v", env)
	}
}

func TestReadEnvNamesWhatIsMissing(t *testing.T) {
	m := baseEnv()
	delete(m, "LLMCHAOS_BACKUP_DIALECT")
	delete(m, "LLMCHAOS_REQUEST")
	_, err := ReadEnv(lookupFrom(m))
	if err == nil || !strings.Contains(err.Error(), "LLMCHAOS_BACKUP_DIALECT") || !strings.Contains(err.Error(), "LLMCHAOS_REQUEST") {
		t.Fatalf("err %v", err)
	}
	m = baseEnv()
	m["LLMCHAOS_POLICY_JSON"] = "{not json"
	if _, err := ReadEnv(lookupFrom(m)); err == nil {
		t.Fatal("a bad policy JSON was accepted")
	}
}

func TestReportIsOneJSONLine(t *testing.T) {
	var buf bytes.Buffer
	if err := Report(&buf, "retry_recovery", "primary", Answer{Text: "a \"b\"", Model: "m", OutputTokens: 7}); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil || !strings.HasSuffix(buf.String(), "}\n") {
		t.Fatalf("%q: %v", buf.String(), err)
	}
	if got["outcome"] != "retry_recovery" || got["route"] != "primary" || got["text"] != "a \"b\"" || got["output_tokens"] != 7.0 {
		t.Fatalf("%v", got)
	}
	buf.Reset()
	_ = Report(&buf, "fail_closed", "", Answer{})
	if strings.Contains(buf.String(), "route") {
		t.Fatalf("a failure names no route: %q", buf.String())
	}
}

func TestFilteredReasons(t *testing.T) {
	for reason, want := range map[string]bool{"content_filter": true, "refusal": true, "SAFETY": true, "stop": false, "end_turn": false, "": false} {
		if got := (Answer{FinishReason: reason}).Filtered(); got != want {
			t.Errorf("%q: %v", reason, got)
		}
	}
}
