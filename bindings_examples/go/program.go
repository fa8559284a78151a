package mrt

/*
#include <stdlib.h>
#include "mrt_c.h"
*/
import "C"

import "unsafe"

// Control programs (Poplar's poplar::program classes) and whole operations
// (a PopLibs-like layer) of a Graph. name may be "" everywhere.

// program runs a call that makes one program, with name as a C string.
func (g *Graph) program(name string, f func(p *C.mrt_graph, name *C.char, out *C.uint64_t) C.mrt_status) (ProgramID, error) {
	cName := optionalCString(name)
	defer C.free(unsafe.Pointer(cName))
	id, err := g.id(func(p *C.mrt_graph, out *C.uint64_t) C.mrt_status { return f(p, cName, out) })
	return ProgramID(id), err
}

func programIDs(programs []ProgramID) (*C.uint64_t, func()) {
	ids := make([]uint64, len(programs))
	for i, p := range programs {
		ids[i] = uint64(p)
	}
	return cShape(ids)
}

// Sequence runs programs in order.
func (g *Graph) Sequence(name string, programs ...ProgramID) (ProgramID, error) {
	list, free := programIDs(programs)
	defer free()
	return g.program(name, func(p *C.mrt_graph, n *C.char, out *C.uint64_t) C.mrt_status {
		return C.mrt_program_sequence(p, list, C.size_t(len(programs)), n, out)
	})
}

// SequenceAdd appends program to a Sequence.
func (g *Graph) SequenceAdd(sequence, program ProgramID) error {
	return g.do(func(p *C.mrt_graph) C.mrt_status {
		return C.mrt_program_sequence_add(p, C.mrt_program(sequence), C.mrt_program(program))
	})
}

// Execute runs a compute set.
func (g *Graph) Execute(computeSet ComputeSetID, name string) (ProgramID, error) {
	return g.program(name, func(p *C.mrt_graph, n *C.char, out *C.uint64_t) C.mrt_status {
		return C.mrt_program_execute(p, C.mrt_compute_set(computeSet), n, out)
	})
}

// Copy copies source to destination.
func (g *Graph) Copy(source, destination TensorID, name string) (ProgramID, error) {
	return g.program(name, func(p *C.mrt_graph, n *C.char, out *C.uint64_t) C.mrt_status {
		return C.mrt_program_copy(p, C.mrt_tensor(source), C.mrt_tensor(destination), n, out)
	})
}

// CopyFromStream copies one transfer of a host-to-device stream to destination.
func (g *Graph) CopyFromStream(stream StreamID, destination TensorID, name string) (ProgramID, error) {
	return g.program(name, func(p *C.mrt_graph, n *C.char, out *C.uint64_t) C.mrt_status {
		return C.mrt_program_copy_from_stream(p, C.mrt_stream(stream), C.mrt_tensor(destination), n, out)
	})
}

// CopyToStream copies source to a device-to-host stream.
func (g *Graph) CopyToStream(source TensorID, stream StreamID, name string) (ProgramID, error) {
	return g.program(name, func(p *C.mrt_graph, n *C.char, out *C.uint64_t) C.mrt_status {
		return C.mrt_program_copy_to_stream(p, C.mrt_tensor(source), C.mrt_stream(stream), n, out)
	})
}

// CopyFromRemoteBuffer copies slot (or, if slotTensor is not 0, the slot it
// holds at run time) of buffer to destination.
func (g *Graph) CopyFromRemoteBuffer(buffer RemoteBufferID, destination TensorID, slot uint64, slotTensor TensorID, name string) (ProgramID, error) {
	return g.program(name, func(p *C.mrt_graph, n *C.char, out *C.uint64_t) C.mrt_status {
		return C.mrt_program_copy_from_remote_buffer(p, C.mrt_remote_buffer(buffer), C.mrt_tensor(destination),
			C.uint64_t(slot), C.mrt_tensor(slotTensor), n, out)
	})
}

// CopyToRemoteBuffer copies source to a slot of buffer, as CopyFromRemoteBuffer.
func (g *Graph) CopyToRemoteBuffer(source TensorID, buffer RemoteBufferID, slot uint64, slotTensor TensorID, name string) (ProgramID, error) {
	return g.program(name, func(p *C.mrt_graph, n *C.char, out *C.uint64_t) C.mrt_status {
		return C.mrt_program_copy_to_remote_buffer(p, C.mrt_tensor(source), C.mrt_remote_buffer(buffer),
			C.uint64_t(slot), C.mrt_tensor(slotTensor), n, out)
	})
}

// Repeat runs body count times.
func (g *Graph) Repeat(count uint64, body ProgramID, name string) (ProgramID, error) {
	return g.program(name, func(p *C.mrt_graph, n *C.char, out *C.uint64_t) C.mrt_status {
		return C.mrt_program_repeat(p, C.uint64_t(count), C.mrt_program(body), n, out)
	})
}

