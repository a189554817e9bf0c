// Package llmchaostestcontainer runs llmchaos from its image with testcontainers-go and hands back the
// Go helper's own objects: a *llmchaostest.Server, so Case(t, PATH), BaseURL(route), Finish(...) and
// the verdicts work exactly as with the binary.
//
//	func TestQuotaFallsBack(t *testing.T) {
//		ctr := llmchaostestcontainer.RunT(t, llmchaostestcontainer.WithCases("cases"))
//		c := ctr.Case(t, "cases/quota-429-falls-back.toml")
//		answer, err := myclient.Classify(c.BaseURL("primary"), c.BaseURL("backup"), c.Request.Prompt)
//		c.Finish(llmchaostest.SeenFrom(answer.Text, answer.Route, answer.Model, err))
//	}
//
// The container: the image (DefaultImage, or the one given), port 8080 published, a random admin token
// in LLMCHAOS_ADMIN_TOKEN (every session call sends it), the case folder copied to /cases before it
// starts, and a wait for the line "listening on http://" and GET /__llmchaos/ready 200 (3 minutes: a
// loaded 2-core CI runner). Where Ryuk cannot run, set TESTCONTAINERS_RYUK_DISABLED=true: RunT's
// cleanup (or Terminate) removes the container either way.
package llmchaostestcontainer

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"

	"llmchaos.example/llmchaostest"
)

// DefaultImage is the image Run starts when none is given: the helper's own version.
const DefaultImage = "llmchaos:0.1.0"

// Port is the port the image's server listens on.
const Port = "8080/tcp"

// StartupTimeout bounds the wait for the readiness line and GET /__llmchaos/ready.
const StartupTimeout = 3 * time.Minute

// Container is a running llmchaos container.
type Container struct {
	*testcontainers.DockerContainer
	// Server is the Go helper's server: hand it to llmchaostest.CaseOn, or use Case.
	Server *llmchaostest.Server
	// Token is the admin token the container was started with.
	Token string
	// CasesDir is the host folder copied to /cases ("" when none was).
	CasesDir string
}

type settings struct {
	token     string
	cases     string
	timeScale float64
	seed      uint64
	ttl       time.Duration
	args      []string
	timeout   time.Duration
}

// Option is an llmchaos option; Run also takes any testcontainers.ContainerCustomizer.
type Option func(*settings)

// Customize makes an Option a testcontainers.ContainerCustomizer (Run reads it, the request is untouched).
func (o Option) Customize(*testcontainers.GenericContainerRequest) error { return nil }

// WithCases copies the folder dir (its files and subfolders) to the container's /cases before it
// starts; a Case path inside dir is sent relative to it.
func WithCases(dir string) Option { return func(s *settings) { s.cases = dir } }

// WithToken sets the admin token (default: LLMCHAOS_ADMIN_TOKEN, else a random one per container).
func WithToken(token string) Option { return func(s *settings) { s.token = token } }

// WithTimeScale passes --time-scale (0: LLMCHAOS_TIME_SCALE, else none).
func WithTimeScale(scale float64) Option { return func(s *settings) { s.timeScale = scale } }

// WithSeed passes --seed.
func WithSeed(seed uint64) Option { return func(s *settings) { s.seed = seed } }

// WithSessionTTL passes --session-ttl.
func WithSessionTTL(ttl time.Duration) Option { return func(s *settings) { s.ttl = ttl } }

// WithArgs appends more `llmchaos serve` arguments.
func WithArgs(args ...string) Option { return func(s *settings) { s.args = append(s.args, args...) } }

// WithStartupTimeout replaces StartupTimeout.
func WithStartupTimeout(d time.Duration) Option { return func(s *settings) { s.timeout = d } }

