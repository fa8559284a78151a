package mrt

/*
#include <stdlib.h>
#include "mrt_c.h"
*/
import "C"

import (
	"runtime"
	"sync"
	"unsafe"
)

// Target is a system a graph is built for (mrt_target): the simulated
// IPU's counts and the rates of its cycle cost model. Get one with
// NewTarget and change what you need.
type Target struct{ c C.mrt_target }

// NewTarget is system "gc200", "bow", "c600" or "ipu-model-small" with
// numIPUs IPUs per replica.
func NewTarget(system string, numIPUs uint32) (*Target, error) {
	t := &Target{}
	cSystem := C.CString(system)
	defer C.free(unsafe.Pointer(cSystem))
	err := call(func() C.mrt_status {
		return C.mrt_target_init_sized(cSystem, C.uint32_t(numIPUs), &t.c, C.size_t(unsafe.Sizeof(t.c)))
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

func (t *Target) Name() string             { return C.GoString(t.c.name) }
func (t *Target) IPUVersion() uint32       { return uint32(t.c.ipu_version) }
func (t *Target) NumIPUs() uint32          { return uint32(t.c.num_ipus) }
func (t *Target) TilesPerIPU() uint32      { return uint32(t.c.tiles_per_ipu) }
func (t *Target) BytesPerTile() uint64     { return uint64(t.c.bytes_per_tile) }
func (t *Target) ClockHz() float64         { return float64(t.c.clock_hz) }
func (t *Target) SetTilesPerIPU(n uint32)  { t.c.tiles_per_ipu = C.uint32_t(n) }
func (t *Target) SetBytesPerTile(n uint64) { t.c.bytes_per_tile = C.uint64_t(n) }
func (t *Target) SetClockHz(hz float64)    { t.c.clock_hz = C.double(hz) }

// Ids of graph objects: 64-bit values owned by their graph.
type (
	TensorID       uint64
	ComputeSetID   uint64
	VertexID       uint64
	StreamID       uint64
	RemoteBufferID uint64
	FunctionID     uint64
	ProgramID      uint64
)

// Graph is what one replica holds and does: tensors mapped to tiles,
// compute sets of vertices, host FIFOs, remote buffers and programs
// (docs/graph.md). Calls are serialized by the library; any goroutine.
type Graph struct {
	mu  sync.RWMutex
	ptr *C.mrt_graph
}

// NewGraph is an empty graph for target (nil: a single GC200) and replicas.
func NewGraph(target *Target, replicas uint32) (*Graph, error) {
	var cTarget *C.mrt_target
	if target != nil {
		cTarget = &target.c
	}
	var ptr *C.mrt_graph
	if err := call(func() C.mrt_status { return C.mrt_graph_create(cTarget, C.uint32_t(replicas), &ptr) }); err != nil {
		return nil, err
	}
	g := &Graph{ptr: ptr}
	runtime.SetFinalizer(g, (*Graph).Close)
	return g, nil
}

// Close frees the graph and invalidates its ids. Idempotent.
func (g *Graph) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ptr != nil {
		C.mrt_graph_destroy(g.ptr)
		g.ptr = nil
		runtime.SetFinalizer(g, nil)
	}
	return nil
}

func (g *Graph) do(f func(*C.mrt_graph) C.mrt_status) error {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.ptr == nil {
		return closedError("Graph")
	}
	return call(func() C.mrt_status { return f(g.ptr) })
}

// id runs a call that makes one object and returns its id.
func (g *Graph) id(f func(*C.mrt_graph, *C.uint64_t) C.mrt_status) (uint64, error) {
	var out C.uint64_t
	err := g.do(func(p *C.mrt_graph) C.mrt_status { return f(p, &out) })
	return uint64(out), err
}

// withStrings runs f with C copies of names (freed after).
func withStrings(names []string, f func(cs cStrings) (uint64, error)) (uint64, error) {
	cs := newCStrings(names)
	defer cs.free()
	return f(cs)
}

func cShape(shape []uint64) (*C.uint64_t, func()) {
	p := cUint64s(shape)
	return (*C.uint64_t)(p), func() { C.free(p) }
}

// Target is the graph's target.
func (g *Graph) Target() (*Target, error) {
	t := &Target{}
	t.c.struct_size = C.size_t(unsafe.Sizeof(t.c))
	err := g.do(func(p *C.mrt_graph) C.mrt_status { return C.mrt_graph_get_target(p, &t.c) })
	return t, err
}

// ReplicationFactor is the graph's number of replicas.
func (g *Graph) ReplicationFactor() (uint32, error) {
	var n C.uint32_t
	err := g.do(func(p *C.mrt_graph) C.mrt_status { return C.mrt_graph_replication_factor(p, &n) })
	return uint32(n), err
}

// AddVariable adds a variable of type and shape (device memory, zero after load).
func (g *Graph) AddVariable(dataType DataType, shape []uint64, name string) (TensorID, error) {
	s, free := cShape(shape)
	defer free()
	id, err := withStrings([]string{name}, func(cs cStrings) (uint64, error) {
		return g.id(func(p *C.mrt_graph, out *C.uint64_t) C.mrt_status {
			return C.mrt_graph_add_variable(p, C.int32_t(dataType), s, C.size_t(len(shape)), cs[0], out)
		})
	})
	return TensorID(id), err
}

// AddConstant adds a constant of values' type and shape.
func AddConstant[T Element](g *Graph, values []T, shape []uint64, name string) (TensorID, error) {
	t := NewTensor(values)
	s, free := cShape(shape)
	defer free()
	data := cBytes(t.Data)
	defer C.free(data)
	id, err := withStrings([]string{name}, func(cs cStrings) (uint64, error) {
		return g.id(func(p *C.mrt_graph, out *C.uint64_t) C.mrt_status {
			return C.mrt_graph_add_constant(p, C.int32_t(t.Type), s, C.size_t(len(shape)), data,
				C.uint64_t(len(t.Data)), cs[0], out)
		})
	})
	return TensorID(id), err
}

// AddConstantFilled adds a constant with every element value.
func (g *Graph) AddConstantFilled(dataType DataType, shape []uint64, value float64, name string) (TensorID, error) {
	s, free := cShape(shape)
	defer free()
	id, err := withStrings([]string{name}, func(cs cStrings) (uint64, error) {
		return g.id(func(p *C.mrt_graph, out *C.uint64_t) C.mrt_status {
			return C.mrt_graph_add_constant_filled(p, C.int32_t(dataType), s, C.size_t(len(shape)), C.double(value), cs[0], out)
		})
	})
	return TensorID(id), err
}

// TensorInfo is what a tensor is.
type TensorInfo struct {
	DataType     DataType
	Shape        []uint64
	NumElements  uint64
	NumBytes     uint64
	IsContiguous bool
	IsConstant   bool
}

// TensorInfo describes tensor.
func (g *Graph) TensorInfo(tensor TensorID) (info TensorInfo, err error) {
	var c C.mrt_tensor_info
	c.struct_size = C.size_t(unsafe.Sizeof(c))
	err = g.do(func(p *C.mrt_graph) C.mrt_status {
		status := C.mrt_graph_tensor_info(p, C.mrt_tensor(tensor), &c)
		if status == C.MRT_OK {
			info = TensorInfo{DataType(c.data_type), uint64s(unsafe.Pointer(c.shape), int(c.rank)),
				uint64(c.num_elements), uint64(c.num_bytes), bool(c.is_contiguous), bool(c.is_constant)}
		}
		return status
	})
	return info, err
}

// Slice is elements [begin, end) of dimension dim.
func (g *Graph) Slice(tensor TensorID, begin, end uint64, dim uint32) (TensorID, error) {
	id, err := g.id(func(p *C.mrt_graph, out *C.uint64_t) C.mrt_status {
		return C.mrt_graph_slice(p, C.mrt_tensor(tensor), C.uint64_t(begin), C.uint64_t(end), C.uint32_t(dim), out)
	})
	return TensorID(id), err
}

// Index is element index of dimension 0, dropping the dimension.
func (g *Graph) Index(tensor TensorID, index uint64) (TensorID, error) {
	id, err := g.id(func(p *C.mrt_graph, out *C.uint64_t) C.mrt_status {
		return C.mrt_graph_index(p, C.mrt_tensor(tensor), C.uint64_t(index), out)
	})
	return TensorID(id), err
}

// Reshape is the same elements in shape.
func (g *Graph) Reshape(tensor TensorID, shape []uint64) (TensorID, error) {
	s, free := cShape(shape)
	defer free()
	id, err := g.id(func(p *C.mrt_graph, out *C.uint64_t) C.mrt_status {
		return C.mrt_graph_reshape(p, C.mrt_tensor(tensor), s, C.size_t(len(shape)), out)
	})
	return TensorID(id), err
}

// Flatten is the tensor as one dimension.
func (g *Graph) Flatten(tensor TensorID) (TensorID, error) {
	id, err := g.id(func(p *C.mrt_graph, out *C.uint64_t) C.mrt_status {
		return C.mrt_graph_flatten(p, C.mrt_tensor(tensor), out)
	})
	return TensorID(id), err
}

// Transpose swaps the two dimensions of a rank-2 tensor.
func (g *Graph) Transpose(tensor TensorID) (TensorID, error) {
	id, err := g.id(func(p *C.mrt_graph, out *C.uint64_t) C.mrt_status {
		return C.mrt_graph_transpose(p, C.mrt_tensor(tensor), out)
	})
	return TensorID(id), err
}

// Concat joins tensors along dim.
func (g *Graph) Concat(tensors []TensorID, dim uint32) (TensorID, error) {
	ids := make([]uint64, len(tensors))
	for i, t := range tensors {
		ids[i] = uint64(t)
	}
	list, free := cShape(ids)
	defer free()
	id, err := g.id(func(p *C.mrt_graph, out *C.uint64_t) C.mrt_status {
		return C.mrt_graph_concat(p, list, C.size_t(len(ids)), C.uint32_t(dim), out)
	})
	return TensorID(id), err
}

// SetTileMapping puts every element of tensor on tile.
func (g *Graph) SetTileMapping(tensor TensorID, tile uint32) error {
	return g.do(func(p *C.mrt_graph) C.mrt_status {
		return C.mrt_graph_set_tile_mapping(p, C.mrt_tensor(tensor), C.uint32_t(tile))
	})
}

// MapLinearly spreads tensor over tiles [firstTile, firstTile+numTiles)
// (numTiles 0: to the last) in chunks of at least grainSize elements.
func (g *Graph) MapLinearly(tensor TensorID, grainSize uint64, firstTile, numTiles uint32) error {
	return g.do(func(p *C.mrt_graph) C.mrt_status {
		return C.mrt_graph_map_linearly(p, C.mrt_tensor(tensor), C.uint64_t(grainSize), C.uint32_t(firstTile), C.uint32_t(numTiles))
	})
}

// TileInterval is flat elements [Begin, End) of a tensor on Tile.
type TileInterval struct {
	Begin, End uint64
	Tile       uint32
}

// TileMapping is the tensor's mapping as runs of elements.
func (g *Graph) TileMapping(tensor TensorID) (intervals []TileInterval, err error) {
	err = g.do(func(p *C.mrt_graph) C.mrt_status {
		var count C.size_t
		if status := C.mrt_graph_tile_mapping(p, C.mrt_tensor(tensor), nil, 0, &count); status != C.MRT_OK {
			return status
		}
		list := (*C.mrt_tile_interval)(C.calloc(count+1, C.sizeof_mrt_tile_interval))
		defer C.free(unsafe.Pointer(list))
		status := C.mrt_graph_tile_mapping(p, C.mrt_tensor(tensor), list, count, &count)
		for _, c := range unsafe.Slice(list, int(count)) {
			intervals = append(intervals, TileInterval{uint64(c.begin), uint64(c.end), uint32(c.tile)})
		}
		return status
	})
	return intervals, err
}

// AddComputeSet adds an empty compute set.
func (g *Graph) AddComputeSet(name string) (ComputeSetID, error) {
	id, err := withStrings([]string{name}, func(cs cStrings) (uint64, error) {
		return g.id(func(p *C.mrt_graph, out *C.uint64_t) C.mrt_status { return C.mrt_graph_add_compute_set(p, cs[0], out) })
	})
	return ComputeSetID(id), err
}

// AddVertex adds a vertex of the built-in codelet on tile to a compute set.
func (g *Graph) AddVertex(computeSet ComputeSetID, codelet string, tile uint32) (VertexID, error) {
	id, err := withStrings([]string{codelet}, func(cs cStrings) (uint64, error) {
		return g.id(func(p *C.mrt_graph, out *C.uint64_t) C.mrt_status {
			return C.mrt_graph_add_vertex(p, C.mrt_compute_set(computeSet), cs[0], C.uint32_t(tile), out)
		})
	})
	return VertexID(id), err
}

// Connect connects field of vertex to tensor.
func (g *Graph) Connect(vertex VertexID, field string, tensor TensorID) error {
	_, err := withStrings([]string{field}, func(cs cStrings) (uint64, error) {
		return 0, g.do(func(p *C.mrt_graph) C.mrt_status {
			return C.mrt_graph_connect(p, C.mrt_vertex(vertex), cs[0], C.mrt_tensor(tensor))
		})
	})
	return err
}

// SetVertexAttribute sets attribute of vertex (no values: its default).
func (g *Graph) SetVertexAttribute(vertex VertexID, attribute string, values ...float64) error {
	cValues := C.calloc(C.size_t(len(values)+1), 8)
	defer C.free(cValues)
	copy(unsafe.Slice((*float64)(cValues), len(values)), values)
	_, err := withStrings([]string{attribute}, func(cs cStrings) (uint64, error) {
		return 0, g.do(func(p *C.mrt_graph) C.mrt_status {
			return C.mrt_graph_set_vertex_attribute(p, C.mrt_vertex(vertex), cs[0], (*C.double)(cValues), C.size_t(len(values)))
		})
	})
	return err
}

// AddHostToDeviceFIFO adds a stream the host writes, numElements per copy.
func (g *Graph) AddHostToDeviceFIFO(handle string, dataType DataType, numElements uint64) (StreamID, error) {
	id, err := withStrings([]string{handle}, func(cs cStrings) (uint64, error) {
		return g.id(func(p *C.mrt_graph, out *C.uint64_t) C.mrt_status {
			return C.mrt_graph_add_host_to_device_fifo(p, cs[0], C.int32_t(dataType), C.uint64_t(numElements), out)
		})
	})
	return StreamID(id), err
}

// AddDeviceToHostFIFO adds a stream the host reads.
func (g *Graph) AddDeviceToHostFIFO(handle string, dataType DataType, numElements uint64) (StreamID, error) {
	id, err := withStrings([]string{handle}, func(cs cStrings) (uint64, error) {
		return g.id(func(p *C.mrt_graph, out *C.uint64_t) C.mrt_status {
			return C.mrt_graph_add_device_to_host_fifo(p, cs[0], C.int32_t(dataType), C.uint64_t(numElements), out)
		})
	})
	return StreamID(id), err
}

// CreateHostWrite and CreateHostRead name tensor for Engine.WriteTensor / ReadTensor.
func (g *Graph) CreateHostWrite(handle string, tensor TensorID) error {
	_, err := withStrings([]string{handle}, func(cs cStrings) (uint64, error) {
		return 0, g.do(func(p *C.mrt_graph) C.mrt_status {
			return C.mrt_graph_create_host_write(p, cs[0], C.mrt_tensor(tensor))
		})
	})
	return err
}

// CreateHostRead names tensor for Engine.ReadTensor.
func (g *Graph) CreateHostRead(handle string, tensor TensorID) error {
	_, err := withStrings([]string{handle}, func(cs cStrings) (uint64, error) {
		return 0, g.do(func(p *C.mrt_graph) C.mrt_status { return C.mrt_graph_create_host_read(p, cs[0], C.mrt_tensor(tensor)) })
	})
	return err
}

// AddRemoteBuffer adds streaming memory of repeats slots of numElements.
func (g *Graph) AddRemoteBuffer(handle string, dataType DataType, numElements, repeats uint64) (RemoteBufferID, error) {
	id, err := withStrings([]string{handle}, func(cs cStrings) (uint64, error) {
		return g.id(func(p *C.mrt_graph, out *C.uint64_t) C.mrt_status {
			return C.mrt_graph_add_remote_buffer(p, cs[0], C.int32_t(dataType), C.uint64_t(numElements), C.uint64_t(repeats), out)
		})
	})
	return RemoteBufferID(id), err
}

// AddFunction makes body a function Call runs from many places.
func (g *Graph) AddFunction(body ProgramID) (FunctionID, error) {
	id, err := g.id(func(p *C.mrt_graph, out *C.uint64_t) C.mrt_status {
		return C.mrt_graph_add_function(p, C.mrt_program(body), out)
	})
	return FunctionID(id), err
}
