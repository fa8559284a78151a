package mrt

import (
	"fmt"
	"unsafe"
)

// DataType is an element type (mrt_data_type); the values are PopEF's.
type DataType int32

const (
	Bool DataType = 0
	U8   DataType = 1
	S8   DataType = 2
	U16  DataType = 3
	S16  DataType = 4
	S32  DataType = 5
	U32  DataType = 6
	S64  DataType = 7
	U64  DataType = 8
	F16  DataType = 9
	F32  DataType = 10
	F64  DataType = 11
)

var dataTypeNames = [...]string{"BOOL", "U8", "S8", "U16", "S16", "S32", "U32", "S64", "U64", "F16", "F32", "F64"}
var dataTypeSizes = [...]int{1, 1, 1, 2, 2, 4, 4, 8, 8, 2, 4, 8}

func (t DataType) String() string {
	if t >= 0 && int(t) < len(dataTypeNames) {
		return dataTypeNames[t]
	}
	return fmt.Sprintf("DataType(%d)", int32(t))
}

// Size is the bytes of one element (0 for an unknown type).
func (t DataType) Size() int {
	if t >= 0 && int(t) < len(dataTypeSizes) {
		return dataTypeSizes[t]
	}
	return 0
}

// Float16 is an IEEE half-precision value, as its bits (the F16 type).
type Float16 uint16

// Element is a Go type of each DataType: bool (BOOL), uint8, int8, uint16,
// int16, int32, uint32, int64, uint64, Float16, float32, float64.
type Element interface {
	bool | uint8 | int8 | uint16 | int16 | int32 | uint32 | int64 | uint64 | Float16 | float32 | float64
}

// TypeOf is the DataType of Go element type T.
func TypeOf[T Element]() DataType {
	var zero T
	switch any(zero).(type) {
	case bool:
		return Bool
	case uint8:
		return U8
	case int8:
		return S8
	case uint16:
		return U16
	case int16:
		return S16
	case int32:
		return S32
	case uint32:
		return U32
	case int64:
		return S64
	case uint64:
		return U64
	case Float16:
		return F16
	case float32:
		return F32
	default:
		return F64
	}
}

// Tensor is the bytes of one tensor and their element type. Shape is
// informative (the library checks sizes; the Go binding checks the type
// and that the size is whole batches of the model's shape).
type Tensor struct {
	Type  DataType
	Shape []int64
	Data  []byte
}

// NewTensor views values as a Tensor without copying them: the tensor's
// Data is values' memory.
func NewTensor[T Element](values []T, shape ...int64) Tensor {
	var zero T
	var data []byte
	if len(values) > 0 {
		data = unsafe.Slice((*byte)(unsafe.Pointer(&values[0])), len(values)*int(unsafe.Sizeof(zero)))
	}
	return Tensor{Type: TypeOf[T](), Shape: shape, Data: data}
}

// Zeros is a tensor of shape and type filled with zeros.
func Zeros(t DataType, shape ...int64) Tensor {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	return Tensor{Type: t, Shape: shape, Data: make([]byte, n*int64(t.Size()))}
}

// Values views the tensor's bytes as []T without copying; an error if T is
// not the tensor's type or the bytes are not whole elements.
func Values[T Element](t Tensor) ([]T, error) {
	var zero T
	size := int(unsafe.Sizeof(zero))
	if want := TypeOf[T](); want != t.Type {
		return nil, bindingError(InvalidArgument, "the tensor holds %v, not %v", t.Type, want)
	}
	if len(t.Data)%size != 0 {
		return nil, bindingError(InvalidArgument, "the tensor has %d bytes, not whole %v elements", len(t.Data), t.Type)
	}
	if len(t.Data) == 0 {
		return []T{}, nil
	}
	if uintptr(unsafe.Pointer(&t.Data[0]))%unsafe.Alignof(zero) != 0 {
		values := make([]T, len(t.Data)/size)
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&values[0])), len(t.Data)), t.Data)
		return values, nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&t.Data[0])), len(t.Data)/size), nil
}