// RepeatWhile runs condition, then body and condition again while the
// scalar predicate is non-zero (whileTrue) or zero.
func (g *Graph) RepeatWhile(condition ProgramID, predicate TensorID, body ProgramID, whileTrue bool, name string) (ProgramID, error) {
	return g.program(name, func(p *C.mrt_graph, n *C.char, out *C.uint64_t) C.mrt_status {
		return C.mrt_program_repeat_while(p, C.mrt_program(condition), C.mrt_tensor(predicate), C.mrt_program(body),
			C.bool(whileTrue), n, out)
	})
}

// If runs thenBody if the scalar predicate is non-zero, else elseBody (0: none).
func (g *Graph) If(predicate TensorID, thenBody, elseBody ProgramID, name string) (ProgramID, error) {
	return g.program(name, func(p *C.mrt_graph, n *C.char, out *C.uint64_t) C.mrt_status {
		return C.mrt_program_if(p, C.mrt_tensor(predicate), C.mrt_program(thenBody), C.mrt_program(elseBody), n, out)
	})
}

// Switch runs the case whose value equals control, else defaultBody (0: none).
func (g *Graph) Switch(control TensorID, defaultBody ProgramID, name string) (ProgramID, error) {
	return g.program(name, func(p *C.mrt_graph, n *C.char, out *C.uint64_t) C.mrt_status {
		return C.mrt_program_switch(p, C.mrt_tensor(control), C.mrt_program(defaultBody), n, out)
	})
}

// SwitchAddCase adds case value to a Switch.
func (g *Graph) SwitchAddCase(switchProgram ProgramID, value int32, body ProgramID) error {
	return g.do(func(p *C.mrt_graph) C.mrt_status {
		return C.mrt_program_switch_add_case(p, C.mrt_program(switchProgram), C.int32_t(value), C.mrt_program(body))
	})
}

// SyncType is an mrt_sync_type.
type SyncType int32

const (
	SyncInternal SyncType = 0
	SyncExternal SyncType = 1
	SyncGlobal   SyncType = 2
)

// Sync synchronizes tiles, IPUs or the host.
func (g *Graph) Sync(syncType SyncType, name string) (ProgramID, error) {
	return g.program(name, func(p *C.mrt_graph, n *C.char, out *C.uint64_t) C.mrt_status {
		return C.mrt_program_sync(p, C.int32_t(syncType), n, out)
	})
}

// Call runs a function.
func (g *Graph) Call(function FunctionID, name string) (ProgramID, error) {
	return g.program(name, func(p *C.mrt_graph, n *C.char, out *C.uint64_t) C.mrt_status {
		return C.mrt_program_call(p, C.mrt_function(function), n, out)
	})
}

// WriteUndef marks tensor's contents dead.
func (g *Graph) WriteUndef(tensor TensorID, name string) (ProgramID, error) {
	return g.program(name, func(p *C.mrt_graph, n *C.char, out *C.uint64_t) C.mrt_status {
		return C.mrt_program_write_undef(p, C.mrt_tensor(tensor), n, out)
	})
}

// PrintTensor prints "title: [...]" to the engine's print stream.
func (g *Graph) PrintTensor(title string, tensor TensorID) (ProgramID, error) {
	return g.program(title, func(p *C.mrt_graph, n *C.char, out *C.uint64_t) C.mrt_status {
		return C.mrt_program_print_tensor(p, n, C.mrt_tensor(tensor), out)
	})
}

// Tiles is a range of tiles [First, First+Count) of an operation; the zero
// value is every tile.
type Tiles struct{ First, Count uint32 }

// op runs an operation call that makes one tensor, with name as a C string.
func (g *Graph) op(name string, f func(p *C.mrt_graph, name *C.char, out *C.uint64_t) C.mrt_status) (TensorID, error) {
	id, err := g.program(name, f)
	return TensorID(id), err
}

// CreateTensor is a new variable of shape spread over tiles in whole rows.
func (g *Graph) CreateTensor(dataType DataType, shape []uint64, name string, tiles Tiles) (TensorID, error) {
	s, free := cShape(shape)
	defer free()
	return g.op(name, func(p *C.mrt_graph, n *C.char, out *C.uint64_t) C.mrt_status {
		return C.mrt_ops_create_tensor(p, C.int32_t(dataType), s, C.size_t(len(shape)), n, C.uint32_t(tiles.First), C.uint32_t(tiles.Count), out)
	})
}

// Unary is codelet(in) elementwise, appended to sequence; outType -1 keeps in's type.
func (g *Graph) Unary(sequence ProgramID, codelet string, in TensorID, outType DataType, name string) (TensorID, error) {
	cCodelet := C.CString(codelet)
	defer C.free(unsafe.Pointer(cCodelet))
	return g.op(name, func(p *C.mrt_graph, n *C.char, out *C.uint64_t) C.mrt_status {
		return C.mrt_ops_unary(p, C.mrt_program(sequence), cCodelet, C.mrt_tensor(in), C.int32_t(outType), n, out)
	})
}

