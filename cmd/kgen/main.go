// Command kgen is the kgen compiler driver: it checks tensor-op specs,
// shows their IR, formats them and evaluates them with the reference
// interpreter.
//
// Exit codes: 0 success, 1 errors in the user's input (diagnostics were
// printed), 2 bad command-line usage, 3 internal error (a bug in kgen).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"strings"

	"kgen.dev/kgen/frontend"
)

// Exit codes.
const (
	exitOK       = 0
	exitUser     = 1
	exitUsage    = 2
	exitInternal = 3
)

// Version is kgen's version, set at link time by release builds.
var Version = "0.1.0-dev"

type command struct {
	name  string
	args  string // the synopsis after the name
	short string
	long  string
	// setup declares the command's flags; run executes it with the
	// positional arguments.
	setup func(fs *flag.FlagSet) func(args []string) int
}

var commands []*command

func register(c *command) { commands = append(commands, c) }

func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

func main() {
	os.Exit(runMain(os.Args[1:], os.Stdout, os.Stderr))
}

// stdout and stderr are where commands write; tests replace them.
var stdout, stderr io.Writer = os.Stdout, os.Stderr

func runMain(args []string, out, errw io.Writer) (code int) {
	stdout, stderr = out, errw
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "kgen: internal error: %v\nThis is a bug in kgen; please report it with the input that caused it.\n", r)
			if os.Getenv("KGEN_DEBUG") != "" {
				fmt.Fprintf(stderr, "%s", debug.Stack())
			} else {
				fmt.Fprintf(stderr, "(set KGEN_DEBUG=1 for a stack trace)\n")
			}
			code = exitInternal
		}
	}()
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	name := args[0]
	if name == "-h" || name == "--help" || name == "-help" {
		name = "help"
	}
	c := lookup(name)
	if c == nil {
		var names []string
		for _, c := range commands {
			names = append(names, c.name)
		}
		fmt.Fprintf(stderr, "kgen: unknown command %q%s\nRun 'kgen help' for usage.\n", name, closest(name, names))
		return exitUsage
	}
	fs := flag.NewFlagSet("kgen "+c.name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	run := c.setup(fs)
	fs.Usage = func() { commandUsage(stderr, c, fs) }
	pos, err := parseInterspersed(fs, args[1:])
	if errors.Is(err, flag.ErrHelp) {
		commandUsage(stdout, c, fs)
		return exitOK
	}
	if err != nil {
		return exitUsage
	}
	return run(pos)
}

// parseInterspersed parses flags that may come before or after positional
// arguments (`kgen eval FILE --kernel K`); "--" ends the flags.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if rest[0] == "--" {
			return append(pos, rest[1:]...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "kgen is a multi-backend GPU kernel generator for tensor-op specs.\n\nUsage:\n\n\tkgen <command> [arguments]\n\nCommands:\n\n")
	sorted := append([]*command(nil), commands...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].name < sorted[j].name })
	for _, c := range sorted {
		fmt.Fprintf(w, "\t%-10s %s\n", c.name, c.short)
	}
	fmt.Fprintf(w, "\nRun 'kgen help <command>' for details. Exit status: 0 ok, 1 errors in the input, 2 bad usage, 3 internal error.\n")
}

func commandUsage(w io.Writer, c *command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: kgen %s %s\n\n%s\n", c.name, c.args, strings.TrimSpace(c.long))
	hasFlags := false
	fs.VisitAll(func(*flag.Flag) { hasFlags = true })
	if hasFlags {
		fmt.Fprintf(w, "\nFlags:\n")
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(stderr)
	}
}

func usageError(c string, format string, args ...any) int {
	fmt.Fprintf(stderr, "kgen %s: %s\nRun 'kgen help %s' for usage.\n", c, fmt.Sprintf(format, args...), c)
	return exitUsage
}

// closest suggests the command, kernel or instance name nearest a typo.
func closest(name string, names []string) string {
	if best := frontend.Suggest(name, names); best != "" {
		return fmt.Sprintf("; did you mean %q?", best)
	}
	return ""
}

func init() {
	register(&command{
		name: "help", args: "[command]", short: "show help for kgen or one of its commands",
		long: "Help shows the list of commands, or the usage and flags of one.",
		setup: func(fs *flag.FlagSet) func([]string) int {
			return func(args []string) int {
				switch len(args) {
				case 0:
					usage(stdout)
					return exitOK
				case 1:
					c := lookup(args[0])
					if c == nil {
						return usageError("help", "unknown command %q", args[0])
					}
					cfs := flag.NewFlagSet("kgen "+c.name, flag.ContinueOnError)
					c.setup(cfs)
					commandUsage(stdout, c, cfs)
					return exitOK
				}
				return usageError("help", "too many arguments")
			}
		},
	})
	register(&command{
		name: "version", args: "", short: "print kgen's version",
		long: "Version prints kgen's version and the Go toolchain it was built with.",
		setup: func(fs *flag.FlagSet) func([]string) int {
			return func(args []string) int {
				if len(args) > 0 {
					return usageError("version", "takes no arguments")
				}
				goVersion := "unknown"
				if bi, ok := debug.ReadBuildInfo(); ok {
					goVersion = bi.GoVersion
				}
				fmt.Fprintf(stdout, "kgen %s (%s)\n", Version, goVersion)
				return exitOK
			}
		},
	})
}
