package mrt

/*
#include "mrt_c.h"
*/
import "C"

import "unsafe"

// FieldDirection is an mrt_field_direction.
type FieldDirection int32

const (
	FieldIn    FieldDirection = 0
	FieldOut   FieldDirection = 1
	FieldInOut FieldDirection = 2
)

// CodeletField is one field of a codelet.
type CodeletField struct {
	Name      string
	Direction FieldDirection
}

// CodeletAttribute is one attribute of a codelet and its default values.
type CodeletAttribute struct {
	Name     string
	Defaults []float64
}

// Codelet is one built-in codelet a vertex may run.
type Codelet struct {
	Name, Description string
	Fields            []CodeletField
	Attributes        []CodeletAttribute
}

// Codelets lists the built-in codelet library.
func Codelets() ([]Codelet, error) {
	count := int(C.mrt_codelet_count())
	codelets := make([]Codelet, 0, count)
	for i := 0; i < count; i++ {
		index := C.size_t(i)
		var info C.mrt_codelet_info
		info.struct_size = C.size_t(unsafe.Sizeof(info))
		if err := call(func() C.mrt_status { return C.mrt_codelet_get_info(index, &info) }); err != nil {
			return nil, err
		}
		codelet := Codelet{Name: C.GoString(info.name), Description: C.GoString(info.description)}
		for f := C.size_t(0); f < info.num_fields; f++ {
			var name *C.char
			var direction C.int32_t
			if err := call(func() C.mrt_status { return C.mrt_codelet_field(index, f, &name, &direction) }); err != nil {
				return nil, err
			}
			codelet.Fields = append(codelet.Fields, CodeletField{C.GoString(name), FieldDirection(direction)})
		}
		for a := C.size_t(0); a < info.num_attributes; a++ {
			var name *C.char
			var defaults *C.double
			var n C.size_t
			if err := call(func() C.mrt_status { return C.mrt_codelet_attribute(index, a, &name, &defaults, &n) }); err != nil {
				return nil, err
			}
			attribute := CodeletAttribute{Name: C.GoString(name), Defaults: make([]float64, int(n))}
			if n > 0 {
				copy(attribute.Defaults, unsafe.Slice((*float64)(unsafe.Pointer(defaults)), int(n)))
			}
			codelet.Attributes = append(codelet.Attributes, attribute)
		}
		codelets = append(codelets, codelet)
	}
	return codelets, nil
}
