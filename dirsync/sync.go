package dirsync

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
)

// Errors a pass returns; test for them with errors.Is.
var (
	// ErrConflict means some files were changed on both sides; both contents
	// were kept (see the package documentation).
	ErrConflict = errors.New("dirsync: files changed on both sides were kept under conflict names")
	// ErrTooManyDeletes means the pass would have deleted more files than
	// Options.MaxDeletes allows, and changed nothing.
	ErrTooManyDeletes = errors.New("dirsync: too many deletes")
	// ErrFailed means some files could not be synced; the others were.
	ErrFailed = errors.New("dirsync: some files could not be synced")
	// ErrBusy means another pass over the same state file is running.
	ErrBusy = errors.New("dirsync: another sync of this folder and store is running")
	// ErrLinked means the folder, or a directory or file in it that held
	// synced files, is now a symbolic link: links are not followed, so the
	// pass would take its files for deleted. The pass changed nothing.
	ErrLinked = errors.New("dirsync: a synced path is now a symbolic link")
	// ErrStateInFolder means Options.StateFile is inside the synced folder,
	// where the pass would upload it; nothing was changed.
	ErrStateInFolder = errors.New("dirsync: the sync state is inside the synced folder")
)

// DefaultMaxDeletes is the default of Options.MaxDeletes.
const DefaultMaxDeletes = 20

// Options configures a pass. StateFile is required; the zero value of every
// other field is a sane default.
type Options struct {
	// StateFile is where the pass keeps what both sides held at its end:
	// one file per folder and store, outside the folder and outside the
	// store (the CLI keeps it under the user's state directory). Required.
	StateFile string
	// Machine names this machine: in conflict names and as the actor of
	// every store write (blob.WithActor). Empty means the host name.
	Machine string
	// MaxDeletes caps the deletes of one pass, on either side; a pass that
	// would delete more changes nothing and returns ErrTooManyDeletes.
	// 0 means DefaultMaxDeletes; negative means no cap.
	MaxDeletes int
	// AllowDeletes lifts the MaxDeletes cap for this pass.
	AllowDeletes bool
	// DeleteGrace holds a delete back until it has been seen for this long
	// (by earlier passes). 0 propagates a delete at once.
	DeleteGrace time.Duration
	// DryRun plans the pass and reports it without changing anything,
	// including the state.
	DryRun bool
	// MaxFileBytes skips files larger than this. 0 means the store's limit
	// (blob.Limits: a URL's max_file_bytes), else
	// memory.DefaultMaxFileBytes, the memory tool's own limit.
	MaxFileBytes int64
	// MaxFiles skips new files once the store holds this many memory
	// files. 0 means the store's limit (blob.Limits: a URL's max_files),
	// else memory.DefaultMaxFiles; negative means no limit.
	MaxFiles int
	// Progress, when set, is called during a pass with the number of files
	// looked at so far and the total, every 100 files.
	Progress func(done, total int)
	// Logger receives the details of failures. Nil means slog.Default().
	Logger *slog.Logger

	now func() time.Time // the clock; tests set it
}

// Op names what a pass did (or, with DryRun, would do) to one file.
type Op string

// The operations of a pass.
const (
	OpUpload       Op = "upload"        // local content written to the store
	OpDownload     Op = "download"      // store content written to the folder
	OpDeleteRemote Op = "delete-remote" // removed from the store
	OpDeleteLocal  Op = "delete-local"  // removed from the folder
	OpConflict     Op = "conflict"      // changed on both sides; both kept
	OpDeferred     Op = "deferred"      // a delete held back by the grace period
)

// Action is one thing a pass did to one file.
type Action struct {
	Op   Op
	Key  string // the file's path relative to the folder ('/'-separated)
	Note string // for a conflict: the name the local content was kept under
}

// Problem is a file a pass skipped or failed on, with the reason.
type Problem struct {
	Key    string
	Reason string
}

// Report says what one pass did.
type Report struct {
	Actions []Action  // in key order
	Skipped []Problem // files the memory tool could not hold, links, ...
	Failed  []Problem // files that could not be synced this pass
	Files   int       // files looked at
	DryRun  bool
}

