package mrt

/*
#include <stdlib.h>
#include "requests.h"
*/
import "C"

import (
	"fmt"
	"sort"
	"unsafe"
)

// saveOutputs are the C buffers a runner's Save programs write when it is
// destroyed (mrt_model_runner_config.save_programs_outputs): C memory, as
// the library keeps the pointers past the create call, copied into the
// caller's tensors once the runner is gone.
type saveOutputs struct {
	replicas *C.mrt_replica_outputs // one per replica, in C memory
	views    []*C.mrt_tensor_view   // [i]: replica i's views (gomrt_views_alloc)
	names    [][]string             // [i]: replica i's output names, in view order
	tensors  []map[string]Tensor    // [i]: replica i's caller tensors
}

// newSaveOutputs checks every tensor against model's anchor of its name
// (element type, byte size, and shape when the tensor gives one) and
// mirrors them in C memory; nil for none.
func newSaveOutputs(model *Model, outputs map[uint32]map[string]Tensor) (*saveOutputs, error) {
	if len(outputs) == 0 {
		return nil, nil
	}
	for replica, tensors := range outputs {
		for name, tensor := range tensors {
			if err := checkSaveOutput(model, replica, name, tensor); err != nil {
				return nil, err
			}
		}
	}
	ids := make([]uint32, 0, len(outputs))
	for id := range outputs {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	s := &saveOutputs{
		replicas: (*C.mrt_replica_outputs)(C.calloc(C.size_t(len(ids)), C.sizeof_mrt_replica_outputs)),
	}
	entries := unsafe.Slice(s.replicas, len(ids))
	for i, id := range ids {
		names := sortedNames(outputs[id])
		views := toCViews(outputs[id], names, true)
		s.views, s.names, s.tensors = append(s.views, views), append(s.names, names), append(s.tensors, outputs[id])
		entries[i].replica_id = C.uint32_t(id)
		entries[i].outputs = views
		entries[i].num_outputs = C.size_t(len(names))
	}
	return s, nil
}

func checkSaveOutput(model *Model, replica uint32, name string, tensor Tensor) error {
	anchor, err := model.AnchorByName(name)
	if err != nil {
		return err // NotFound, naming it
	}
	what := fmt.Sprintf("save output %q", name)
	if tensor.Type != anchor.DataType {
		return bindingError(InvalidArgument, "%s of replica %d: the tensor holds %v, the model's anchor %v",
			what, replica, tensor.Type, anchor.DataType)
	}
	if int64(len(tensor.Data)) != anchor.SizeInBytes {
		return bindingError(InvalidArgument, "%s of replica %d: %d bytes, the model's anchor has %d",
			what, replica, len(tensor.Data), anchor.SizeInBytes)
	}
	if tensor.Shape != nil && !equalShapes(tensor.Shape, anchor.Shape) {
		return bindingError(InvalidArgument, "%s of replica %d: shape %v, the model's anchor has %v",
			what, replica, tensor.Shape, anchor.Shape)
	}
	return nil
}

func equalShapes(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// deliver copies what the Save programs wrote into the caller's tensors
// (the runner is destroyed: the library is done with the buffers), then
// frees the buffers.
func (s *saveOutputs) deliver() {
	for i, views := range s.views {
		list := unsafe.Slice(views, len(s.names[i]))
		for j, name := range s.names[i] {
			copy(s.tensors[i][name].Data, cSlice(list[j].data, uint64(list[j].size_bytes)))
		}
	}
	s.free()
}

func (s *saveOutputs) free() {
	for i, views := range s.views {
		C.gomrt_views_free(views, C.size_t(len(s.names[i])))
	}
	C.free(unsafe.Pointer(s.replicas))
	s.views, s.replicas = nil, nil
}
