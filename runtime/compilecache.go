package runtime

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"
)

// CompileCache keeps what successful compiles wrote and printed, so that
// compiling the same source again with the same tool and flags copies
// the outputs instead of running the tool: a build system rebuilding a
// tree where one spec changed recompiles that spec alone. Sources in
// scratch directories (kgen test's, bench's, tune's, a new one each run)
// are compiled through a copy the cache keeps of their text (stage), so
// that a later run writing the same text elsewhere hits it too.
//
// An entry's key hashes everything the outputs depend on: the tool's
// fingerprint (its path, version and the size and time of the file that
// runs), its arguments, the source's absolute path (nvcc writes it into
// the PTX's and the cubin's line tables, so the outputs of a source
// compiled elsewhere differ) and the source's bytes. A hit is therefore
// byte for byte what the tool would write, but for one field: ptxas
// writes the source's modification time into the cubin's line table,
// and a hit keeps the time of the source it was compiled from (the same
// bytes at the same path), where a compile would take the time kgen
// wrote the source again. Failed compiles are not kept.
//
// Entries are written to a temporary directory and renamed into place,
// so that processes sharing the cache never see half an entry; a hit
// sets its entry's time, and when the cache passes MaxBytes the entries
// used longest ago are removed (checked at most once every TrimEvery).
type CompileCache struct {
	Dir       string
	MaxBytes  int64
	TrimEvery time.Duration
}

// stagedSuffix ends the name of an entry that holds a staged source
// (stage) rather than a compile's outputs.
const stagedSuffix = ".src"

// compileCacheVersion changes when the layout of an entry does.
const compileCacheVersion = "kgen compile cache 1"

// CompileCacheEnv names the environment variable that places the compile
// cache: a directory, or "off" for none.
const CompileCacheEnv = "KGEN_COMPILE_CACHE"

// DefaultCompileCache is the cache that kgen's commands use: the
// directory $KGEN_COMPILE_CACHE, none where it is "off", else kgen/compile
// in the user's cache directory (none where there is no such directory),
// holding at most 2 GiB.
func DefaultCompileCache() *CompileCache {
	dir := os.Getenv(CompileCacheEnv)
	switch dir {
	case "off":
		return nil
	case "":
		d, err := os.UserCacheDir()
		if err != nil {
			return nil
		}
		dir = filepath.Join(d, "kgen", "compile")
	}
	return &CompileCache{Dir: dir, MaxBytes: 2 << 30, TrimEvery: time.Hour}
}

