package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prose-store/prose/model"
)

// Transport retries and times provider requests. The providers above it
// send each request once through it, so the policy lives here, once, for
// every provider.
type Transport struct {
	Base       http.RoundTripper // nil: http.DefaultTransport
	MaxRetries int               // retries after the first attempt
	Timeout    time.Duration     // per attempt; 0: none
	Backoff    time.Duration     // first backoff; doubles per retry, capped at MaxBackoff
	// Sleep waits between attempts; nil waits on a timer, honouring ctx.
	Sleep func(ctx context.Context, d time.Duration) error
	// RateLimitWait caps the time one call spends waiting after 429s;
	// until it is spent a 429 is retried whatever MaxRetries says.
	RateLimitWait time.Duration

	// gate holds every call of this transport back while a 429 asks to
	// wait: one worker's rate limit slows the whole pool.
	gateMu sync.Mutex
	until  time.Time
}

// DefaultRateLimitWait is the most one call waits in total on 429s.
const DefaultRateLimitWait = 10 * time.Minute

// hold makes every call wait until at least until.
func (t *Transport) hold(until time.Time) {
	t.gateMu.Lock()
	defer t.gateMu.Unlock()
	if until.After(t.until) {
		t.until = until
	}
}

// held is how long a new attempt must wait for the pool's rate limit,
// unless the hold is the caller's own (mine: the end of the wait it
// already slept).
func (t *Transport) held(now, mine time.Time) (time.Duration, time.Time) {
	t.gateMu.Lock()
	defer t.gateMu.Unlock()
	if !t.until.After(mine) {
		return 0, mine
	}
	return max(t.until.Sub(now), 0), t.until
}

// MaxBackoff caps one wait, whatever Retry-After asks for.
const MaxBackoff = 60 * time.Second

// TimeoutError reports an attempt that took longer than the timeout.
type TimeoutError struct{ After time.Duration }

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("no answer within %s", e.After)
}

// MaxAnswer bounds the body of one provider answer: a body larger is
// refused while it is read, never held whole.
const MaxAnswer = 8 << 20

// TooLargeError reports an answer whose body passed MaxAnswer.
type TooLargeError struct{ Limit int64 }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the answer is larger than %d MiB", e.Limit>>20)
}

// Failure is where RoundTrip leaves the last unsuccessful answer of a call.
type Failure struct {
	Status   int
	Body     []byte
	Attempts int
	// Answer is the successful answer (a 2xx) a call ended with, should
	// the provider fail to read it: a 200 that is not the API's JSON (a web
	// page at a wrong base URL, a proxy's login form) is reported as what
	// came back, not as a failed connection.
	Answer *Answer
}

// Answer is a successful HTTP answer as it came back.
type Answer struct {
	Status      int
	ContentType string
	Body        []byte
}

type failureKey struct{}

// WithFailure returns a context under which RoundTrip records the last
// failed answer into f.
func WithFailure(ctx context.Context, f *Failure) context.Context {
	return context.WithValue(ctx, failureKey{}, f)
}

func (t *Transport) base() http.RoundTripper {
	if t.Base != nil {
		return t.Base
	}
	return http.DefaultTransport
}