// Count returns how many actions of kind op the report holds.
func (r Report) Count(op Op) int {
	n := 0
	for _, a := range r.Actions {
		if a.Op == op {
			n++
		}
	}
	return n
}

// Summary is the one-line summary of the pass, for a person.
func (r Report) Summary() string {
	verb := "sync"
	if r.DryRun {
		verb = "sync (dry run, nothing changed)"
	}
	return fmt.Sprintf("%s: %d %s, %d uploaded, %d downloaded, %d deleted in the store, %d deleted here, %d %s, %d deletes deferred, %d skipped, %d failed",
		verb, r.Files, plural(r.Files, "file", "files"), r.Count(OpUpload), r.Count(OpDownload), r.Count(OpDeleteRemote), r.Count(OpDeleteLocal),
		r.Count(OpConflict), plural(r.Count(OpConflict), "conflict", "conflicts"), r.Count(OpDeferred), len(r.Skipped), len(r.Failed))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Sync runs one pass between the folder dir and store (see the package
// documentation for what it decides and guarantees). The Report is valid
// even when err is not nil. err wraps ErrConflict when files were kept
// under conflict names, ErrFailed when some files could not be synced,
// ErrTooManyDeletes when the pass stopped before changing anything, ErrBusy
// when another pass of the same state runs, or describes why the pass could
// not run at all.
func Sync(ctx context.Context, dir string, store blob.Store, opts Options) (Report, error) {
	p, err := newPass(dir, store, opts)
	if err != nil {
		return Report{DryRun: opts.DryRun}, err
	}
	defer p.close()
	return p.run(ctx)
}

// pass is one run of Sync.
type pass struct {
	opts  Options
	store blob.Store
	// gate writes and deletes the store's memory files, under the
	// store's rules (its limits, its file count, a name that is never
	// both a file and a directory), as the model's commands do.
	gate   *memory.Handler
	local  *local
	state  *state
	unlock func()
	log    *slog.Logger
	rep    Report
}

func newPass(dir string, store blob.Store, opts Options) (*pass, error) {
	if opts.StateFile == "" {
		return nil, errors.New("dirsync: Options.StateFile is required")
	}
	if store == nil {
		return nil, errors.New("dirsync: nil store")
	}
	if opts.Machine == "" {
		host, err := os.Hostname()
		if err != nil || host == "" {
			host = "machine"
		}
		opts.Machine = host
	}
	opts.MaxDeletes = cmp.Or(opts.MaxDeletes, DefaultMaxDeletes)
	limits := blob.TraitsOf(store).Limits // a URL's max_files and max_file_bytes
	opts.MaxFileBytes = cmp.Or(opts.MaxFileBytes, max(limits.MaxFileBytes, 0), memory.DefaultMaxFileBytes)
	opts.MaxFiles = cmp.Or(opts.MaxFiles, limits.MaxFiles, memory.DefaultMaxFiles)
	if opts.now == nil {
		opts.now = time.Now
	}
	if err := stateOutside(dir, opts.StateFile); err != nil {
		return nil, err
	}
	unlock, err := lockState(opts.StateFile)
	if err != nil {
		return nil, err
	}
	st, err := loadState(opts.StateFile)
	if err != nil {
		unlock()
		return nil, err
	}
	log := cmp.Or(opts.Logger, slog.Default())
	gate, err := memory.New(store, memory.Options{MaxFiles: opts.MaxFiles, MaxFileBytes: opts.MaxFileBytes, Logger: log})
	if err != nil {
		unlock()
		return nil, fmt.Errorf("dirsync: %w", err)
	}
	l, err := openLocal(dir)
	if err != nil {
		unlock()
		return nil, err
	}
	return &pass{
		opts: opts, store: store, gate: gate, local: l, state: st, unlock: unlock,
		log: log,
		rep: Report{DryRun: opts.DryRun},
	}, nil
}

func (p *pass) close() {
	p.local.close()
	p.unlock()
}

// side is what one side holds for a key.
type side struct {
	present bool
	sha     string // SHA-256 (hex) of the content; "" until known
	data    []byte // the content, once read
	version string // the store's version (remote side)
	size    int64  // local side
	modNano int64  // local side
}

// item is one key and what the pass found for it.
type item struct {
	key           string
	loc, rem      side
	base          entry
	hasBase       bool
	localChanged  bool // changed or new
	remoteChanged bool // changed or new
	conflictKey   string
}

func (p *pass) run(ctx context.Context) (Report, error) {
	ctx = blob.WithActor(ctx, p.opts.Machine)
	items, err := p.survey(ctx)
	if err != nil {
		return p.rep, err
	}
	plan := p.decide(items)
	deletes := 0
	for _, st := range plan {
		if st.op == OpDeleteLocal || st.op == OpDeleteRemote {
			deletes++
		}
	}
	if deletes > p.opts.MaxDeletes && p.opts.MaxDeletes >= 0 && !p.opts.AllowDeletes {
		p.rep.Actions = nil
		return p.rep, fmt.Errorf("%w: the pass would delete %d files, over the cap of %d; nothing was changed (allow it with AllowDeletes, the CLI's --allow-deletes)",
			ErrTooManyDeletes, deletes, p.opts.MaxDeletes)
	}
	if p.opts.DryRun {
		for _, st := range plan {
			p.rep.Actions = append(p.rep.Actions, Action{Op: st.op, Key: st.it.key, Note: st.note()})
		}
		return p.rep, p.outcome()
	}
	for i, st := range plan {
		if err := ctx.Err(); err != nil {
			p.saveState()
			return p.rep, fmt.Errorf("dirsync: %w", err)
		}
		p.apply(ctx, st)
		if i%100 == 99 { // a long pass keeps its progress in case it is killed
			p.saveState()
		}
	}
	if err := p.saveState(); err != nil {
		return p.rep, err
	}
	return p.rep, p.outcome()
}

func (p *pass) outcome() error {
	var errs []error
	if n := p.rep.Count(OpConflict); n > 0 {
		errs = append(errs, fmt.Errorf("%w (%d %s)", ErrConflict, n, plural(n, "file", "files")))
	}
	if n := len(p.rep.Failed); n > 0 {
		errs = append(errs, fmt.Errorf("%w (%d %s)", ErrFailed, n, plural(n, "file", "files")))
	}
	return errors.Join(errs...)
}

func (p *pass) saveState() error {
	if p.opts.DryRun {
		return nil
	}
	return p.state.save(p.opts.StateFile)
}

func (p *pass) skip(key, reason string) { p.rep.Skipped = append(p.rep.Skipped, Problem{key, reason}) }

func (p *pass) fail(key string, err error) {
	p.log.Warn("dirsync: a file could not be synced", "file", key, "error", err)
	p.rep.Failed = append(p.rep.Failed, Problem{key, shortCause(err)})
}

// shortCause is the reason a person reads for a failure.
func shortCause(err error) string {
	var c memory.Causer
	if errors.As(err, &c) && c.ModelCause() != "" {
		return c.ModelCause()
	}
	return err.Error()
}

// validKey reports why key cannot be a memory file, or "" when it can.
func validKey(key string) string {
	got, err := memory.Resolve(memory.PathOf(key))
	if err != nil {
		return "is not a valid memory path: " + err.Error()
	}
	if got != key {
		return "is not a valid memory path"
	}
	return ""
}

// survey lists both sides, reads what it must to decide, and returns one
// item per key in key order.
func (p *pass) survey(ctx context.Context) ([]*item, error) {
	byKey := map[string]*item{}
	get := func(key string) *item {
		it := byKey[key]
		if it == nil {
			it = &item{key: key}
			it.base, it.hasBase = p.state.Files[key]
			byKey[key] = it
		}
		return it
	}
	var links []string
	err := p.local.scan(func(f localFile) {
		if reason := validKey(f.key); reason != "" {
			p.skip(f.key, reason)
			return
		}
		it := get(f.key)
		it.loc = side{present: true, size: f.size, modNano: f.modNano}
	}, func(key, reason string) {
		if reason == linkReason {
			links = append(links, key)
		}
		p.skip(key, reason)
	})
	if err != nil {
		return nil, fmt.Errorf("dirsync: reading the folder: %w", err)
	}
	if err := p.linkedSynced(links); err != nil {
		return nil, err
	}
	for info, err := range p.store.List(ctx, "") {
		if err != nil {
			return nil, fmt.Errorf("dirsync: listing the store: %w", err)
		}
		if blob.IsReserved(info.Key) {
			continue // the storage layers' bookkeeping, not a memory file
		}
		if reason := validKey(info.Key); reason != "" {
			p.skip(info.Key, "in the store "+reason)
			continue
		}
		it := get(info.Key)
		it.rem = side{present: true, version: info.Version}
	}
	for key := range p.state.Files {
		get(key)
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range byKey {
			if !yield(k) {
				return
			}
		}
	})
	p.rep.Files = len(keys)
	var items []*item
	for i, key := range keys {
		it := byKey[key]
		if p.opts.Progress != nil && len(keys) > 100 && i%100 == 0 {
			p.opts.Progress(i, len(keys))
		}
		if err := p.examine(ctx, it); err != nil {
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return nil, fmt.Errorf("dirsync: %w", err)
			}
			p.fail(key, err)
			continue
		}
		items = append(items, it)
	}
	if p.opts.Progress != nil && len(keys) > 100 {
		p.opts.Progress(len(keys), len(keys))
	}
	return items, nil
}

