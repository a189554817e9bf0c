package policy

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"syscall"
	"time"
)

// attemptWatch is one attempt's view of the connection: a RoundTripper around a fresh transport (a
// new connection per attempt: net/http replays a request carrying an Idempotency-Key on a reused
// connection the server reset, an attempt the policy would never see) that times the response headers,
// keeps the error answer's status, headers and body (whatever the library's error drops), and says
// whether a body failed to read to its end (a cut, a reset: the connection says so, not the library).
type attemptWatch struct {
	base          *http.Transport
	headerTimeout time.Duration
	onFirstSend   func()
	onHeaders     func()

	mu            sync.Mutex
	status        int
	header        http.Header
	body          string
	headerTimedUp bool
	bodyBroken    bool
	transport     TransportFailure
}

const errorBodyLimit = 64 << 10

func newAttemptWatch(headerTimeout time.Duration, onFirstSend, onHeaders func()) *attemptWatch {
	return &attemptWatch{base: http.DefaultTransport.(*http.Transport).Clone(), headerTimeout: headerTimeout,
		onFirstSend: onFirstSend, onHeaders: onHeaders}
}

func (w *attemptWatch) RoundTrip(req *http.Request) (*http.Response, error) {
	w.onFirstSend()
	ctx, cancel := context.WithCancel(req.Context())
	timer := time.AfterFunc(w.headerTimeout, func() {
		w.mu.Lock()
		w.headerTimedUp = true
		w.mu.Unlock()
		cancel()
	})
	res, err := w.base.RoundTrip(req.WithContext(ctx))
	timer.Stop()
	if err != nil {
		cancel()
		w.noteTransport(err)
		return nil, err
	}
	w.onHeaders()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.status, w.header = res.StatusCode, res.Header.Clone()
	if res.StatusCode >= 400 {
		b, _ := io.ReadAll(io.LimitReader(res.Body, errorBodyLimit))
		_ = res.Body.Close()
		cancel()
		w.body = string(b)
		res.Body = io.NopCloser(bytes.NewReader(b))
		return res, nil
	}
	res.Body = &watchedBody{rc: res.Body, cancel: cancel, broken: func() { w.mu.Lock(); w.bodyBroken = true; w.mu.Unlock() }}
	return res, nil
}

func (w *attemptWatch) noteTransport(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		w.transport = Refused
	case errors.Is(err, syscall.ECONNRESET):
		w.transport = Reset
	default:
		w.transport = Closed
	}
}

// facts is what the connection saw, for Classify.
func (w *attemptWatch) facts() Facts {
	w.mu.Lock()
	defer w.mu.Unlock()
	return Facts{HeaderTimeout: w.headerTimedUp, Status: w.status, Header: w.header, Body: w.body, Transport: w.transport}
}

func (w *attemptWatch) broken() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.bodyBroken
}

func (w *attemptWatch) close() { w.base.CloseIdleConnections() }

type watchedBody struct {
	rc     io.ReadCloser
	cancel context.CancelFunc
	broken func()
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		b.broken()
	}
	return n, err
}

func (b *watchedBody) Close() error {
	err := b.rc.Close()
	b.cancel()
	return err
}
