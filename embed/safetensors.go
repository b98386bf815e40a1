package embed

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"unsafe"
)

// littleEndian is whether this machine stores a uint16 as safetensors
// does, so half values can be read in place.
var littleEndian = func() bool { x := uint16(1); return *(*byte)(unsafe.Pointer(&x)) == 1 }() // read-only

// tensorFile is a parsed safetensors file (a little-endian header length,
// a JSON header, then raw tensor bytes). Only float16 and float32 tensors are
// supported, which is what the converted model holds.
type tensorFile struct {
	meta    map[string]string
	tensors map[string]tensorEntry
	data    []byte
}

type tensorEntry struct {
	DType   string `json:"dtype"`
	Shape   []int  `json:"shape"`
	Offsets [2]int `json:"data_offsets"`
}

func parseSafetensors(b []byte) (*tensorFile, error) {
	if len(b) < 8 {
		return nil, errors.New("safetensors: file too short")
	}
	n := binary.LittleEndian.Uint64(b[:8])
	if n > uint64(len(b)-8) {
		return nil, fmt.Errorf("safetensors: header length %d exceeds file size %d", n, len(b))
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b[8:8+n], &raw); err != nil {
		return nil, fmt.Errorf("safetensors: header: %w", err)
	}
	f := &tensorFile{tensors: map[string]tensorEntry{}, data: b[8+n:]}
	for name, v := range raw {
		if name == "__metadata__" {
			if err := json.Unmarshal(v, &f.meta); err != nil {
				return nil, fmt.Errorf("safetensors: metadata: %w", err)
			}
			continue
		}
		var e tensorEntry
		if err := json.Unmarshal(v, &e); err != nil {
			return nil, fmt.Errorf("safetensors: tensor %s: %w", name, err)
		}
		if e.Offsets[0] < 0 || e.Offsets[1] < e.Offsets[0] || e.Offsets[1] > len(f.data) {
			return nil, fmt.Errorf("safetensors: tensor %s: offsets %v outside the data", name, e.Offsets)
		}
		f.tensors[name] = e
	}
	return f, nil
}

// float32s returns the named tensor as float32, checking its shape.
func (f *tensorFile) float32s(name string, shape ...int) ([]float32, error) {
	t, err := f.tensor(name, shape...)
	if err != nil || t.f != nil {
		return t.f, err
	}
	return t.float32s(), nil
}

// tensor returns the named tensor as the file stores it, checking its
// shape: IEEE half values or float32.
func (f *tensorFile) tensor(name string, shape ...int) (tensor, error) {
	e, ok := f.tensors[name]
	if !ok {
		return tensor{}, fmt.Errorf("safetensors: no tensor %s", name)
	}
	if fmt.Sprint(e.Shape) != fmt.Sprint(shape) {
		return tensor{}, fmt.Errorf("safetensors: tensor %s has shape %v, want %v", name, e.Shape, shape)
	}
	count := 1
	for _, d := range shape {
		count *= d
	}
	raw := f.data[e.Offsets[0]:e.Offsets[1]]
	switch e.DType {
	case "F16":
		if len(raw) != 2*count {
			return tensor{}, fmt.Errorf("safetensors: tensor %s holds %d bytes, want %d", name, len(raw), 2*count)
		}
		if count > 0 && littleEndian && uintptr(unsafe.Pointer(&raw[0]))%2 == 0 {
			// The file's own bytes, read where they lie: never written.
			return tensor{h: unsafe.Slice((*uint16)(unsafe.Pointer(&raw[0])), count), mapped: true}, nil
		}
		h := make([]uint16, count)
		for i := range h {
			h[i] = binary.LittleEndian.Uint16(raw[2*i:])
		}
		return tensor{h: h}, nil
	case "F32":
		if len(raw) != 4*count {
			return tensor{}, fmt.Errorf("safetensors: tensor %s holds %d bytes, want %d", name, len(raw), 4*count)
		}
		out := make([]float32, count)
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		return tensor{f: out}, nil
	}
	return tensor{}, fmt.Errorf("safetensors: tensor %s has unsupported dtype %s", name, e.DType)
}

// tensor holds a tensor's values as a file stores them: IEEE half values
// in h, or float32 values in f.
type tensor struct {
	h      []uint16
	f      []float32
	mapped bool // h is the file's own bytes, read where they lie
}

// row widens row i of t, a matrix of rows of len(dst) values, into dst,
// exactly.
func (t tensor) row(i int, dst []float32) {
	n := len(dst)
	if t.h == nil {
		copy(dst, t.f[i*n:(i+1)*n])
		return
	}
	halvesToFloats(dst, t.h[i*n:(i+1)*n])
}

// float32s returns t's values as float32, exactly.
func (t tensor) float32s() []float32 {
	if t.h == nil {
		return t.f
	}
	out := make([]float32, len(t.h))
	halvesToFloats(out, t.h)
	return out
}

// halvesToFloats widens the IEEE half values src into dst, exactly.
func halvesToFloats(dst []float32, src []uint16) {
	for i := halvesSIMD(dst, src); i < len(src); i++ {
		dst[i] = halfToFloat(src[i])
	}
}

// halfToFloat converts an IEEE 754 binary16 value to float32 exactly.
func halfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch {
	case exp == 0 && mant == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: normalise it
		e := uint32(127 - 15 + 1)
		for mant&0x400 == 0 {
			mant <<= 1
			e--
		}
		return math.Float32frombits(sign | e<<23 | (mant&0x3ff)<<13)
	case exp == 0x1f:
		return math.Float32frombits(sign | 0xff<<23 | mant<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
}