// linkedSynced refuses the pass when one of the symbolic links the scan
// passed over is where synced files were: a directory (or file) replaced by
// a link to its moved copy. Links are not followed, so the pass would take
// its files for deleted here and delete them from the store, and other
// machines would then delete theirs.
func (p *pass) linkedSynced(links []string) error {
	var held []string
	for _, l := range links {
		for key := range p.state.Files {
			if key == l || strings.HasPrefix(key, l+"/") {
				held = append(held, l)
				break
			}
		}
	}
	if len(held) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s held synced files and is now a symbolic link (links are not followed); nothing was changed: "+
		"put the files back in its place, or remove the link to have them deleted everywhere", ErrLinked, strings.Join(held, ", "))
}

// stateOutside refuses a state file inside the folder dir (or in a
// directory of it reached through a link), where a pass would upload it.
func stateOutside(dir, stateFile string) error {
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			return p
		}
		if r, err := filepath.EvalSymlinks(a); err == nil {
			return r
		}
		return a
	}
	folder, parent := abs(dir), abs(filepath.Dir(stateFile))
	if rel, err := filepath.Rel(folder, parent); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("%w: the state file %s is in the folder %s, and would be synced to the store; nothing was changed: "+
			"give a state file outside the folder", ErrStateInFolder, stateFile, dir)
	}
	return nil
}

