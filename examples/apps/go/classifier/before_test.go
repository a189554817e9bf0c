//go:build !before

package classifier

import (
	"os/exec"
	"strings"
	"testing"

	"llmchaos.example/llmchaostest"
)

// TestBeforeVersionFails runs the suite on the version before the fix (build tag `before`: every 429
// retried on its route) in a subprocess: it must fail, naming the case and the check.
func TestBeforeVersionFails(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test again in a subprocess")
	}
	if err := llmchaostest.Available(); err != nil {
		t.Skipf("skipped: %v", err)
	}
	cmd := exec.Command("go", "test", "-count=1", "-tags", "before", "-run", "TestCases", ".")
	out, err := cmd.CombinedOutput()
	text := string(out)
	if err == nil {
		t.Fatalf("the before version passed; it should fail on the quota case:\n%s", text)
	}
	for _, want := range []string{
		"--- FAIL: TestCases/quota-429-falls-back",
		`case "go app: quota 429 goes to the fallback, never retried"`,
		"action: expected fallback, observed retry",
		"expect_attempts",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the before version's failure should say %q:\n%s", want, text)
		}
	}
	// Only the quota case: the retries it keeps for rate limits and overloads are right.
	if strings.Count(text, "--- FAIL: TestCases/") != 1 {
		t.Errorf("exactly one case should fail before the fix:\n%s", text)
	}
}
