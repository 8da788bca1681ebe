package tensor

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"kgen.dev/kgen/ir"
)

// The .npy format is documented in numpy/lib/format.py: a magic string, a
// version, a little-endian header length, and a Python dict literal padded
// so that the data starts on a 64-byte boundary.

const (
	npyMagic      = "\x93NUMPY"
	npyAlign      = 64
	npyGrowDigits = 21 // NumPy leaves room for the first axis to grow to this many digits
	// maxHeaderLen bounds what a corrupt header length can make us allocate.
	// NumPy itself refuses headers over 10000 bytes unless told otherwise.
	maxHeaderLen = 1 << 20
	// eagerDataLen is the largest payload allocated up front; beyond it the
	// buffer grows as data arrives, so a lying shape cannot exhaust memory.
	eagerDataLen = 1 << 26
)

// descrs maps dtypes to the descr WriteNPY writes. bf16 has no NumPy dtype
// and is widened to f32.
var descrs = map[ir.DType]string{
	ir.F64: "<f8", ir.F32: "<f4", ir.F16: "<f2", ir.BF16: "<f4",
	ir.I64: "<i8", ir.I32: "<i4", ir.I8: "|i1", ir.U8: "|u1", ir.Bool: "|b1",
}

var descrKinds = map[string]ir.DType{
	"f8": ir.F64, "f4": ir.F32, "f2": ir.F16,
	"i8": ir.I64, "i4": ir.I32, "i1": ir.I8, "u1": ir.U8, "b1": ir.Bool,
}

var nativeBig = binary.NativeEndian.Uint16([]byte{0, 1}) == 1

// parseDescr returns the dtype of a NumPy type string and whether its bytes
// must be swapped to become little-endian.
func parseDescr(s string) (ir.DType, bool, error) {
	order, kind := byte('='), s
	if s != "" && strings.IndexByte("<>=|", s[0]) >= 0 {
		order, kind = s[0], s[1:]
	}
	dt, ok := descrKinds[kind]
	if !ok {
		return ir.Invalid, false, fmt.Errorf("npy: unsupported descr %q (supported: <f8 <f4 <f2 <i8 <i4 |i1 |u1 |b1)", s)
	}
	swap := dt.Size() > 1 && (order == '>' || (order == '=' || order == '|') && nativeBig)
	return dt, swap, nil
}

// ReadNPY reads one array in NumPy format 1.0, 2.0 or 3.0 and converts it
// to little-endian storage. It reads exactly the array's bytes, so arrays
// written back to back can be read in turn.
func ReadNPY(r io.Reader) (*Tensor, error) {
	var pre [8]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		return nil, fmt.Errorf("npy: reading magic: %w", noEOF(err))
	}
	if string(pre[:6]) != npyMagic {
		return nil, errors.New("npy: not an .npy file (bad magic)")
	}
	var hlen uint64
	switch major, minor := pre[6], pre[7]; {
	case major == 1 && minor == 0:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, fmt.Errorf("npy: reading header length: %w", noEOF(err))
		}
		hlen = uint64(le.Uint16(b[:]))
	case (major == 2 || major == 3) && minor == 0:
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, fmt.Errorf("npy: reading header length: %w", noEOF(err))
		}
		hlen = uint64(le.Uint32(b[:]))
	default:
		return nil, fmt.Errorf("npy: unsupported format version %d.%d", major, minor)
	}
	if hlen > maxHeaderLen {
		return nil, fmt.Errorf("npy: header length %d exceeds %d bytes", hlen, maxHeaderLen)
	}
	header := make([]byte, hlen)
	if _, err := io.ReadFull(r, header); err != nil {
		return nil, fmt.Errorf("npy: reading header: %w", noEOF(err))
	}
	dt, swap, shape, err := parseHeader(header)
	if err != nil {
		return nil, err
	}
	n, ok := numElements(shape, dt.Size())
	if !ok {
		return nil, fmt.Errorf("npy: shape %v is too large", shape)
	}
	data, err := readData(r, n*int64(dt.Size()))
	if err != nil {
		return nil, err
	}
	if swap {
		swapBytes(data, dt.Size())
	}
	if dt == ir.Bool {
		for i, b := range data {
			data[i] = boolByte(b != 0)
		}
	}
	return &Tensor{DType: dt, Shape: shape, Data: data}, nil
}

// noEOF reports a clean EOF inside an array as what it is: truncation.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

func readData(r io.Reader, size int64) ([]byte, error) {
	if size <= eagerDataLen {
		data := make([]byte, size)
		if got, err := io.ReadFull(r, data); err != nil {
			return nil, fmt.Errorf("npy: data truncated: got %d of %d bytes: %w", got, size, noEOF(err))
		}
		return data, nil
	}
	data, err := io.ReadAll(io.LimitReader(r, size))
	if err != nil {
		return nil, fmt.Errorf("npy: reading data: %w", err)
	}
	if int64(len(data)) != size {
		return nil, fmt.Errorf("npy: data truncated: got %d of %d bytes", len(data), size)
	}
	return data, nil
}

func swapBytes(data []byte, size int) {
	for i := 0; i+size <= len(data); i += size {
		e := data[i : i+size]
		for a, b := 0, size-1; a < b; a, b = a+1, b-1 {
			e[a], e[b] = e[b], e[a]
		}
	}
}

