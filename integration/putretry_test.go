package integration

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cloudmem/cloudmem/blob"
)

// Each object-store server's PutRetry test proves that a conditional Put
// whose first attempt landed is not reported as a conflict when the SDK
// retries it: a lostAnswer lets the first upload reach the server, then
// shows the SDK a server error instead of the answer, so the SDK sends the
// upload again and the server refuses it, its condition failing against
// our own write. checkPutRetry runs the writes; the servers differ in the
// method of an upload and the statuses they answer with (putStatuses).

// putStatuses are what a server answers uploads with.
type putStatuses struct {
	method  string // the HTTP method of an upload
	created int    // an upload that landed
	exists  int    // a Put(IfAbsent) of a key that exists
	stale   int    // a Put(IfVersion) with a version that is not the key's
	// checks is true for a store that, when an upload's answer is lost,
	// reads the object and finds its write there instead of sending the
	// upload again (GCS), so the server sees one upload, not two.
	checks bool
}

// checkPutRetry writes k/a through s, whose requests go through rt, and
// fails the test unless a Put(IfAbsent) and then a Put(IfVersion) retried
// after they landed both succeed, each upload answered as want says, and a
// rival's Put(IfAbsent) and Put(IfVersion) still fail with
// blob.ErrPrecondition. server names the server in failures. It returns the
// Info of the last write that succeeded: k/a holds "two".
func checkPutRetry(t *testing.T, s blob.Store, rt *lostAnswer, server string, want putStatuses) blob.Info {
	t.Helper()
	ctx := t.Context()
	check := func(what string, info blob.Info, err error, data string, wantStatuses ...int) {
		t.Helper()
		if got := rt.take(); !slices.Equal(got, wantStatuses) {
			t.Fatalf("%s: %s answered the uploads with %v, want %v", what, server, got, wantStatuses)
		}
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		got, st, err := s.Get(ctx, "k/a", blob.MaxObjectBytes)
		if err != nil || string(got) != data || st.Version != info.Version {
			t.Fatalf("%s: Get = %q, version %q, %v; want %q, version %q (Put's)", what, got, st.Version, err, data, info.Version)
		}
	}

	uploads := func(retry int) []int {
		if want.checks {
			return []int{want.created}
		}
		return []int{want.created, retry}
	}
	rt.arm(want.method)
	first, err := s.Put(ctx, "k/a", []byte("one"), blob.Cond{IfAbsent: true})
	check("Put(IfAbsent) retried after it landed", first, err, "one", uploads(want.exists)...)

	rt.arm(want.method)
	info, err := s.Put(ctx, "k/a", []byte("two"), blob.Cond{IfVersion: first.Version})
	check("Put(IfVersion) retried after it landed", info, err, "two", uploads(want.stale)...)

	// A rival's write is still a conflict.
	_, err = s.Put(ctx, "k/a", []byte("rival"), blob.Cond{IfAbsent: true})
	if !errors.Is(err, blob.ErrPrecondition) {
		t.Fatalf("Put(IfAbsent) of an existing key: error = %v, want ErrPrecondition", err)
	}
	_, err = s.Put(ctx, "k/a", []byte("rival"), blob.Cond{IfVersion: first.Version})
	if !errors.Is(err, blob.ErrPrecondition) {
		t.Fatalf("Put(IfVersion) with a stale version: error = %v, want ErrPrecondition", err)
	}
	check("rival writes", info, nil, "two", want.exists, want.stale)
	return info
}

// checkLostAnswerUnderRival: a conditional Put through s lands, a rival's
// write (through rival, the same store by another client) lands on top of
// it, and then the Put's answer is lost (rt, armed for method). The Put
// cannot know whether it landed, and must not say it met a conflict: a
// caller told of a conflict applies its change again, over content that may
// hold it already (the duplicated lines of docs/netfaults.md's long run).
// It must say that the outcome is unknown.
func checkLostAnswerUnderRival(t *testing.T, s, rival blob.Store, rt *lostAnswer, method string) {
	t.Helper()
	ctx := t.Context()
	first, err := s.Put(ctx, "k/a", []byte("one"), blob.Cond{IfAbsent: true})
	if err != nil {
		t.Fatal(err)
	}
	rt.rival = func() {
		if _, err := rival.Put(ctx, "k/a", []byte("rival"), blob.Cond{}); err != nil {
			t.Errorf("the rival's write: %v", err)
		}
	}
	defer func() { rt.rival = nil }()
	rt.arm(method)
	_, err = s.Put(ctx, "k/a", []byte("two"), blob.Cond{IfVersion: first.Version})
	if err == nil || errors.Is(err, blob.ErrPrecondition) {
		t.Fatalf("Put(IfVersion) that landed under a rival, its answer lost: error = %v, want an unknown outcome, not a conflict", err)
	}
	if !strings.Contains(err.Error(), "the write's outcome is unknown (it failed in transit and the ") {
		t.Errorf("error = %q, want it to say the outcome is unknown", err)
	}
	if got, _, err := s.Get(ctx, "k/a", blob.MaxObjectBytes); err != nil || string(got) != "rival" {
		t.Fatalf("Get = %q, %v; want the rival's content", got, err)
	}
}

// lostAnswer is an http.RoundTripper, and through Do an Azure
// policy.Transporter, over http.DefaultTransport. Once armed for a method,
// it forwards the next request of that method and, when the server accepts
// it (2xx), replaces the answer with the failure (status, header and body)
// as if the connection broke after the server acted. It records the status
// the server gave every request of the armed method. It is safe for
// concurrent use.
type lostAnswer struct {
	status int         // the failure's status code
	header http.Header // the failure's header
	body   string      // the failure's body
	// rival, when not nil, runs after the armed request landed and before
	// its answer is replaced: another writer's write in that moment.
	rival func()

	mu       sync.Mutex
	method   string // the method watched; "" before the first arm
	armed    bool
	statuses []int
}

// arm makes l watch method, forget the statuses recorded so far, and
// replace the answer to the next successful request of method.
func (l *lostAnswer) arm(method string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.method, l.armed, l.statuses = method, true, nil
}

// take returns the statuses recorded since the last take or arm.
func (l *lostAnswer) take() []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	got := l.statuses
	l.statuses = nil
	return got
}

func (l *lostAnswer) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil || req.Method != l.method {
		return resp, err
	}
	l.statuses = append(l.statuses, resp.StatusCode)
	if !l.armed || resp.StatusCode/100 != 2 {
		return resp, nil
	}
	l.armed = false
	if l.rival != nil {
		l.rival()
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", l.status, http.StatusText(l.status)),
		StatusCode:    l.status,
		Proto:         resp.Proto,
		ProtoMajor:    resp.ProtoMajor,
		ProtoMinor:    resp.ProtoMinor,
		Header:        l.header.Clone(),
		Body:          io.NopCloser(strings.NewReader(l.body)),
		ContentLength: int64(len(l.body)),
		Request:       req,
	}, nil
}

// Do is RoundTrip under the name an Azure policy.Transporter has.
func (l *lostAnswer) Do(req *http.Request) (*http.Response, error) {
	return l.RoundTrip(req)
}