// errSkipped marks an item examine skipped (already reported).
var errSkipped = errors.New("skipped")

// examine decides whether each side changed since the last pass, reading
// content only where the state cannot tell.
func (p *pass) examine(ctx context.Context, it *item) error {
	b := it.base
	if it.loc.present {
		if it.hasBase && it.loc.size == b.LocalSize && it.loc.modNano == b.LocalModNano && b.LocalSHA != "" {
			it.loc.sha = b.LocalSHA
		} else if err := p.readLocal(it); err != nil {
			return err
		}
		it.localChanged = !it.hasBase || it.loc.sha != b.LocalSHA
	}
	if it.rem.present {
		if it.hasBase && it.rem.version == b.Version && b.RemoteSHA != "" {
			it.rem.sha = b.RemoteSHA
		} else if err := p.readRemote(ctx, it); err != nil {
			return err
		}
		it.remoteChanged = !it.hasBase || it.rem.sha != b.RemoteSHA
	}
	return nil
}

func (p *pass) readLocal(it *item) error {
	if it.loc.data != nil {
		return nil
	}
	if it.loc.size > p.opts.MaxFileBytes {
		return p.tooLarge(it, it.loc.size)
	}
	data, err := p.local.read(it.key, p.opts.MaxFileBytes)
	if errors.Is(err, errTooLarge) {
		return p.tooLarge(it, -1)
	}
	if err != nil {
		return fmt.Errorf("reading the local file: %w", err)
	}
	it.loc.data, it.loc.sha = data, hashOf(data)
	return nil
}