// parseHeader checks the header dict the way numpy.lib.format does: exactly
// the keys descr, fortran_order and shape, with a tuple of non-negative ints
// for the shape.
func parseHeader(h []byte) (dt ir.DType, swap bool, shape []int64, err error) {
	p := &pyParser{s: h}
	v, err := p.parse()
	if err != nil {
		return ir.Invalid, false, nil, fmt.Errorf("npy: malformed header: %w", err)
	}
	d, ok := v.(pyDict)
	if !ok {
		return ir.Invalid, false, nil, errors.New("npy: malformed header: not a dict")
	}
	for k := range d {
		if k != "descr" && k != "fortran_order" && k != "shape" {
			return ir.Invalid, false, nil, fmt.Errorf("npy: unexpected header key %q", k)
		}
	}
	descr, ok := d["descr"].(string)
	if !ok {
		if _, present := d["descr"]; !present {
			return ir.Invalid, false, nil, errors.New("npy: header lacks 'descr'")
		}
		return ir.Invalid, false, nil, errors.New("npy: unsupported descr: structured dtypes are not supported")
	}
	if dt, swap, err = parseDescr(descr); err != nil {
		return ir.Invalid, false, nil, err
	}
	fortran, ok := d["fortran_order"].(bool)
	if !ok {
		return ir.Invalid, false, nil, errors.New("npy: header lacks a boolean 'fortran_order'")
	}
	if fortran {
		return ir.Invalid, false, nil, errors.New("npy: fortran_order arrays are not supported; save a C-contiguous array (numpy.ascontiguousarray)")
	}
	tup, ok := d["shape"].(pyTuple)
	if !ok {
		return ir.Invalid, false, nil, errors.New("npy: header lacks a tuple 'shape'")
	}
	shape = make([]int64, len(tup))
	for i, x := range tup {
		n, ok := x.(int64)
		if !ok || n < 0 {
			return ir.Invalid, false, nil, fmt.Errorf("npy: bad shape entry %v", x)
		}
		shape[i] = n
	}
	return dt, swap, shape, nil
}

// WriteNPY writes t in format 1.0, or 2.0 when the header does not fit a
// 16-bit length, with the header NumPy itself would write, so files are
// byte-identical to numpy.save output. bf16 is widened exactly to <f4.
func WriteNPY(w io.Writer, t *Tensor) error {
	descr, ok := descrs[t.DType]
	if !ok {
		return fmt.Errorf("npy: cannot write dtype %v", t.DType)
	}
	if n, ok := numElements(t.Shape, t.DType.Size()); !ok || int64(len(t.Data)) != n*int64(t.DType.Size()) {
		return fmt.Errorf("npy: tensor data is %d bytes, shape %v of %v needs %d", len(t.Data), t.Shape, t.DType, n*int64(t.DType.Size()))
	}
	if _, err := w.Write(npyHeader(descr, t.Shape)); err != nil {
		return err
	}
	if t.DType != ir.BF16 {
		_, err := w.Write(t.Data)
		return err
	}
	bw := bufio.NewWriter(w)
	var b [4]byte
	for i := range t.Len() {
		le.PutUint32(b[:], uint32(le.Uint16(t.Data[2*i:]))<<16) // bf16 is the top half of an f32
		bw.Write(b[:])
	}
	return bw.Flush()
}

// npyHeader mirrors numpy.lib.format._write_array_header, spare growth
// space included.
func npyHeader(descr string, shape []int64) []byte {
	var sb strings.Builder
	fmt.Fprintf(&sb, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr)
	for i, d := range shape {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(strconv.FormatInt(d, 10))
	}
	if len(shape) == 1 {
		sb.WriteByte(',') // Python's one-element tuple
	}
	sb.WriteString("), }")
	if len(shape) > 0 {
		sb.WriteString(strings.Repeat(" ", max(0, npyGrowDigits-len(strconv.FormatInt(shape[0], 10)))))
	}
	h := sb.String()
	hlen := len(h) + 1 // the terminating newline
	major, lenSize := byte(1), 2
	if pad := npyAlign - (len(npyMagic)+2+2+hlen)%npyAlign; hlen+pad > 0xFFFF {
		major, lenSize = 2, 4
	}
	pad := npyAlign - (len(npyMagic)+2+lenSize+hlen)%npyAlign
	out := make([]byte, 0, len(npyMagic)+2+lenSize+hlen+pad)
	out = append(out, npyMagic...)
	out = append(out, major, 0)
	if lenSize == 2 {
		out = le.AppendUint16(out, uint16(hlen+pad))
	} else {
		out = le.AppendUint32(out, uint32(hlen+pad))
	}
	out = append(out, h...)
	out = append(out, strings.Repeat(" ", pad)...)
	return append(out, '\n')
}

// Load reads an .npy file.
func Load(path string) (*Tensor, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err // *PathError already names the path
	}
	defer f.Close()
	t, err := ReadNPY(bufio.NewReader(f))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// Save writes t to path as an .npy file. It writes a temporary file in the
// same directory, syncs it and renames it over path, so a crash or a
// concurrent reader never sees a partial file.
func Save(path string, t *Tensor) error {
	if err := save(path, t); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func save(path string, t *Tensor) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	bw := bufio.NewWriter(f)
	if err = WriteNPY(bw, t); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil { // CreateTemp's 0600 is surprising for data files
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	// Make the rename itself durable; not every platform can sync a
	// directory, and the file is complete either way.
	if d, derr := os.Open(dir); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
