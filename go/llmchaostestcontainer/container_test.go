package llmchaostestcontainer

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/testcontainers/testcontainers-go"

	"llmchaos.example/llmchaostest"
)

// image is the image under test: LLMCHAOS_DOCKER_IMAGE, else DefaultImage; the tests skip without a
// Docker daemon or without the image (no registry is asked: it is built locally, scripts/image).
func image(t *testing.T) string {
	t.Helper()
	testcontainers.SkipIfProviderIsNotHealthy(t)
	img := os.Getenv("LLMCHAOS_DOCKER_IMAGE")
	if img == "" {
		img = DefaultImage
	}
	if err := exec.Command("docker", "image", "inspect", img).Run(); err != nil {
		t.Skipf("skipped: no local image %s (scripts/image builds it): %v", img, err)
	}
	return img
}

// chat sends one OpenAI chat completion to baseURL and returns the status and the answer's text.
func chat(t *testing.T, baseURL, operationID string) (int, string) {
	t.Helper()
	body := `{"model":"mock-model","messages":[{"role":"user","content":"classify this"}]}`
	req, _ := http.NewRequest(http.MethodPost, baseURL+"/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer sk-test") // the provider's key, not the admin token
	req.Header.Set("Idempotency-Key", operationID)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("chat: %v", err)
	}
	defer resp.Body.Close()
	var answer struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	json.NewDecoder(resp.Body).Decode(&answer)
	if len(answer.Choices) == 0 {
		return resp.StatusCode, ""
	}
	return resp.StatusCode, answer.Choices[0].Message.Content
}

// client is the code under test: on a 429 it retries the same route (naive) or, on a quota 429, goes
// to the next route (hardened).
func client(t *testing.T, c *llmchaostest.Session, hardened bool) llmchaostest.Seen {
	t.Helper()
	routes := append([]string{c.Primary}, c.Fallback...)
	for i, attempts := 0, 0; i < len(routes) && attempts < c.Policy.Workflow.MaxTotalAttempts; attempts++ {
		status, text := chat(t, c.BaseURL(routes[i]), c.Request.OperationID)
		if status == 200 {
			return llmchaostest.Seen{Outcome: "success", Text: text, Route: routes[i]}
		}
		if hardened || status != 429 {
			i++
		}
	}
	return llmchaostest.Seen{Outcome: "fail_closed"}
}

func TestHardenedClientPassesTheQuotaCase(t *testing.T) {
	image(t)
	ctr := RunT(t, WithCases("testdata/cases"))
	if ctr.Server.AdminToken == "" || ctr.Token != ctr.Server.AdminToken || len(ctr.Token) != 32 {
		t.Fatalf("a generated token per container, sent by the server's calls: %q / %q", ctr.Token, ctr.Server.AdminToken)
	}
	c := ctr.Case(t, "testdata/cases/quota-429-falls-back.toml") // sent as quota-429-falls-back.toml, its policy beside it in /cases
	if c.Policy.Workflow.MaxTotalAttempts != 3 || len(c.Fallback) != 1 {
		t.Fatalf("the case's policy (policies/quota.toml in /cases) was not read: %+v", c.Policy.Workflow)
	}
	if !strings.HasPrefix(c.BaseURL("primary"), ctr.Server.URL) {
		t.Fatalf("the routes should be reachable at the published port %s: %s", ctr.Server.URL, c.BaseURL("primary"))
	}
	v := c.Finish(client(t, c, true))
	if !v.Passed() || v.Attempts["primary"] != 1 || v.Attempts["backup"] != 1 {
		t.Fatalf("verdict %s attempts %v: %s", v.Verdict, v.Attempts, v.Message())
	}
}

func TestNaiveClientFailsTheQuotaCaseAndReportsComeOut(t *testing.T) {
	image(t)
	ctr := RunT(t, WithCases("testdata/cases"))
	c := ctr.Case(t, "testdata/cases/quota-429-falls-back.toml")
	v, err := c.Judge(client(t, c, false)) // Judge: the verdict without failing this test
	if err != nil {
		t.Fatal(err)
	}
	if v.Verdict != "fail" || v.Expected != "fallback" || v.Observed != "retry" {
		t.Fatalf("the naive client retried the quota 429: verdict %s expected %s observed %s", v.Verdict, v.Expected, v.Observed)
	}
	if !strings.Contains(v.Message(), "expect_attempts") {
		t.Fatalf("the verdict should name the failed check:\n%s", v.Message())
	}
	dir := t.TempDir()
	r, err := ctr.WriteReports(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Written) != 4 || r.Failed != 1 {
		t.Fatalf("reports: %+v", r)
	}
	for _, name := range []string{"junit.xml", "report.json", "report.md", "report.html"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || len(data) == 0 {
			t.Fatalf("%s was not copied out of the container: %v", name, err)
		}
	}
	if junit, _ := os.ReadFile(filepath.Join(dir, "junit.xml")); !strings.Contains(string(junit), "quota 429 falls back") {
		t.Fatalf("junit.xml should name the case:\n%s", junit)
	}
}

func TestAdminAPIRefusesWithoutTheToken(t *testing.T) {
	image(t)
	ctr := RunT(t, WithToken("sesame-0123456789"))
	if ctr.Token != "sesame-0123456789" {
		t.Fatalf("WithToken: %q", ctr.Token)
	}
	// call: the status of one admin call: a GET, or a POST of a TOML body, with the token when one is given.
	call := func(method, path, toml, token string) int {
		req, _ := http.NewRequest(method, ctr.Server.URL+path, strings.NewReader(toml))
		if toml != "" {
			req.Header.Set("Content-Type", "application/toml")
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	get := func(path, token string) int { return call(http.MethodGet, path, "", token) }
	post := func(token string) int { return call(http.MethodPost, "/__llmchaos/sessions", "name = \"x\"\n", token) }
	if got := get("/__llmchaos/ready", ""); got != 200 {
		t.Fatalf("/__llmchaos/ready is open: got %d", got)
	}
	if got := post(""); got != 401 {
		t.Fatalf("a session without the token: want 401, got %d", got)
	}
	if got := post("wrong"); got != 401 {
		t.Fatalf("a session with a wrong token: want 401, got %d", got)
	}
	// The catalog's own cases are in the image's /cases; the helper sends the token.
	c := llmchaostest.CaseTextOn(t, ctr.Server, `
name = "llmchaostestcontainer: healthy primary"
expect = "none"
expect_outcome = "primary_success"
expect_attempts = { primary = 1 }
[workflow]
primary = "primary"
max_total_attempts = 2
[route.primary]
dialect = "openai"
`)
	status, text := chat(t, c.BaseURL("primary"), c.Request.OperationID)
	if status != 200 {
		t.Fatalf("healthy primary answered %d", status)
	}
	c.Finish(llmchaostest.Seen{Outcome: "success", Text: text, Route: "primary"})
}

func TestTerminateRemovesTheContainer(t *testing.T) {
	img := image(t)
	ctx := context.Background()
	c, err := Run(ctx, img)
	if c != nil {
		testcontainers.CleanupContainer(t, c.DockerContainer)
	}
	if err != nil {
		t.Fatal(err)
	}
	id := c.GetContainerID()
	c.Server.Stop() // the helper's Stop goes through the container: terminated and removed
	if out, err := exec.Command("docker", "ps", "-aq", "--no-trunc", "--filter", "id="+id).Output(); err != nil || strings.TrimSpace(string(out)) != "" {
		t.Fatalf("container %s still there after Stop: %q %v", id, out, err)
	}
}