func (p *pass) readRemote(ctx context.Context, it *item) error {
	if it.rem.data != nil {
		return nil
	}
	data, info, err := getBounded(ctx, p.store, it.key, p.opts.MaxFileBytes)
	if errors.Is(err, blob.ErrNotExist) {
		it.rem = side{} // deleted since the listing
		return nil
	}
	if errors.Is(err, errTooLarge) {
		return p.tooLarge(it, info.Size)
	}
	if err != nil {
		return fmt.Errorf("reading the store: %w", err)
	}
	it.rem.data, it.rem.sha = data, hashOf(data)
	if it.rem.version == "" {
		it.rem.version = info.Version
	}
	return nil
}

func (p *pass) tooLarge(it *item, size int64) error {
	if size >= 0 {
		p.skip(it.key, fmt.Sprintf("is %d bytes, over the limit of %d bytes per memory file", size, p.opts.MaxFileBytes))
	} else {
		p.skip(it.key, fmt.Sprintf("is over the limit of %d bytes per memory file", p.opts.MaxFileBytes))
	}
	*it = item{} // nothing to do for it
	return nil
}

// getBounded reads at most limit bytes of a store object; a larger one is
// an error wrapping errTooLarge, with its size in the Info when the store
// knows it (-1 otherwise).
func getBounded(ctx context.Context, s blob.Store, key string, limit int64) ([]byte, blob.Info, error) {
	data, info, err := s.Get(ctx, key, limit)
	var big *blob.TooLargeError
	if errors.As(err, &big) {
		return nil, blob.Info{Key: key, Size: big.Size}, fmt.Errorf("%w: %w", errTooLarge, err)
	}
	return data, info, err
}

func hashOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// step is one planned action.
type step struct {
	op Op
	it *item
}

func (s step) note() string {
	if s.op == OpConflict {
		return s.it.conflictKey
	}
	return ""
}

// decide turns the survey into a plan (see the table in the package
// documentation). Items needing nothing but a state update get it here.
func (p *pass) decide(items []*item) []step {
	var plan []step
	now := p.opts.now()
	for _, it := range items {
		if it.key == "" {
			continue // skipped by examine
		}
		op := decideOne(it)
		switch op {
		case "":
			continue
		case opRecord:
			if !p.opts.DryRun {
				p.record(it, it.loc, it.rem)
			}
			continue
		case opForget:
			if !p.opts.DryRun {
				delete(p.state.Files, it.key)
			}
			continue
		case OpDeleteLocal, OpDeleteRemote:
			if p.opts.DeleteGrace > 0 {
				seen := it.base.DeleteSeen
				if seen.IsZero() {
					seen = now
					if !p.opts.DryRun {
						e := it.base
						e.DeleteSeen = now
						p.state.Files[it.key] = e
					}
				}
				if now.Sub(seen) < p.opts.DeleteGrace {
					plan = append(plan, step{OpDeferred, it})
					continue
				}
			}
		case OpConflict:
			it.conflictKey = conflictKey(it.key, p.opts.Machine, it.loc.sha)
		}
		plan = append(plan, step{op, it})
	}
	return plan
}

// Internal decisions that change only the state.
const (
	opRecord Op = "record" // both sides agree; remember what they hold
	opForget Op = "forget" // gone from both sides
)

// decideOne is the table of the package documentation.
func decideOne(it *item) Op {
	l, r := it.loc.present, it.rem.present
	switch {
	case !l && !r:
		if it.hasBase {
			return opForget
		}
		return ""
	case l && r:
		switch {
		case !it.localChanged && !it.remoteChanged:
			if it.loc.sha == it.base.LocalSHA && (it.loc.size != it.base.LocalSize || it.loc.modNano != it.base.LocalModNano || it.rem.version != it.base.Version) {
				return opRecord // same content, new mtime or version spelling
			}
			return ""
		case it.localChanged && !it.remoteChanged:
			return OpUpload
		case !it.localChanged && it.remoteChanged:
			return OpDownload
		case it.loc.sha == it.rem.sha:
			return opRecord
		default:
			return OpConflict
		}
	case l: // only local
		if it.hasBase && !it.localChanged {
			return OpDeleteLocal // deleted in the store, unchanged here
		}
		return OpUpload
	default: // only in the store
		if it.hasBase && !it.remoteChanged {
			return OpDeleteRemote // deleted here, unchanged in the store
		}
		return OpDownload
	}
}