// RoundTrip sends req, retrying as configured. The response body is read
// fully before it returns, so an attempt's timeout never cuts a body
// being read by the caller.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	fail, _ := req.Context().Value(failureKey{}).(*Failure)
	capWait := t.RateLimitWait
	if capWait <= 0 {
		capWait = DefaultRateLimitWait
	}
	var waited time.Duration // on 429s
	var mine time.Time       // the end of this call's own last 429 wait
	retries := 0
	for attempt := 0; ; attempt++ {
		if d, until := t.held(time.Now(), mine); d > 0 {
			if err := t.sleep(req.Context(), d); err != nil {
				return nil, err
			}
			mine = until
		}
		resp, err := t.attempt(req, body)
		if fail != nil {
			fail.Attempts = attempt + 1
		}
		if err != nil {
			if req.Context().Err() != nil {
				return nil, req.Context().Err()
			}
			var te *TimeoutError
			var tl *TooLargeError
			if errors.As(err, &te) || errors.As(err, &tl) || retries >= t.MaxRetries {
				return nil, err
			}
			if err := t.sleep(req.Context(), t.backoff(retries)); err != nil {
				return nil, err
			}
			retries++
			continue
		}
		if resp.StatusCode < 300 {
			if fail != nil {
				fail.Answer = &Answer{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), Body: peek(resp)}
			}
			return resp, nil
		}
		if fail != nil {
			fail.Status = resp.StatusCode
			fail.Body = peek(resp)
		}
		if !retryable(resp.StatusCode) {
			return resp, nil
		}
		wait, ok := retryAfter(resp.Header, time.Now())
		if !ok {
			wait = t.backoff(retries)
		}
		if resp.StatusCode == http.StatusTooManyRequests {
			// A rate limit is waited out, by the whole pool, up to the
			// cap; it does not use up the retries.
			if waited+wait > capWait || t.MaxRetries == 0 {
				return resp, nil
			}
			waited += wait
			mine = time.Now().Add(wait)
			t.hold(mine)
		} else {
			if retries >= t.MaxRetries {
				return resp, nil
			}
			retries++
		}
		if err := t.sleep(req.Context(), wait); err != nil {
			return nil, err
		}
	}
}

func (t *Transport) attempt(req *http.Request, body []byte) (*http.Response, error) {
	ctx, cancel := req.Context(), context.CancelFunc(func() {})
	if t.Timeout > 0 {
		ctx, cancel = context.WithTimeoutCause(ctx, t.Timeout, &TimeoutError{After: t.Timeout})
	}
	defer cancel()
	r := req.Clone(ctx)
	if body != nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		r.ContentLength = int64(len(body))
	}
	resp, err := t.base().RoundTrip(r)
	if err == nil {
		var data []byte
		data, err = io.ReadAll(io.LimitReader(resp.Body, MaxAnswer+1))
		resp.Body.Close()
		if err == nil && len(data) > MaxAnswer {
			return nil, &TooLargeError{Limit: MaxAnswer}
		}
		resp.Body = io.NopCloser(bytes.NewReader(data))
		resp.ContentLength = int64(len(data))
	}
	if err != nil {
		if cause := context.Cause(ctx); cause != nil && req.Context().Err() == nil {
			var te *TimeoutError
			if errors.As(cause, &te) {
				return nil, te
			}
		}
		return nil, err
	}
	return resp, nil
}

func peek(resp *http.Response) []byte {
	data, _ := io.ReadAll(resp.Body)
	resp.Body = io.NopCloser(bytes.NewReader(data))
	return data
}

func retryable(status int) bool {
	return status == http.StatusTooManyRequests || status >= 500
}

func (t *Transport) backoff(attempt int) time.Duration {
	d := t.Backoff
	if d <= 0 {
		d = 500 * time.Millisecond
	}
	for i := 0; i < attempt && d < MaxBackoff; i++ {
		d *= 2
	}
	return min(d, MaxBackoff)
}

// retryAfter reads retry-after-ms (OpenAI) or Retry-After (seconds or an
// HTTP date).
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if ms, err := strconv.ParseFloat(h.Get("Retry-After-Ms"), 64); err == nil && ms >= 0 {
		return min(time.Duration(ms*float64(time.Millisecond)), MaxBackoff), true
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return min(time.Duration(s*float64(time.Second)), MaxBackoff), true
	}
	if at, err := http.ParseTime(v); err == nil {
		return min(max(at.Sub(now), 0), MaxBackoff), true
	}
	return 0, false
}

func (t *Transport) sleep(ctx context.Context, d time.Duration) error {
	if t.Sleep != nil {
		return t.Sleep(ctx, d)
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// Client returns the HTTP client a provider opened with cfg uses.
func Client(cfg model.Config) *http.Client {
	var base http.RoundTripper
	if cfg.HTTPClient != nil {
		base = cfg.HTTPClient.Transport
	}
	retries := cfg.MaxRetries
	switch {
	case retries == 0:
		retries = model.DefaultMaxRetries
	case retries < 0:
		retries = 0
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = model.DefaultTimeout
	}
	return &http.Client{Transport: &Transport{Base: base, MaxRetries: retries, Timeout: timeout, Sleep: cfg.Sleep, RateLimitWait: cfg.RateLimitWait}}
}
