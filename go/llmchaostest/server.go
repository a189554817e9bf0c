package llmchaostest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Server is one running `llmchaos serve` (or the one at LLMCHAOS_URL).
type Server struct {
	// URL is the server's base URL, "http://127.0.0.1:PORT".
	URL string
	// AdminToken is sent with every session call when set (LLMCHAOS_ADMIN_TOKEN).
	AdminToken string
	// CasesDir, when set, is the host folder the server sees as its cases root (a container's /cases):
	// Case sends a path inside it relative to it, and the text of a case outside it.
	CasesDir string
	// Backend, when set, runs the server (a container): Stop and WriteReports go through it.
	Backend Backend

	cmd    *exec.Cmd
	done   chan struct{}
	stderr *tailBuffer
}

// Binary returns the llmchaos binary: LLMCHAOS_BIN, else `llmchaos` on PATH.
func Binary() (string, error) {
	if bin := os.Getenv("LLMCHAOS_BIN"); bin != "" {
		if st, err := os.Stat(bin); err != nil || st.IsDir() {
			return "", fmt.Errorf("LLMCHAOS_BIN=%s: not a file", bin)
		}
		return bin, nil
	}
	bin, err := exec.LookPath("llmchaos")
	if err != nil {
		return "", errors.New("no llmchaos binary: put llmchaos on PATH, or set LLMCHAOS_BIN=/path/to/llmchaos (or LLMCHAOS_URL to use a running `llmchaos serve`)")
	}
	return bin, nil
}

// Options of a server Start starts.
type Options struct {
	// TimeScale is passed as --time-scale (0: LLMCHAOS_TIME_SCALE, else 1): every delay and budget of a
	// case runs at scripted ms x TimeScale.
	TimeScale float64
	// Seed is passed as --seed.
	Seed uint64
	// SessionTTL is passed as --session-ttl (0: the server's default).
	SessionTTL time.Duration
	// StartTimeout bounds the wait for the "listening on" line (0: 15 s; from an image, which also
	// waits for GET /__llmchaos/ready: 3 min, for a loaded 2-core CI runner).
	StartTimeout time.Duration
	// Image runs the server from this image with the docker CLI instead of the binary (""
	// LLMCHAOS_DOCKER_IMAGE; both empty: the binary).
	Image string
	// CasesDir is the host folder mounted read-only at the container's /cases (from an image only; "":
	// DefaultCasesDir()).
	CasesDir string
}

// Start starts `llmchaos serve --port 0` and waits for its "listening on http://..." line. The server
// dies with this process (SIGTERM when it exits), and Stop ends it earlier. With an image
// (Options.Image or LLMCHAOS_DOCKER_IMAGE) it runs `docker run IMAGE serve --host 0.0.0.0 --port 8080`
// instead (startDocker), with a token and the cases folder at /cases.
func Start(opts Options) (*Server, error) {
	var args []string
	scale := opts.TimeScale
	if scale == 0 {
		if env := os.Getenv("LLMCHAOS_TIME_SCALE"); env != "" {
			if _, err := fmt.Sscanf(env, "%g", &scale); err != nil || scale <= 0 {
				return nil, fmt.Errorf("LLMCHAOS_TIME_SCALE=%q: not a positive number", env)
			}
		}
	}
	if scale > 0 {
		args = append(args, "--time-scale", fmt.Sprint(scale))
	}
	if opts.Seed != 0 {
		args = append(args, "--seed", fmt.Sprint(opts.Seed))
	}
	if opts.SessionTTL > 0 {
		args = append(args, "--session-ttl", fmt.Sprint(opts.SessionTTL.Seconds()))
	}
	if image := DockerImage(opts); image != "" {
		timeout := opts.StartTimeout
		if timeout == 0 {
			timeout = 3 * time.Minute
		}
		return startDocker(image, opts, args, timeout)
	}
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	// The test's own server on loopback reads the case files and writes the reports the test names,
	// wherever they are (as the test itself may): its roots are the filesystem's.
	args = append([]string{"serve", "--port", "0", "--cases-root", "/", "--reports-root", "/"}, args...)
	token := os.Getenv("LLMCHAOS_ADMIN_TOKEN")
	if token != "" {
		args = append(args, "--admin-token", token)
	}
	timeout := opts.StartTimeout
	if timeout == 0 {
		timeout = 15 * time.Second
	}
	return startProcess(bin, args, token, timeout)
}