// record notes that the local side holds loc and the store rem.
//
// A local file modified within the last racyWindow may be modified again
// with the same size and timestamp granule, so its time is not recorded and
// the next pass hashes it (as git does with "racily clean" files).
func (p *pass) record(it *item, loc, rem side) {
	e := entry{LocalSHA: loc.sha, RemoteSHA: rem.sha, Version: rem.version, LocalSize: loc.size, LocalModNano: loc.modNano}
	if f, err := p.local.stat(it.key); err == nil && loc.present {
		e.LocalSize, e.LocalModNano = f.size, f.modNano
	}
	if p.opts.now().Sub(time.Unix(0, e.LocalModNano)) < racyWindow {
		e.LocalModNano = 0
	}
	p.state.Files[it.key] = e
}

// racyWindow is how recent a modification time must be for a pass not to
// trust it next time.
const racyWindow = 2 * time.Second

func (p *pass) done(op Op, key, note string) {
	p.rep.Actions = append(p.rep.Actions, Action{Op: op, Key: key, Note: note})
}

// apply carries out one step; failures are reported, not returned.
func (p *pass) apply(ctx context.Context, st step) {
	it := st.it
	var err error
	switch st.op {
	case OpDeferred:
		p.done(OpDeferred, it.key, "")
		return
	case OpUpload:
		err = p.upload(ctx, it)
	case OpDownload:
		err = p.download(ctx, it)
	case OpDeleteRemote:
		err = p.deleteRemote(ctx, it)
	case OpDeleteLocal:
		err = p.deleteLocal(it)
	case OpConflict:
		err = p.conflict(ctx, it)
	}
	if errors.Is(err, errSkipped) {
		return
	}
	if err != nil {
		p.fail(it.key, err)
	}
}

func (p *pass) upload(ctx context.Context, it *item) error {
	if err := p.readLocal(it); err != nil || it.key == "" {
		return err
	}
	ifVersion := "" // a new file
	if it.rem.present {
		ifVersion = it.rem.version
	}
	version, err := p.gate.Write(ctx, memory.PathOf(it.key), it.loc.data, ifVersion)
	refusal, refused := memory.Refusal(err)
	switch {
	case refused: // the store's rules refuse this file
		p.skip(it.key, "not uploaded: "+refusal)
		return errSkipped
	case errors.Is(err, memory.ErrExists) && p.remoteDir(ctx, it.key):
		p.skip(it.key, "not uploaded: the store has a directory of this name")
		return errSkipped
	case errors.Is(err, memory.ErrConflict), errors.Is(err, memory.ErrExists):
		return p.raced(ctx, it)
	case err != nil:
		return fmt.Errorf("writing to the store: %w", err)
	}
	rem := side{present: true, sha: it.loc.sha, version: version}
	p.record(it, it.loc, rem)
	p.done(OpUpload, it.key, "")
	return nil
}

// remoteDir reports whether key is a directory (or a mount point) in the
// store: a create of it was refused because the name is taken, and no file
// holds it. A failure to tell is no.
func (p *pass) remoteDir(ctx context.Context, key string) bool {
	_, err := p.gate.Files(ctx, memory.PathOf(key))
	return err == nil
}

// raced handles a store write that lost a race: another machine wrote the
// file since the survey. Its content is read again and the file handled as
// changed on both sides.
func (p *pass) raced(ctx context.Context, it *item) error {
	it.rem = side{}
	if err := p.readRemote(ctx, it); err != nil || it.key == "" {
		return err
	}
	if it.rem.data == nil { // deleted meanwhile: next pass uploads
		return fmt.Errorf("the store's copy changed during the sync; it is synced on the next pass")
	}
	it.rem.present = true
	if it.rem.sha == it.loc.sha {
		p.record(it, it.loc, it.rem)
		return nil
	}
	it.conflictKey = conflictKey(it.key, p.opts.Machine, it.loc.sha)
	return p.conflict(ctx, it)
}