// Run starts the image img ("": LLMCHAOS_DOCKER_IMAGE, else DefaultImage) with the llmchaos Options and
// testcontainers customizers given, and waits until it is ready. On an error after the container was
// created it returns the container too: terminate it (testcontainers.CleanupContainer does).
func Run(ctx context.Context, img string, opts ...testcontainers.ContainerCustomizer) (*Container, error) {
	if img == "" {
		img = os.Getenv("LLMCHAOS_DOCKER_IMAGE")
	}
	if img == "" {
		img = DefaultImage
	}
	s := settings{token: os.Getenv("LLMCHAOS_ADMIN_TOKEN"), timeout: StartupTimeout}
	var customizers []testcontainers.ContainerCustomizer
	for _, opt := range opts {
		if o, ok := opt.(Option); ok {
			o(&s)
		} else {
			customizers = append(customizers, opt)
		}
	}
	if s.token == "" {
		s.token = llmchaostest.NewToken()
	}
	cmd := []string{"serve", "--host", "0.0.0.0", "--port", "8080"}
	scale := s.timeScale
	if scale == 0 {
		if env := os.Getenv("LLMCHAOS_TIME_SCALE"); env != "" {
			if _, err := fmt.Sscanf(env, "%g", &scale); err != nil || scale <= 0 {
				return nil, fmt.Errorf("LLMCHAOS_TIME_SCALE=%q: not a positive number", env)
			}
		}
	}
	if scale > 0 {
		cmd = append(cmd, "--time-scale", fmt.Sprint(scale))
	}
	if s.seed != 0 {
		cmd = append(cmd, "--seed", fmt.Sprint(s.seed))
	}
	if s.ttl > 0 {
		cmd = append(cmd, "--session-ttl", fmt.Sprint(s.ttl.Seconds()))
	}
	cmd = append(cmd, s.args...)

	base := []testcontainers.ContainerCustomizer{
		testcontainers.WithExposedPorts(Port),
		testcontainers.WithHostConfigModifier(publishOn(hostIP())),
		testcontainers.WithEnv(map[string]string{"LLMCHAOS_ADMIN_TOKEN": s.token}),
		testcontainers.WithCmd(cmd...),
		testcontainers.WithLabels(map[string]string{"llmchaostest": "1"}),
		testcontainers.WithWaitStrategy(wait.ForAll(
			wait.ForLog("listening on http://"),
			readyStrategy{},
		).WithDeadline(s.timeout)),
	}
	casesDir := ""
	if s.cases != "" {
		abs, err := filepath.Abs(s.cases)
		if err != nil {
			return nil, err
		}
		files, err := caseFiles(abs)
		if err != nil {
			return nil, err
		}
		casesDir = abs
		base = append(base, testcontainers.WithFiles(files...))
	}
	ctr, err := testcontainers.Run(ctx, img, append(base, customizers...)...)
	var c *Container
	if ctr != nil {
		c = &Container{DockerContainer: ctr, Token: s.token, CasesDir: casesDir}
	}
	if err != nil {
		return c, fmt.Errorf("llmchaos container (%s): %w", img, err)
	}
	endpoint, err := endpointOf(ctx, ctr)
	if err != nil {
		return c, err
	}
	c.Server = &llmchaostest.Server{URL: endpoint, AdminToken: s.token, CasesDir: casesDir, Backend: backend{c}}
	return c, nil
}

// RunT is Run for a test: the container is removed when the test ends (Ryuk or not) and an error fails
// the test at once.
func RunT(t testing.TB, opts ...testcontainers.ContainerCustomizer) *Container {
	t.Helper()
	c, err := Run(context.Background(), "", opts...)
	if c != nil {
		testcontainers.CleanupContainer(t, c.DockerContainer)
	}
	if err != nil {
		t.Fatalf("llmchaostestcontainer: %v", err)
	}
	return c
}

// Case is llmchaostest.CaseOn on this container's server: a session of the case at path, ended when
// the test ends.
func (c *Container) Case(t testing.TB, path string) *llmchaostest.Session {
	t.Helper()
	return llmchaostest.CaseOn(t, c.Server, path)
}