type started struct {
	srv *Server
	err error
}

// startProcess starts the binary on a goroutine that keeps its OS thread for the life of the process:
// Pdeathsig fires when the thread that started the child ends, so that thread must outlive the tests.
func startProcess(bin string, args []string, token string, timeout time.Duration) (*Server, error) {
	result := make(chan started, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine, after the server
		cmd := exec.Command(bin, args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			result <- started{err: err}
			return
		}
		srv := &Server{AdminToken: token, cmd: cmd, done: make(chan struct{}), stderr: &tailBuffer{}}
		cmd.Stderr = srv.stderr
		if err := cmd.Start(); err != nil {
			result <- started{err: fmt.Errorf("%s: %w", bin, err)}
			return
		}
		found := watchListening(stdout)
		go func() {
			cmd.Wait()
			close(srv.done)
		}()
		select {
		case url, ok := <-found:
			if !ok {
				<-srv.done
				result <- started{err: fmt.Errorf("%s %s exited before listening: %s", bin, strings.Join(args, " "), srv.stderr.String())}
				return
			}
			srv.URL = url
			result <- started{srv: srv}
		case <-time.After(timeout):
			cmd.Process.Kill()
			result <- started{err: fmt.Errorf("%s %s: no \"listening on\" line within %s: %s", bin, strings.Join(args, " "), timeout, srv.stderr.String())}
			return
		}
		<-srv.done
	}()
	r := <-result
	return r.srv, r.err
}

// Stop ends a server Start started (SIGTERM, then SIGKILL after 3 s; a container is removed); a no-op
// for LLMCHAOS_URL's.
func (s *Server) Stop() {
	if s != nil && s.Backend != nil {
		s.Backend.Stop()
		return
	}
	if s == nil || s.cmd == nil || s.cmd.Process == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(3 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
}

var (
	sharedOnce   sync.Once
	sharedServer *Server
	sharedErr    error
)

// Shared returns the server every Case of this test binary uses: LLMCHAOS_URL when set, else one
// `llmchaos serve --port 0` started on first use (Options from the environment), or a container of
// LLMCHAOS_DOCKER_IMAGE when that is set.
func Shared() (*Server, error) {
	sharedOnce.Do(func() {
		if url := os.Getenv("LLMCHAOS_URL"); url != "" {
			sharedServer = &Server{URL: strings.TrimRight(url, "/"), AdminToken: os.Getenv("LLMCHAOS_ADMIN_TOKEN")}
			return
		}
		sharedServer, sharedErr = Start(Options{})
	})
	return sharedServer, sharedErr
}

// Main runs the tests and then stops the shared server: `func TestMain(m *testing.M) { os.Exit(llmchaostest.Main(m)) }`.
// Optional: without it the server still ends with the test binary.
func Main(m interface{ Run() int }) int {
	code := m.Run()
	if sharedServer != nil {
		sharedServer.Stop()
	}
	return code
}

func (s *Server) call(ctx context.Context, method, path, contentType string, body io.Reader) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, s.URL+path, body)
	if err != nil {
		return nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if s.AdminToken != "" {
		req.Header.Set("Authorization", "Bearer "+s.AdminToken)
	}
	return http.DefaultClient.Do(req)
}

func absPath(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// tailBuffer keeps the last 4 KiB a process wrote (its stderr, for errors).
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if len(b.buf) > 4096 {
		b.buf = b.buf[len(b.buf)-4096:]
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.TrimSpace(string(b.buf))
}

// watchListening reads a server's stdout to its end: the URL of its first "listening on URL" line
// arrives on the channel, which is closed without one when the output ends first.
func watchListening(stdout io.Reader) <-chan string {
	found := make(chan string, 1)
	go func() {
		lines := bufio.NewScanner(stdout)
		sent := false
		for lines.Scan() {
			if url, ok := strings.CutPrefix(lines.Text(), "listening on "); ok && !sent {
				found <- strings.TrimSpace(url)
				sent = true
			}
		}
		if !sent {
			close(found)
		}
		io.Copy(io.Discard, stdout)
	}()
	return found
}