// compileKey is the key of compiling source (read here) with a tool
// whose fingerprint and arguments are given; arguments that name the
// source or the outputs are the caller's to leave out. The source's path
// counts both as given (the tools' messages name it so) and absolute.
func compileKey(fingerprint string, args []string, source string) (string, error) {
	abs, err := filepath.Abs(source)
	if err != nil {
		return "", err
	}
	f, err := os.Open(source)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%d\x00", compileCacheVersion, fingerprint, len(args))
	for _, a := range args {
		fmt.Fprintf(h, "%s\x00", a)
	}
	fmt.Fprintf(h, "%s\x00%s\x00", abs, source)
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func (c *CompileCache) entry(key string) string {
	return filepath.Join(c.Dir, key[:2], key)
}

// fetch copies the outputs of entry key to outs (each through a
// temporary file renamed into place) and returns the logs kept with
// them. ok is false where the entry is missing or damaged (nothing is
// written then) or a copy fails (the compile that follows writes every
// output again).
func (c *CompileCache) fetch(key string, outs []string, logs int) (kept []string, ok bool) {
	if c == nil {
		return nil, false
	}
	dir := c.entry(key)
	if _, err := os.Stat(dir); err != nil {
		return nil, false
	}
	// An entry damaged since it was stored (a file removed by hand) is
	// removed, so that this compile stores it again.
	for i := range logs {
		b, err := os.ReadFile(filepath.Join(dir, "log"+strconv.Itoa(i)))
		if err != nil {
			os.RemoveAll(dir)
			return nil, false
		}
		kept = append(kept, string(b))
	}
	for i := range outs {
		if st, err := os.Stat(filepath.Join(dir, "out"+strconv.Itoa(i))); err != nil || st.Size() == 0 {
			os.RemoveAll(dir)
			return nil, false
		}
	}
	for i, out := range outs {
		if err := copyAtomic(filepath.Join(dir, "out"+strconv.Itoa(i)), out); err != nil {
			return nil, false
		}
	}
	now := time.Now()
	os.Chtimes(dir, now, now) // the entry's use, for trim
	return kept, true
}

// store keeps outs and logs as entry key. A cache that cannot be
// written is no error: the compile has succeeded, and the next one runs
// the tool again.
func (c *CompileCache) store(key string, outs, logs []string) {
	if c == nil {
		return
	}
	final := c.entry(key)
	if _, err := os.Stat(final); err == nil {
		return
	}
	err := publishDir(final, func(tmp string) error {
		for i, out := range outs {
			if err := copyFile(out, filepath.Join(tmp, "out"+strconv.Itoa(i))); err != nil {
				return err
			}
		}
		for i, l := range logs {
			if err := os.WriteFile(filepath.Join(tmp, "log"+strconv.Itoa(i)), []byte(l), 0o644); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return // unwritable, or another process stored it first
	}
	c.maybeTrim()
}

// publishDir makes directory final whole: fill writes its files into a
// new temporary directory beside it, which is then renamed to final, so
// that no process sharing the cache sees it half written. It fails where
// fill does, or where final exists already (another process published
// it first).
func publishDir(final string, fill func(tmp string) error) error {
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(final), ".new-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp) // nothing once renamed
	if err := fill(tmp); err != nil {
		return err
	}
	return os.Rename(tmp, final)
}

// maybeTrim trims the cache where it was last trimmed more than
// TrimEvery ago (the time of the file .trimmed).
func (c *CompileCache) maybeTrim() {
	stamp := filepath.Join(c.Dir, ".trimmed")
	if st, err := os.Stat(stamp); err == nil && time.Since(st.ModTime()) < c.TrimEvery {
		return
	}
	if os.WriteFile(stamp, nil, 0o644) != nil {
		return
	}
	c.Trim()
}

// cacheEntry is an entry (a compile's outputs and logs, or a source's
// staged copy) as scan finds it.
type cacheEntry struct {
	path string
	size int64
	used time.Time
}

// scan lists the cache's entries, and their bytes in all.
func (c *CompileCache) scan() ([]cacheEntry, int64, error) {
	var ents []cacheEntry
	var total int64
	shards, err := os.ReadDir(c.Dir)
	if err != nil {
		return nil, 0, err
	}
	for _, s := range shards {
		if !s.IsDir() || len(s.Name()) != 2 {
			continue
		}
		keys, err := os.ReadDir(filepath.Join(c.Dir, s.Name()))
		if err != nil {
			continue
		}
		for _, k := range keys {
			info, err := k.Info()
			if err != nil || !k.IsDir() || k.Name()[0] == '.' {
				continue
			}
			e := cacheEntry{path: filepath.Join(c.Dir, s.Name(), k.Name()), used: info.ModTime()}
			filepath.WalkDir(e.path, func(_ string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					if fi, err := d.Info(); err == nil {
						e.size += fi.Size()
					}
				}
				return nil
			})
			ents = append(ents, e)
			total += e.size
		}
	}
	return ents, total, nil
}

// Usage reports how many compiles the cache keeps and how many bytes it
// holds (with the staged sources). A cache whose directory does not
// exist yet holds nothing.
func (c *CompileCache) Usage() (compiles int, bytes int64, err error) {
	ents, total, err := c.scan()
	if errors.Is(err, fs.ErrNotExist) {
		return 0, 0, nil
	}
	for _, e := range ents {
		if filepath.Ext(e.path) != stagedSuffix {
			compiles++
		}
	}
	return compiles, total, err
}

// Trim removes the entries used longest ago until the cache holds no
// more than three quarters of MaxBytes, where it holds more than
// MaxBytes.
func (c *CompileCache) Trim() error {
	ents, total, err := c.scan()
	if err != nil {
		return err
	}
	if total <= c.MaxBytes {
		return nil
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].used.Before(ents[j].used) })
	var errs []error
	for _, e := range ents {
		if total <= c.MaxBytes/4*3 {
			break
		}
		if err := os.RemoveAll(e.path); err != nil {
			errs = append(errs, err)
			continue
		}
		total -= e.size
	}
	return errors.Join(errs...)
}

// stage returns the path of a copy of source kept in the cache under a
// name that its bytes give (the directory's) and a fixed base name with
// source's extension, writing it there first where it is not. Compiles
// of a source that lives in a scratch directory (kgen test's, bench's,
// tune's) compile this copy instead, so that the same text compiles to
// the same key wherever and under whatever name it was written.
func (c *CompileCache) stage(source string) (string, error) {
	text, err := os.ReadFile(source)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(text)
	key := hex.EncodeToString(sum[:])
	dir := c.entry(key) + stagedSuffix
	staged := filepath.Join(dir, "kernel"+filepath.Ext(source))
	if b, err := os.ReadFile(staged); err == nil && string(b) == string(text) {
		now := time.Now()
		os.Chtimes(dir, now, now) // the copy's use, for trim
		return staged, nil
	}
	os.RemoveAll(dir) // a damaged copy
	err = publishDir(dir, func(tmp string) error {
		return os.WriteFile(filepath.Join(tmp, filepath.Base(staged)), text, 0o644)
	})
	if err != nil {
		// Another process staged it first: that copy is as good.
		if b, rerr := os.ReadFile(staged); rerr != nil || string(b) != string(text) {
			return "", err
		}
	}
	return staged, nil
}

// copyAtomic copies src to dst through a temporary file in dst's
// directory renamed into place; a dst that holds src's bytes already is
// left as it is, its time too (see cmd/kgen's writeFileAtomic).
func copyAtomic(src, dst string) error {
	if same, err := sameBytes(src, dst); err == nil && same {
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".*.tmp")
	if err != nil {
		return err
	}
	name := tmp.Name()
	tmp.Close()
	defer os.Remove(name) // a no-op once renamed
	if err := copyFile(src, name); err != nil {
		return err
	}
	return os.Rename(name, dst)
}

// sameBytes reports whether files a and b hold the same bytes.
func sameBytes(a, b string) (bool, error) {
	sa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	sb, err := os.Stat(b)
	if err != nil || !sb.Mode().IsRegular() || sa.Size() != sb.Size() {
		return false, err
	}
	ba, err := os.ReadFile(a)
	if err != nil {
		return false, err
	}
	bb, err := os.ReadFile(b)
	if err != nil {
		return false, err
	}
	return bytes.Equal(ba, bb), nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
