package memory_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/mount"
	"github.com/cloudmem/cloudmem/policy"
)

// A made-up AWS access key that gitleaks' rules find.
const plantedKey = "AKIAZ3MSJV4WWNKWW5FG"

// The policy a store carries (a URL's secrets=) applies; Options.Policy wins.
func TestPolicyFromStore(t *testing.T) {
	ctx := t.Context()
	s := blob.WithPolicy(mem.New(nil), &policy.Policy{Secrets: policy.Reject})
	h, err := memory.New(s, memory.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if res := h.Create(ctx, "/memories/a.md", "k "+plantedKey); !errors.Is(res.Err, memory.ErrSecret) {
		t.Errorf("the store's reject policy: %+v", res)
	}
	h, err = memory.New(s, memory.Options{Logger: quiet, Policy: &policy.Policy{}})
	if err != nil {
		t.Fatal(err)
	}
	if res := h.Create(ctx, "/memories/a.md", "k "+plantedKey); res.IsError {
		t.Errorf("Options.Policy (off) must win: %+v", res)
	}
}

// Each mount has its own policy.
func TestPolicyPerMount(t *testing.T) {
	ctx := t.Context()
	tb, err := mount.New([]mount.Mount{
		{Name: "strict", Store: blob.WithPolicy(mem.New(nil), &policy.Policy{Secrets: policy.Reject})},
		{Name: "scrub", Store: blob.WithPolicy(mem.New(nil), &policy.Policy{Secrets: policy.Redact})},
		{Name: "open", Store: mem.New(nil)},
	})
	if err != nil {
		t.Fatal(err)
	}
	h, err := memory.New(tb, memory.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	text := "k " + plantedKey
	if res := h.Create(ctx, "/memories/strict/a.md", text); !errors.Is(res.Err, memory.ErrSecret) {
		t.Errorf("strict: %+v", res)
	}
	h.Create(ctx, "/memories/scrub/a.md", text)
	h.Create(ctx, "/memories/open/a.md", text)
	for path, want := range map[string]string{"/memories/scrub/a.md": "k [REDACTED:aws-access-token]", "/memories/open/a.md": text} {
		if got, err := h.ReadFile(ctx, path); err != nil || string(got) != want {
			t.Errorf("%s holds %q, %v; want %q", path, got, err, want)
		}
	}
}

// The typed Write, which put, import, copy, sync and restore use, passes the
// gate's policy too: a new file and a replacement.
func TestPolicyWrite(t *testing.T) {
	ctx := t.Context()
	s := mem.New(nil)
	reject, err := memory.New(s, memory.Options{Logger: quiet, Policy: &policy.Policy{Secrets: policy.Reject}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = reject.Write(ctx, "/memories/a.md", []byte("x\n"+plantedKey), "")
	want := "The content for /memories/a.md holds a secret (aws-access-token on line 2); nothing was written. Memory files keep no secrets: write where a secret is kept (a vault path, an environment variable's name) instead of the secret itself."
	if !errors.Is(err, memory.ErrSecret) || err.Error() != want {
		t.Errorf("Write, reject: %v; want %q", err, want)
	}
	if _, err := reject.Write(ctx, "/memories/a.md", []byte("plain"), ""); err != nil {
		t.Fatal(err)
	}
	info, err := s.Stat(ctx, "a.md")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reject.Write(ctx, "/memories/a.md", []byte(plantedKey), info.Version); !errors.Is(err, memory.ErrSecret) {
		t.Errorf("Write over a version, reject: %v", err)
	}
	redact, err := memory.New(s, memory.Options{Logger: quiet, Policy: &policy.Policy{Secrets: policy.Redact}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := redact.Write(ctx, "/memories/a.md", []byte(plantedKey), info.Version); err != nil {
		t.Fatal(err)
	}
	if got, _ := redact.ReadFile(ctx, "/memories/a.md"); string(got) != "[REDACTED:aws-access-token]" {
		t.Errorf("after a redacted Write: %q", got)
	}
}

// A planted secret reaches no stored object and no log line, in any mode
// that keeps it out, through every writing command, on mem and file; the
// log says what was found, by rule, line and mode. (Through encryption and
// history: crypt's and history's runs of memorytest, and their tests.)
func TestSecretLeavesNoTrace(t *testing.T) {
	for _, b := range []backend{{"mem", func(*testing.T) blob.Store { return mem.New(nil) }}, {"file", newFile}} {
		for _, mode := range []policy.Mode{policy.Reject, policy.Redact} {
			t.Run(b.name+"/"+mode.String(), func(t *testing.T) {
				ctx := t.Context()
				s := b.newStore(t)
				var log bytes.Buffer
				h, err := memory.New(s, memory.Options{Policy: &policy.Policy{Secrets: mode},
					Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
				if err != nil {
					t.Fatal(err)
				}
				h.Create(ctx, "/memories/base.md", "one\ntwo\n")
				results := []memory.Result{
					h.Create(ctx, "/memories/a.md", "k "+plantedKey),
					h.StrReplace(ctx, "/memories/base.md", "two", plantedKey),
					h.Insert(ctx, "/memories/base.md", 1, plantedKey),
				}
				_, werr := h.Write(ctx, "/memories/w.md", []byte(plantedKey), "")
				for _, r := range results {
					if strings.Contains(r.Text, plantedKey) {
						t.Errorf("a result holds the secret: %q", r.Text)
					}
				}
				if werr != nil && strings.Contains(werr.Error(), plantedKey) {
					t.Errorf("Write's error holds the secret: %v", werr)
				}
				for info, err := range s.List(ctx, "") {
					if err != nil {
						t.Fatal(err)
					}
					data, _, err := s.Get(ctx, info.Key, blob.MaxObjectBytes)
					if err != nil {
						t.Fatal(err)
					}
					if bytes.Contains(data, []byte(plantedKey)) || strings.Contains(info.Key, plantedKey) {
						t.Errorf("the stored object %q holds the secret", info.Key)
					}
				}
				if strings.Contains(log.String(), plantedKey) {
					t.Errorf("the log holds the secret:\n%s", log.String())
				}
				if n := strings.Count(log.String(), "rule=aws-access-token"); n != 4 {
					t.Errorf("the log has %d findings, want 4:\n%s", n, log.String())
				}
				if !strings.Contains(log.String(), "mode="+mode.String()) {
					t.Errorf("the log does not name the mode:\n%s", log.String())
				}
			})
		}
	}
}

// Secrets found are reported to an Observer that is a SecretObserver, by
// rule and mode.
func TestSecretObserver(t *testing.T) {
	obs := &secretCounter{}
	h, err := memory.New(mem.New(nil), memory.Options{Logger: quiet, Observer: obs, Policy: &policy.Policy{Secrets: policy.Warn}})
	if err != nil {
		t.Fatal(err)
	}
	h.Create(t.Context(), "/memories/a.md", plantedKey+"\nAKIAZ3MSJV4WWNKWW5FH\n")
	if want := []string{"aws-access-token warn", "aws-access-token warn"}; strings.Join(obs.found, ";") != strings.Join(want, ";") {
		t.Errorf("observed %q, want %q", obs.found, want)
	}
}

type secretCounter struct{ found []string }

func (o *secretCounter) CommandStart(ctx context.Context, _ memory.CommandInfo) context.Context {
	return ctx
}
func (o *secretCounter) CommandConflict(context.Context, bool)     {}
func (o *secretCounter) CommandEnd(context.Context, memory.Result) {}
func (o *secretCounter) SecretFound(_ context.Context, rule string, mode policy.Mode) {
	o.found = append(o.found, rule+" "+mode.String())
}

// A rejected create makes no storage call.
func TestRejectedCreateTouchesNoStorage(t *testing.T) {
	c := blob.NewCounter(mem.New(nil))
	h, err := memory.New(c, memory.Options{Logger: quiet, Policy: &policy.Policy{Secrets: policy.Reject}})
	if err != nil {
		t.Fatal(err)
	}
	if res := h.Create(t.Context(), "/memories/a.md", plantedKey); !errors.Is(res.Err, memory.ErrSecret) {
		t.Fatalf("%+v", res)
	}
	if n := c.Counts(); n.Total() != 0 {
		t.Errorf("a rejected create made storage calls: %+v", n)
	}
}

// Writers released at once, half of them with a secret, under reject and
// redact, on mem and file: every writer is answered, the refused ones wrote
// nothing, and no stored file holds the secret.
func TestPolicyConcurrentWriters(t *testing.T) {
	const writers = 16
	for _, b := range []backend{{"mem", func(*testing.T) blob.Store { return mem.New(nil) }}, {"file", newFile}} {
		for _, mode := range []policy.Mode{policy.Reject, policy.Redact} {
			t.Run(b.name+"/"+mode.String(), func(t *testing.T) {
				ctx := t.Context()
				s := b.newStore(t)
				h, err := memory.New(s, memory.Options{Logger: quiet, Policy: &policy.Policy{Secrets: mode}})
				if err != nil {
					t.Fatal(err)
				}
				h.Create(ctx, "/memories/shared.md", "")
				var (
					wg                    sync.WaitGroup
					mu                    sync.Mutex
					acknowledged, refused int
				)
				start := make(chan struct{})
				for i := range writers {
					wg.Go(func() {
						<-start
						line := "plain line " + strconv.Itoa(i)
						if i%2 == 0 {
							line = "key " + plantedKey + " " + strconv.Itoa(i)
						}
						results := []memory.Result{
							h.Create(ctx, "/memories/w"+strconv.Itoa(i)+".md", line),
							h.Insert(ctx, "/memories/shared.md", 0, line),
						}
						mu.Lock()
						defer mu.Unlock()
						for _, r := range results {
							switch {
							case r.Err == nil:
								acknowledged++
							case errors.Is(r.Err, memory.ErrSecret):
								refused++
							default:
								t.Errorf("writer %d: %s", i, r.Text)
							}
						}
					})
				}
				close(start)
				wg.Wait()
				wantAck, wantRefused := 2*writers, 0
				if mode == policy.Reject {
					wantAck, wantRefused = writers, writers
				}
				if acknowledged != wantAck || refused != wantRefused {
					t.Errorf("acknowledged %d, refused %d; want %d and %d", acknowledged, refused, wantAck, wantRefused)
				}
				files, err := h.Files(ctx, "/memories")
				if err != nil {
					t.Fatal(err)
				}
				if want := 1 + wantAck/2; len(files) != want {
					t.Errorf("%d files present, want %d", len(files), want)
				}
				shared, err := h.ReadFile(ctx, "/memories/shared.md")
				if err != nil {
					t.Fatal(err)
				}
				if n := strings.Count(string(shared), "\n"); n != wantAck/2 {
					t.Errorf("shared.md has %d lines, want %d:\n%s", n, wantAck/2, shared)
				}
				for _, f := range files {
					data, err := h.ReadFile(ctx, f.Path)
					if err != nil {
						t.Fatal(err)
					}
					if bytes.Contains(data, []byte(plantedKey)) {
						t.Errorf("%s holds the secret", f.Path)
					}
				}
			})
		}
	}
}