func (p *pass) download(ctx context.Context, it *item) error {
	if err := p.readRemote(ctx, it); err != nil || it.key == "" {
		return err
	}
	if it.rem.data == nil {
		return fmt.Errorf("the store's copy was deleted during the sync; it is synced on the next pass")
	}
	expect := absent
	if it.loc.present {
		expect = it.loc.sha
	}
	if err := p.local.write(it.key, it.rem.data, expect); err != nil {
		return fmt.Errorf("writing the local file: %w", err)
	}
	loc := side{present: true, sha: it.rem.sha}
	p.record(it, loc, it.rem)
	p.done(OpDownload, it.key, "")
	return nil
}

func (p *pass) deleteRemote(ctx context.Context, it *item) error {
	err := p.gate.Remove(ctx, memory.PathOf(it.key), it.rem.version)
	switch {
	case errors.Is(err, memory.ErrNotFound):
	case errors.Is(err, memory.ErrConflict), errors.Is(err, memory.ErrNotFile):
		return fmt.Errorf("not deleted: the store's copy changed during the sync; it is synced on the next pass")
	case err != nil:
		return fmt.Errorf("deleting from the store: %w", err)
	}
	delete(p.state.Files, it.key)
	p.done(OpDeleteRemote, it.key, "")
	return nil
}

func (p *pass) deleteLocal(it *item) error {
	err := p.local.remove(it.key, it.loc.sha)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("deleting the local file: %w", err)
	}
	delete(p.state.Files, it.key)
	p.done(OpDeleteLocal, it.key, "")
	return nil
}

// conflict keeps both contents: the local one under the conflict name on
// both sides, the store's under the file's own name on both sides. Each
// step can be repeated, so an interrupted resolution finishes next pass.
func (p *pass) conflict(ctx context.Context, it *item) error {
	if err := p.readLocal(it); err != nil || it.key == "" {
		return err
	}
	if err := p.readRemote(ctx, it); err != nil || it.key == "" {
		return err
	}
	ck := it.conflictKey
	if reason := validKey(ck); reason != "" {
		return fmt.Errorf("changed on both sides, and the conflict name %s %s; nothing was changed", ck, reason)
	}
	// 1. The local content, under the conflict name, in the store.
	version, err := p.gate.Write(ctx, memory.PathOf(ck), it.loc.data, "")
	if errors.Is(err, memory.ErrExists) {
		var (
			data []byte
			info blob.Info
		)
		data, info, err = getBounded(ctx, p.store, ck, p.opts.MaxFileBytes)
		if err == nil && hashOf(data) != it.loc.sha {
			err = fmt.Errorf("the conflict name %s is taken by other content", ck)
		}
		version = info.Version
	}
	if err != nil {
		return fmt.Errorf("keeping the local content in the store: %w", err)
	}
	// 2. The local content, under the conflict name, here.
	err = p.local.write(ck, it.loc.data, absent)
	if errors.Is(err, errChangedMeanwhile) { // there already: the same content?
		err = p.local.check(ck, it.loc.sha)
	}
	if err != nil {
		return fmt.Errorf("keeping the local content: %w", err)
	}
	both := side{present: true, sha: it.loc.sha, version: version}
	p.record(&item{key: ck}, both, both)
	// 3. The store's content under the file's name, here.
	if err := p.local.write(it.key, it.rem.data, it.loc.sha); err != nil {
		return fmt.Errorf("writing the store's content: %w", err)
	}
	p.record(it, side{present: true, sha: it.rem.sha}, it.rem)
	p.done(OpConflict, it.key, ck)
	return nil
}

// conflictKey is the name a conflicting local content is kept under:
// notes.md → notes.conflict-MACHINE-1a2b3c4d.md.
func conflictKey(key, machine, sha string) string {
	dir, base := path.Split(key)
	ext := path.Ext(base)
	if ext == base { // ".hidden" has no extension
		ext = ""
	}
	stem := strings.TrimSuffix(base, ext)
	m := strings.Map(func(r rune) rune {
		if r == '/' || r < 0x20 || r == 0x7f || r == '\\' {
			return '_'
		}
		return r
	}, machine)
	return dir + stem + ".conflict-" + m + "-" + sha[:8] + ext
}