// Binary is codelet(a, b) elementwise, appended to sequence.
func (g *Graph) Binary(sequence ProgramID, codelet string, a, b TensorID, name string) (TensorID, error) {
	cCodelet := C.CString(codelet)
	defer C.free(unsafe.Pointer(cCodelet))
	return g.op(name, func(p *C.mrt_graph, n *C.char, out *C.uint64_t) C.mrt_status {
		return C.mrt_ops_binary(p, C.mrt_program(sequence), cCodelet, C.mrt_tensor(a), C.mrt_tensor(b), n, out)
	})
}

// BinaryInPlace is a = codelet(a, b).
func (g *Graph) BinaryInPlace(sequence ProgramID, codelet string, a, b TensorID) error {
	cCodelet := C.CString(codelet)
	defer C.free(unsafe.Pointer(cCodelet))
	return g.do(func(p *C.mrt_graph) C.mrt_status {
		return C.mrt_ops_binary_in_place(p, C.mrt_program(sequence), cCodelet, C.mrt_tensor(a), C.mrt_tensor(b))
	})
}

// Fill sets every element of tensor to value.
func (g *Graph) Fill(sequence ProgramID, tensor TensorID, value float64) error {
	return g.do(func(p *C.mrt_graph) C.mrt_status {
		return C.mrt_ops_fill(p, C.mrt_program(sequence), C.mrt_tensor(tensor), C.double(value))
	})
}

// MatMul is [M,K] x [K,N] -> [M,N] of outType (-1: F32, F16 for F16 inputs).
func (g *Graph) MatMul(sequence ProgramID, a, b TensorID, outType DataType, name string, tiles Tiles) (TensorID, error) {
	return g.op(name, func(p *C.mrt_graph, n *C.char, out *C.uint64_t) C.mrt_status {
		return C.mrt_ops_matmul(p, C.mrt_program(sequence), C.mrt_tensor(a), C.mrt_tensor(b), C.int32_t(outType), n,
			C.uint32_t(tiles.First), C.uint32_t(tiles.Count), out)
	})
}

// MatMulOperand is which operand CreateMatMulInput lays out (mrt_matmul_operand).
type MatMulOperand int32

const (
	MatMulLHS MatMulOperand = 0
	MatMulRHS MatMulOperand = 1
)

// CreateMatMulInput is a variable laid out as MatMul over the same tiles
// uses its operand of an aShape x bShape product.
func (g *Graph) CreateMatMulInput(operand MatMulOperand, dataType DataType, aShape, bShape [2]uint64, name string, tiles Tiles) (TensorID, error) {
	a, freeA := cShape(aShape[:])
	defer freeA()
	b, freeB := cShape(bShape[:])
	defer freeB()
	return g.op(name, func(p *C.mrt_graph, n *C.char, out *C.uint64_t) C.mrt_status {
		return C.mrt_ops_create_matmul_input(p, C.int32_t(operand), C.int32_t(dataType), a, b, n,
			C.uint32_t(tiles.First), C.uint32_t(tiles.Count), out)
	})
}

// Reduce reduces in over axes (none: all) with codelet (ReduceSum, ...).
func (g *Graph) Reduce(sequence ProgramID, codelet string, in TensorID, axes []uint64, name string, tiles Tiles) (TensorID, error) {
	cCodelet := C.CString(codelet)
	defer C.free(unsafe.Pointer(cCodelet))
	list, free := cShape(axes)
	defer free()
	return g.op(name, func(p *C.mrt_graph, n *C.char, out *C.uint64_t) C.mrt_status {
		return C.mrt_ops_reduce(p, C.mrt_program(sequence), cCodelet, C.mrt_tensor(in), list, C.size_t(len(axes)), n,
			C.uint32_t(tiles.First), C.uint32_t(tiles.Count), out)
	})
}

// Softmax over the last dimension.
func (g *Graph) Softmax(sequence ProgramID, in TensorID, name string, tiles Tiles) (TensorID, error) {
	return g.op(name, func(p *C.mrt_graph, n *C.char, out *C.uint64_t) C.mrt_status {
		return C.mrt_ops_softmax(p, C.mrt_program(sequence), C.mrt_tensor(in), n, C.uint32_t(tiles.First), C.uint32_t(tiles.Count), out)
	})
}

// ArgMax (S32 indices) over the last dimension.
func (g *Graph) ArgMax(sequence ProgramID, in TensorID, name string, tiles Tiles) (TensorID, error) {
	return g.op(name, func(p *C.mrt_graph, n *C.char, out *C.uint64_t) C.mrt_status {
		return C.mrt_ops_argmax(p, C.mrt_program(sequence), C.mrt_tensor(in), n, C.uint32_t(tiles.First), C.uint32_t(tiles.Count), out)
	})
}
