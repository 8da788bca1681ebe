package cuda

import (
	"regexp"
	"strings"
)

// constDecl matches a line that declares one integer constant: its name
// and its initializer.
var constDecl = regexp.MustCompile(`^\s*const (?:int64_t|int) ([A-Za-z_]\w*) = ([^;]*);(?:\s*//.*)?$`)

// sharedDecl matches a line that declares a shared array of a fixed size
// (a reduction's scratch): its name.
var sharedDecl = regexp.MustCompile(`^\s*__shared__ [A-Za-z_][\w<>, ]* ([A-Za-z_]\w*)\[\d+\];(?:\s*//.*)?$`)

// call matches a function call (a name before a parenthesis); casts such
// as (int64_t)x have none.
var call = regexp.MustCompile(`[A-Za-z_]\w*\s*\(`)

// dropUnused removes from a launch's source the declarations of integer
// constants that nothing after them in their block reads: the loop
// indices a template declares for every statement, which a statement
// that does not read them leaves unused (nvcc warns of each, #177, when
// a user compiles the file with its default warnings), and of fixed-size
// shared arrays that nothing reads (a type's reduction scratch where the
// launch's reductions of that type all take the moments' own). Only
// initializers without calls are dropped (index arithmetic, which has no
// effects); a declaration that only dropped ones read goes too, to a
// fixed point.
func dropUnused(src string) string {
	lines := strings.Split(src, "\n")
	gone := make([]bool, len(lines))
	for changed := true; changed; {
		changed = false
		for i, line := range lines {
			if gone[i] {
				continue
			}
			var name string
			if m := constDecl.FindStringSubmatch(line); m != nil && !call.MatchString(m[2]) && !topLevelComma(m[2]) {
				name = m[1]
			} else if m := sharedDecl.FindStringSubmatch(line); m != nil {
				name = m[1]
			} else {
				continue
			}
			if !readAfter(lines, gone, i, name) {
				gone[i], changed = true, true
			}
		}
	}
	var sb strings.Builder
	for i, line := range lines {
		if gone[i] {
			continue
		}
		sb.WriteString(line)
		if i < len(lines)-1 {
			sb.WriteString("\n")
		}
	}
	return sb.String()
}

// readAfter reports whether a line after line i, up to the end of its
// block, names name outside a comment.
func readAfter(lines []string, gone []bool, i int, name string) bool {
	depth := 0
	for j := i + 1; j < len(lines); j++ {
		if gone[j] {
			continue
		}
		code, _, _ := strings.Cut(lines[j], "//")
		if mentions(code, name) {
			return true
		}
		depth += strings.Count(code, "{") - strings.Count(code, "}")
		if depth < 0 {
			return false
		}
	}
	return false
}

// mentions reports whether code has name as a whole word.
func mentions(code, name string) bool {
	for at := 0; ; {
		k := strings.Index(code[at:], name)
		if k < 0 {
			return false
		}
		k += at
		end := k + len(name)
		if (k == 0 || !wordByte(code[k-1])) && (end == len(code) || !wordByte(code[end])) {
			return true
		}
		at = end
	}
}

func wordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// topLevelComma reports whether s has a comma outside parentheses (a
// second declarator).
func topLevelComma(s string) bool {
	depth := 0
	for _, c := range s {
		switch c {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case ',':
			if depth == 0 {
				return true
			}
		}
	}
	return false
}
