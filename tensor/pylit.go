package tensor

import (
	"errors"
	"fmt"
	"strconv"
)

// The .npy header is a Python literal that NumPy reads with
// ast.literal_eval. pyParser accepts the subset such headers use (dicts,
// tuples, lists, strings, ints, True, False, None), so that headers written
// by other tools with different spacing, quoting or key order still load.

type (
	pyDict  map[string]any
	pyTuple []any
	pyList  []any
)

type pyNone struct{}

// maxPyDepth bounds recursion so hostile headers cannot exhaust the stack.
const maxPyDepth = 32

type pyParser struct {
	s     []byte
	i     int
	depth int
}

// parse reads one literal that must fill the input, trailing whitespace
// (the header's padding) aside.
func (p *pyParser) parse() (any, error) {
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.s) {
		return nil, p.errorf("unexpected %q after the literal", p.s[p.i])
	}
	return v, nil
}

func (p *pyParser) errorf(format string, args ...any) error {
	return fmt.Errorf("offset %d: %s", p.i, fmt.Sprintf(format, args...))
}

func (p *pyParser) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r', '\f', '\v':
			p.i++
		default:
			return
		}
	}
}

func (p *pyParser) value() (any, error) {
	p.space()
	if p.i >= len(p.s) {
		return nil, errors.New("unexpected end of header")
	}
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxPyDepth {
		return nil, p.errorf("nesting deeper than %d", maxPyDepth)
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.dict()
	case c == '(' || c == '[':
		return p.sequence(c)
	case c == '\'' || c == '"':
		return p.str()
	case c == '-' || c == '+' || '0' <= c && c <= '9':
		return p.integer()
	case isIdentByte(c):
		start := p.i
		for p.i < len(p.s) && isIdentByte(p.s[p.i]) {
			p.i++
		}
		switch w := string(p.s[start:p.i]); w {
		case "True":
			return true, nil
		case "False":
			return false, nil
		case "None":
			return pyNone{}, nil
		default:
			p.i = start
			return nil, p.errorf("unsupported name %q", w)
		}
	default:
		return nil, p.errorf("unexpected %q", c)
	}
}

func isIdentByte(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func (p *pyParser) dict() (any, error) {
	p.i++ // '{'
	d := pyDict{}
	for {
		p.space()
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			return d, nil
		}
		k, err := p.value()
		if err != nil {
			return nil, err
		}
		key, ok := k.(string)
		if !ok {
			return nil, p.errorf("dict key %v is not a string", k)
		}
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, p.errorf("expected ':' after key %q", key)
		}
		p.i++
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		d[key] = v // as in Python, a repeated key keeps the last value
		p.space()
		switch {
		case p.i >= len(p.s):
			return nil, errors.New("unterminated dict")
		case p.s[p.i] == ',':
			p.i++
		case p.s[p.i] != '}':
			return nil, p.errorf("expected ',' or '}' in dict")
		}
	}
}

// sequence parses a tuple or list. As in Python, a parenthesized single
// value without a trailing comma is just that value, not a tuple.
func (p *pyParser) sequence(open byte) (any, error) {
	close := byte(')')
	if open == '[' {
		close = ']'
	}
	p.i++
	var items []any
	comma := false
	for {
		p.space()
		if p.i < len(p.s) && p.s[p.i] == close {
			p.i++
			break
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		items = append(items, v)
		p.space()
		switch {
		case p.i >= len(p.s):
			return nil, errors.New("unterminated sequence")
		case p.s[p.i] == ',':
			p.i++
			comma = true
		case p.s[p.i] != close:
			return nil, p.errorf("expected ',' or %q", close)
		}
	}
	switch {
	case open == '[':
		return pyList(items), nil
	case len(items) == 1 && !comma:
		return items[0], nil
	}
	return pyTuple(items), nil
}

func (p *pyParser) str() (any, error) {
	q := p.s[p.i]
	p.i++
	var b []byte
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch {
		case c == q:
			return string(b), nil
		case c == '\\' && p.i < len(p.s):
			// Headers never need escapes; taking the next byte literally is
			// enough to find the end of the string.
			b = append(b, p.s[p.i])
			p.i++
		case c == '\n':
			return nil, p.errorf("newline in string")
		default:
			b = append(b, c)
		}
	}
	return nil, errors.New("unterminated string")
}

func (p *pyParser) integer() (any, error) {
	start := p.i
	if p.s[p.i] == '-' || p.s[p.i] == '+' {
		p.i++
	}
	for p.i < len(p.s) && '0' <= p.s[p.i] && p.s[p.i] <= '9' {
		p.i++
	}
	text := string(p.s[start:p.i])
	if p.i < len(p.s) && (p.s[p.i] == 'L' || p.s[p.i] == 'l') {
		p.i++ // Python 2 long suffix, found in headers written by old NumPy
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		p.i = start
		return nil, p.errorf("bad integer %q", text)
	}
	return n, nil
}
