package dirsync

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// stateFormat is the version of the state file's layout.
const stateFormat = 1

// state is what both sides held at the end of the last pass.
type state struct {
	Format int `json:"format"`
	// Files maps a store key to what was recorded for it.
	Files map[string]entry `json:"files"`
}

// entry is the recorded state of one file.
type entry struct {
	// LocalSHA is the SHA-256 (hex) of the local file's content.
	LocalSHA string `json:"local_sha256"`
	// LocalSize and LocalModNano let a pass take a local file as unchanged
	// without reading it.
	LocalSize    int64 `json:"local_size"`
	LocalModNano int64 `json:"local_mtime_ns"`
	// RemoteSHA is the SHA-256 (hex) of the store object's content, and
	// Version its version (as List spells it when known).
	RemoteSHA string `json:"remote_sha256"`
	Version   string `json:"remote_version"`
	// DeleteSeen is when a pass first saw the file deleted on one side
	// while the grace period held the delete back; zero otherwise.
	DeleteSeen time.Time `json:"delete_seen,omitzero"`
}

// loadState reads the state file; a missing file is an empty state.
func loadState(path string) (*state, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &state{Format: stateFormat, Files: map[string]entry{}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("dirsync: reading the sync state: %w", err)
	}
	var s state
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("dirsync: the sync state %s is corrupt (delete it to start over; files are then compared by content): %w", path, err)
	}
	if s.Format != stateFormat {
		return nil, fmt.Errorf("dirsync: the sync state %s has format %d; this version reads format %d", path, s.Format, stateFormat)
	}
	if s.Files == nil {
		s.Files = map[string]entry{}
	}
	return &s, nil
}

// save writes the state atomically: a temporary file beside it, fsync,
// rename.
func (s *state) save(path string) error {
	data, err := json.MarshalIndent(s, "", "\t")
	if err != nil {
		return fmt.Errorf("dirsync: encoding the sync state: %w", err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("dirsync: saving the sync state: %w", err)
	}
	f, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("dirsync: saving the sync state: %w", err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("dirsync: saving the sync state: %w", err)
	}
	return nil
}

// lockState takes the lock file beside the state file without waiting, so
// that one pass at a time runs for it (in this process or another). It
// returns the function that releases it.
func lockState(path string) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("dirsync: locking the sync state: %w", err)
	}
	f, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("dirsync: locking the sync state: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w (state %s)", ErrBusy, path)
		}
		return nil, fmt.Errorf("dirsync: locking the sync state: %w", err)
	}
	return func() { f.Close() }, nil // closing the descriptor releases the lock
}
