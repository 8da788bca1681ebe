package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"

	"kgen.dev/kgen/diag"
	"kgen.dev/kgen/frontend"
)

func init() {
	register(&command{
		name: "fmt", args: "[-w | -d | -l] FILE...", short: "format specs in the canonical layout",
		long: `
Fmt prints each FILE in kgen's one canonical layout, keeping every comment.
With -w it rewrites the files in place (atomically, and only those that
change); with -d it prints a diff of what would change; with -l it lists
the files whose layout differs. With -d or -l the exit status is 1 when any
file would change, so that build checks can use it. Files with syntax
errors are reported and left alone.`,
		setup: func(fs *flag.FlagSet) func([]string) int {
			write := fs.Bool("w", false, "write the result to the files")
			diff := fs.Bool("d", false, "print diffs instead of the formatted text")
			list := fs.Bool("l", false, "list files whose formatting differs")
			return func(args []string) int {
				if len(args) == 0 {
					return usageError("fmt", "no files given")
				}
				n := 0
				for _, b := range []bool{*write, *diff, *list} {
					if b {
						n++
					}
				}
				if n > 1 {
					return usageError("fmt", "-w, -d and -l exclude each other")
				}
				code := exitOK
				differs := false
				for _, path := range args {
					text, err := os.ReadFile(path)
					if err != nil {
						fmt.Fprintf(stderr, "kgen fmt: %v\n", err)
						code = exitUser
						continue
					}
					var diags diag.List
					f := frontend.Parse(diag.NewSource(path, string(text)), &diags)
					if diags.HasErrors() {
						report(&diags, false)
						code = exitUser
						continue
					}
					out := frontend.Format(f)
					same := bytes.Equal(out, text)
					differs = differs || !same
					switch {
					case *write:
						if !same {
							if err := writeAtomic(path, out); err != nil {
								fmt.Fprintf(stderr, "kgen fmt: %v\n", err)
								code = exitUser
							}
						}
					case *diff:
						if !same {
							fmt.Fprint(stdout, unifiedDiff(path, string(text), string(out)))
						}
					case *list:
						if !same {
							fmt.Fprintln(stdout, path)
						}
					default:
						stdout.Write(out)
					}
				}
				if code == exitOK && differs && (*diff || *list) {
					return exitUser
				}
				return code
			}
		},
	})
}

// writeAtomic replaces path's contents, keeping its permissions.
func writeAtomic(path string, data []byte) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	return writeFileAtomic(path, data, info.Mode().Perm())
}

// unifiedDiff renders a line diff of a and b with three lines of context,
// from a longest-common-subsequence alignment (spec files are small).
func unifiedDiff(path, a, b string) string {
	al, bl := splitLines(a), splitLines(b)
	n, m := len(al), len(bl)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if al[i] == bl[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type op struct {
		kind byte // ' ', '-', '+'
		text string
		ai   int
		bi   int
	}
	var ops []op
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && al[i] == bl[j]:
			ops = append(ops, op{' ', al[i], i, j})
			i++
			j++
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, op{'-', al[i], i, j})
			i++
		default:
			ops = append(ops, op{'+', bl[j], i, j})
			j++
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s (formatted)\n", path, path)
	const ctx = 3
	for k := 0; k < len(ops); {
		if ops[k].kind == ' ' {
			k++
			continue
		}
		start := max(0, k-ctx)
		end := k
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run-end > 2*ctx || run == len(ops) {
				end = min(end+ctx, len(ops))
				break
			}
			end = run
		}
		na, nb := 0, 0
		for _, o := range ops[start:end] {
			if o.kind != '+' {
				na++
			}
			if o.kind != '-' {
				nb++
			}
		}
		fmt.Fprintf(&sb, "@@ -%d,%d +%d,%d @@\n", ops[start].ai+1, na, ops[start].bi+1, nb)
		for _, o := range ops[start:end] {
			fmt.Fprintf(&sb, "%c%s\n", o.kind, o.text)
		}
		k = end
	}
	return sb.String()
}

func splitLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