// WriteReports writes the four reports of every case the container judged into the host folder dir.
func (c *Container) WriteReports(dir string) (llmchaostest.Reports, error) {
	return c.Server.WriteReports(dir)
}

// hostIP is the address 8080 is published on: 127.0.0.1 for a local daemon (no DOCKER_HOST, or a unix
// socket), else 0.0.0.0. Always one IPv4 address: left to itself, Docker 20.10 without iptables maps
// 0.0.0.0 and [::] to two different host ports, and the port testcontainers reads may be the IPv6 one.
func hostIP() netip.Addr {
	if h := os.Getenv("DOCKER_HOST"); h == "" || strings.HasPrefix(h, "unix://") {
		return netip.MustParseAddr("127.0.0.1")
	}
	return netip.MustParseAddr("0.0.0.0")
}

// host is where the published port is reached: TESTCONTAINERS_HOST_OVERRIDE, else 127.0.0.1 for a
// local daemon (where the port is published), else what testcontainers makes of the daemon's address.
// (Inside a sandbox, testcontainers-go would take the default gateway for a unix socket's daemon, which
// does not reach 127.0.0.1.)
func host(ctx context.Context, target wait.StrategyTarget) (string, error) {
	if h := os.Getenv("TESTCONTAINERS_HOST_OVERRIDE"); h != "" {
		return h, nil
	}
	if ip := hostIP(); ip.IsLoopback() {
		return ip.String(), nil
	}
	return target.Host(ctx)
}

func endpointOf(ctx context.Context, target wait.StrategyTarget) (string, error) {
	h, err := host(ctx, target)
	if err != nil {
		return "", err
	}
	port, err := target.MappedPort(ctx, Port)
	if err != nil {
		return "", err
	}
	return "http://" + net.JoinHostPort(h, port.Port()), nil
}

// readyStrategy waits for GET /__llmchaos/ready 200 at endpointOf (the ForAll's deadline bounds it).
type readyStrategy struct{}

func (readyStrategy) String() string { return "GET /__llmchaos/ready 200" }

func (readyStrategy) WaitUntilReady(ctx context.Context, target wait.StrategyTarget) error {
	url, err := endpointOf(ctx, target)
	if err != nil {
		return err
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(StartupTimeout)
	}
	return llmchaostest.WaitReady(url, deadline)
}

func publishOn(ip netip.Addr) func(*container.HostConfig) {
	return func(hc *container.HostConfig) {
		if hc.PortBindings == nil {
			hc.PortBindings = network.PortMap{}
		}
		hc.PortBindings[network.MustParsePort(Port)] = []network.PortBinding{{HostIP: ip, HostPort: "0"}}
	}
}

// caseFiles lists every file under dir as a copy to /cases/<its path under dir> (world-readable: the
// image runs as uid 65532).
func caseFiles(dir string) ([]testcontainers.ContainerFile, error) {
	var files []testcontainers.ContainerFile
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !d.Type().IsRegular() {
			return nil // symlinks and the like: not copied
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		files = append(files, testcontainers.ContainerFile{
			HostFilePath:      p,
			ContainerFilePath: path.Join(llmchaostest.ContainerCasesDir, filepath.ToSlash(rel)),
			FileMode:          0o644,
		})
		return nil
	})
	if err == nil && len(files) == 0 {
		err = fmt.Errorf("WithCases(%s): no files in it", dir)
	}
	return files, err
}

// backend is the helper's Backend over the container: Stop terminates it, CopyOut copies a file out.
type backend struct{ c *Container }

func (b backend) Stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b.c.Terminate(ctx)
}

func (b backend) CopyOut(from, to string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := b.c.CopyFileFromContainer(ctx, from)
	if err != nil {
		return fmt.Errorf("copy %s out of the container: %w", from, err)
	}
	defer r.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, r); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
