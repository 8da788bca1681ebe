package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(data, '\n'), 0o644)
}

// writeFileAtomic writes a file, new or not, through a temporary file in
// the same directory and a rename: readers see the old file or the whole
// new one, never a part. A file that already holds data, with mode, is
// left as it is, its time too, so that a build system that compares
// outputs' times (ninja's restat) rebuilds nothing downstream of an
// output that did not change.
func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	if sameFile(path, data, mode) {
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".kgen-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), mode); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// sameFile reports whether path is a regular file holding data with
// mode's permissions.
func sameFile(path string, data []byte, mode os.FileMode) bool {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() || st.Mode().Perm() != mode.Perm() || st.Size() != int64(len(data)) {
		return false
	}
	old, err := os.ReadFile(path)
	return err == nil && bytes.Equal(old, data)
}

// specFiles expands args for the commands that take DIR|FILE: a directory
// stands for the .kg files under it (walked in lexical order, so the same
// tree gives the same order), a file for itself.
func specFiles(args []string) ([]string, error) {
	var files []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil || !st.IsDir() {
			files = append(files, a) // loading reports a missing file
			continue
		}
		n := len(files)
		err = filepath.WalkDir(a, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && filepath.Ext(path) == ".kg" {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if len(files) == n {
			return nil, fmt.Errorf("%s: no .kg files in the directory", a)
		}
	}
	return files, nil
}
