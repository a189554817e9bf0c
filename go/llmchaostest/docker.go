package llmchaostest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// Backend is a server that runs elsewhere than as a child of this process (a container): Stop and
// WriteReports go through it. The docker mode of Start (LLMCHAOS_DOCKER_IMAGE) sets one, and so does the
// Testcontainers module (go/llmchaostestcontainer).
type Backend interface {
	// Stop ends the server and removes what it ran in.
	Stop()
	// CopyOut copies the file at path, as the server sees it, to hostPath.
	CopyOut(path, hostPath string) error
}

// ContainerCasesDir is where the image reads cases (its LLMCHAOS_CASES_ROOT): a case path inside
// Server.CasesDir is sent relative to it.
const ContainerCasesDir = "/cases"

// ContainerReportsDir is the image's reports root (LLMCHAOS_REPORTS_ROOT): WriteReports on a container
// writes there, then copies the files out.
const ContainerReportsDir = "/tmp"

// DockerImage is the image Start runs the server from instead of the binary: Options.Image, else
// LLMCHAOS_DOCKER_IMAGE ("" runs the binary).
func DockerImage(opts Options) string {
	if opts.Image != "" {
		return opts.Image
	}
	return os.Getenv("LLMCHAOS_DOCKER_IMAGE")
}

// Available says why no server can be had ("" error: one can): LLMCHAOS_URL, LLMCHAOS_DOCKER_IMAGE
// with a docker CLI on PATH, or the binary. Tests skip on it.
func Available() error {
	if os.Getenv("LLMCHAOS_URL") != "" {
		return nil
	}
	if image := os.Getenv("LLMCHAOS_DOCKER_IMAGE"); image != "" {
		if _, err := exec.LookPath("docker"); err != nil {
			return fmt.Errorf("LLMCHAOS_DOCKER_IMAGE=%s but no docker CLI on PATH", image)
		}
		return nil
	}
	_, err := Binary()
	return err
}

// NewToken is a random admin token (32 hex digits).
func NewToken() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b[:])
}

// DefaultCasesDir is the folder a container sees at /cases when nothing names one: LLMCHAOS_CASES_DIR,
// else the module root (the nearest go.mod above the working directory, which go test sets to the
// package's folder), else the working directory.
func DefaultCasesDir() string {
	if dir := os.Getenv("LLMCHAOS_CASES_DIR"); dir != "" {
		return absPath(dir)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	for dir := wd; ; {
		if st, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil && !st.IsDir() {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return wd
		}
		dir = parent
	}
}

// dockerBackend is a container started by `docker run` (the docker CLI, no Go dependency): the CLI
// stays attached, so Pdeathsig's SIGTERM reaches it when the test binary dies and it proxies the
// signal to the container, which --rm then removes.
type dockerBackend struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
}

func (d *dockerBackend) Stop() {
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(5 * time.Second):
	}
	// A backstop whatever the signal did: the container must not outlive the tests.
	exec.Command("docker", "rm", "-f", d.name).Run()
	select {
	case <-d.done:
	case <-time.After(5 * time.Second):
		d.cmd.Process.Kill()
	}
}

func (d *dockerBackend) CopyOut(path, hostPath string) error {
	if out, err := exec.Command("docker", "cp", d.name+":"+path, hostPath).CombinedOutput(); err != nil {
		return fmt.Errorf("docker cp %s:%s: %v: %s", d.name, path, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// startDocker runs `llmchaos serve` from image with the docker CLI: port 8080 published on 127.0.0.1,
// a token (LLMCHAOS_ADMIN_TOKEN, else a random one) passed in the environment, the cases folder
// mounted read-only at /cases; it waits for the "listening on" line and GET /__llmchaos/ready 200.
func startDocker(image string, opts Options, extra []string, timeout time.Duration) (*Server, error) {
	if _, err := exec.LookPath("docker"); err != nil {
		return nil, fmt.Errorf("LLMCHAOS_DOCKER_IMAGE=%s: no docker CLI on PATH", image)
	}
	token := os.Getenv("LLMCHAOS_ADMIN_TOKEN")
	if token == "" {
		token = NewToken()
	}
	cases := opts.CasesDir
	if cases == "" {
		cases = DefaultCasesDir()
	}
	cases = absPath(cases)
	name := "llmchaostest-" + NewToken()[:12]
	args := []string{"run", "--rm", "--name", name, "--label", "llmchaostest=1",
		"-p", "127.0.0.1::8080", "-e", "LLMCHAOS_ADMIN_TOKEN",
		"-v", cases + ":" + ContainerCasesDir + ":ro",
		image, "serve", "--host", "0.0.0.0", "--port", "8080"}
	args = append(args, extra...)

	result := make(chan started, 1)
	go func() {
		runtime.LockOSThread() // as in startProcess: Pdeathsig follows the thread that started the CLI
		cmd := exec.Command("docker", args...)
		cmd.Env = append(os.Environ(), "LLMCHAOS_ADMIN_TOKEN="+token)
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			result <- started{err: err}
			return
		}
		backend := &dockerBackend{name: name, cmd: cmd, done: make(chan struct{})}
		srv := &Server{AdminToken: token, CasesDir: cases, Backend: backend, done: backend.done, stderr: &tailBuffer{}}
		cmd.Stderr = srv.stderr
		if err := cmd.Start(); err != nil {
			result <- started{err: fmt.Errorf("docker run: %w", err)}
			return
		}
		found := watchListening(stdout)
		go func() {
			cmd.Wait()
			close(backend.done)
		}()
		fail := func(format string, a ...any) {
			backend.Stop()
			result <- started{err: fmt.Errorf("docker run %s: %s: %s", image, fmt.Sprintf(format, a...), srv.stderr.String())}
		}
		deadline := time.Now().Add(timeout)
		select {
		case _, ok := <-found:
			if !ok {
				<-backend.done
				result <- started{err: fmt.Errorf("docker run %s exited before listening: %s", image, srv.stderr.String())}
				return
			}
		case <-time.After(timeout):
			fail("no \"listening on\" line within %s", timeout)
			return
		}
		out, err := exec.Command("docker", "port", name, "8080/tcp").Output()
		if err != nil {
			fail("docker port: %v", err)
			return
		}
		hostPort := strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
		srv.URL = "http://" + hostPort
		if err := WaitReady(srv.URL, deadline); err != nil {
			fail("%v", err)
			return
		}
		result <- started{srv: srv}
		<-backend.done
	}()
	r := <-result
	return r.srv, r.err
}

// WaitReady polls GET /__llmchaos/ready (open without the token) until 200 or the deadline.
func WaitReady(url string, deadline time.Time) error {
	var last error = errors.New("not tried")
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/__llmchaos/ready", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				cancel()
				return nil
			}
			last = fmt.Errorf("GET %s/__llmchaos/ready: %d", url, resp.StatusCode)
		} else {
			last = err
		}
		cancel()
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("not ready in time: %v", last)
}
