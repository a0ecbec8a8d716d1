//go:build unix

package file_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cloudmem/cloudmem/backends/file"
	"github.com/cloudmem/cloudmem/blob"
)

// childEnv, when set, makes the test binary a child of TestCrossProcess:
// it names the directory whose counter the child increments.
const childEnv = "CLOUDMEM_FILE_TEST_CHILD_DIR"

// childLockEnv, when set too, makes the child take the key's lock
// (blob.Lock) around each increment.
const childLockEnv = "CLOUDMEM_FILE_TEST_CHILD_LOCK"

const (
	processes  = 4
	increments = 50
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(childEnv); dir != "" {
		retries, err := incrementCounter(dir, increments, os.Getenv(childLockEnv) != "")
		if err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		fmt.Println(retries)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// incrementCounter adds n to the number stored under "counter", one
// read-modify-write at a time, each committed with Put(IfVersion) and
// retried when another writer got there first; with locked, each under the
// key's lock. It returns the retries.
func incrementCounter(dir string, n int, locked bool) (retries int, err error) {
	ctx := context.Background()
	s, err := file.Open(ctx, dir, nil)
	if err != nil {
		return 0, err
	}
	unlock := func() {}
	for done := 0; done < n; unlock() {
		if locked {
			if unlock, err = blob.Lock(ctx, s, "counter"); err != nil {
				return retries, err
			}
		}
		data, info, err := s.Get(ctx, "counter", blob.MaxObjectBytes)
		if err != nil {
			return retries, err
		}
		v, err := strconv.Atoi(string(data))
		if err != nil {
			return retries, err
		}
		_, err = s.Put(ctx, "counter", []byte(strconv.Itoa(v+1)), blob.Cond{IfVersion: info.Version})
		switch {
		case err == nil:
			done++
		case errors.Is(err, blob.ErrPrecondition):
			retries++
		default:
			return retries, err
		}
	}
	return retries, nil
}

// TestCrossProcess runs several processes (this test binary, re-executed)
// that increment one counter with conditional writes: the flock on the
// directory must make every increment count.
func TestCrossProcess(t *testing.T) {
	retries := crossProcess(t, false)
	t.Logf("retries per process after losing a race: %s", strings.Join(retries, " "))
}

// TestCrossProcessLocked is TestCrossProcess with each increment under the
// key's lock: every increment counts, and no process ever retries.
func TestCrossProcessLocked(t *testing.T) {
	retries := crossProcess(t, true)
	if want := slices.Repeat([]string{"0"}, processes); !slices.Equal(retries, want) {
		t.Fatalf("retries per process under the key lock: %q, want %q", retries, want)
	}
}

// crossProcess starts the child processes (with the key lock when locked),
// checks the final counter, and returns each child's retries.
func crossProcess(t *testing.T, locked bool) []string {
	dir := t.TempDir()
	s := open(t, dir)
	mustPut(t, s, "counter", "0")
	cmds := make([]*exec.Cmd, processes)
	for i := range cmds {
		cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+dir)
		if locked {
			cmd.Env = append(cmd.Env, childLockEnv+"=1")
		}
		cmd.Stderr = os.Stderr
		cmds[i] = cmd
	}
	outs := make([]chan string, processes)
	for i, cmd := range cmds {
		outs[i] = make(chan string, 1)
		go func() {
			out, err := cmd.Output()
			if err != nil {
				t.Errorf("child %d: %v", i, err)
			}
			outs[i] <- string(out)
		}()
	}
	var retries []string
	for _, out := range outs {
		retries = append(retries, strings.TrimSpace(<-out))
	}
	wantContent(t, s, "counter", strconv.Itoa(processes*increments))
	return retries
}
