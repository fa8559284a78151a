package mrt

/*
#include <stdlib.h>
#include "trampolines.h"
*/
import "C"

import (
	"runtime"
	"runtime/cgo"
	"sync"
	"unsafe"
)

// PredicateKind says which policies a predicate returns (mrt_predicate_kind).
type PredicateKind int32

const (
	// PredicateAnchorCallback predicates return an AnchorCallbackPolicy.
	PredicateAnchorCallback PredicateKind = 0
	// PredicatePopefDataUsage predicates return a PopefDataUsagePolicy.
	PredicatePopefDataUsage PredicateKind = 1
)

// Policies of PredicateAnchorCallback predicates (mrt_anchor_callback_policy).
const (
	BindUserCallback  int32 = 0
	BindEmptyCallback int32 = 1
	SkipCallback      int32 = 2
)

// Policies of PredicatePopefDataUsage predicates (mrt_popef_data_usage_policy).
const (
	UsePopefDataIfAny int32 = 0
	UseUserData       int32 = 1
)

// PrebuiltPredicate names a prebuilt predicate (mrt_prebuilt_predicate).
type PrebuiltPredicate int32

const (
	PredProgramFlowLoad    PrebuiltPredicate = 0
	PredProgramFlowMain    PrebuiltPredicate = 1
	PredProgramFlowSave    PrebuiltPredicate = 2
	PredProgramNotAssigned PrebuiltPredicate = 3
	PredNonScalarType      PrebuiltPredicate = 4
	PredProgramIndexes     PrebuiltPredicate = 5
)

// AnchorPredicate gives each anchor a policy. Immutable: any goroutine may
// use it; sessions keep their own reference, so it may be closed after use.
type AnchorPredicate struct {
	mu  sync.RWMutex
	ptr *C.mrt_anchor_predicate
}

func newPredicate(create func(**C.mrt_anchor_predicate) C.mrt_status) (*AnchorPredicate, error) {
	var ptr *C.mrt_anchor_predicate
	if err := call(func() C.mrt_status { return create(&ptr) }); err != nil {
		return nil, err
	}
	p := &AnchorPredicate{ptr: ptr}
	runtime.SetFinalizer(p, (*AnchorPredicate).Close)
	return p, nil
}

// NewPrebuiltPredicate is a prebuilt predicate: accept for the anchors it
// selects, reject for the others. model is needed by the PredProgramFlow*
// ones, programs by PredProgramIndexes.
func NewPrebuiltPredicate(kind PredicateKind, prebuilt PrebuiltPredicate, model *Model, programs []uint64,
	accept, reject int32) (*AnchorPredicate, error) {
	var cModel *C.mrt_model
	if model != nil {
		model.mu.RLock()
		defer model.mu.RUnlock()
		if model.ptr == nil {
			return nil, closedError("Model")
		}
		cModel = model.ptr
	}
	cPrograms := cUint64s(programs)
	defer C.free(cPrograms)
	return newPredicate(func(out **C.mrt_anchor_predicate) C.mrt_status {
		return C.mrt_anchor_predicate_create(C.int32_t(kind), C.int32_t(prebuilt), cModel, (*C.uint64_t)(cPrograms),
			C.size_t(len(programs)), C.int32_t(accept), C.int32_t(reject), out)
	})
}

// ProgramsPolicy is one group of NewProgramPoliciesPredicate.
type ProgramsPolicy struct {
	Programs []uint64
	Policy   int32
}

// NewProgramPoliciesPredicate gives an anchor the policy of the first group
// whose programs move it, reject if none does.
func NewProgramPoliciesPredicate(kind PredicateKind, groups []ProgramsPolicy, reject int32) (*AnchorPredicate, error) {
	cGroups := (*C.mrt_programs_with_policy)(C.calloc(C.size_t(len(groups)+1), C.sizeof_mrt_programs_with_policy))
	defer C.free(unsafe.Pointer(cGroups))
	for i, g := range groups {
		c := &unsafe.Slice(cGroups, len(groups))[i]
		c.programs = (*C.uint64_t)(cUint64s(g.Programs))
		defer C.free(unsafe.Pointer(c.programs))
		c.num_programs = C.size_t(len(g.Programs))
		c.policy = C.int32_t(g.Policy)
	}
	return newPredicate(func(out **C.mrt_anchor_predicate) C.mrt_status {
		return C.mrt_anchor_predicate_create_program_policies(C.int32_t(kind), cGroups, C.size_t(len(groups)),
			C.int32_t(reject), out)
	})
}

// NewAnchorPoliciesPredicate gives the anchors named by handle their policy,
// the others reject.
func NewAnchorPoliciesPredicate(kind PredicateKind, policies map[string]int32, reject int32) (*AnchorPredicate, error) {
	entries := (*C.mrt_anchor_with_policy)(C.calloc(C.size_t(len(policies)+1), C.sizeof_mrt_anchor_with_policy))
	defer C.free(unsafe.Pointer(entries))
	list := unsafe.Slice(entries, len(policies))
	i := 0
	for handle, policy := range policies {
		list[i].handle = C.CString(handle)
		defer C.free(unsafe.Pointer(list[i].handle))
		list[i].policy = C.int32_t(policy)
		i++
	}
	return newPredicate(func(out **C.mrt_anchor_predicate) C.mrt_status {
		return C.mrt_anchor_predicate_create_anchor_policies(C.int32_t(kind), entries, C.size_t(len(policies)),
			C.int32_t(reject), out)
	})
}

// NewUserPredicate is a predicate computed by fn, called on the goroutine
// of whichever call uses the predicate, possibly from several at once. A
// value outside the kind's policies fails that call with InvalidArgument.
func NewUserPredicate(kind PredicateKind, fn func(anchor AnchorInfo) int32) (*AnchorPredicate, error) {
	handle := C.uintptr_t(cgo.NewHandle(fn))
	return newPredicate(func(out **C.mrt_anchor_predicate) C.mrt_status {
		return C.gomrt_anchor_predicate_create_user(C.int32_t(kind), handle, out)
	})
}

// AndPredicates accepts when all predicates accept; OrPredicates when any does.
func AndPredicates(kind PredicateKind, accept, reject int32, predicates ...*AnchorPredicate) (*AnchorPredicate, error) {
	return combine(true, kind, accept, reject, predicates)
}

// OrPredicates accepts when any of the predicates accepts.
func OrPredicates(kind PredicateKind, accept, reject int32, predicates ...*AnchorPredicate) (*AnchorPredicate, error) {
	return combine(false, kind, accept, reject, predicates)
}

func combine(and bool, kind PredicateKind, accept, reject int32, predicates []*AnchorPredicate) (*AnchorPredicate, error) {
	array := (**C.mrt_anchor_predicate)(C.calloc(C.size_t(len(predicates)+1), C.size_t(unsafe.Sizeof(uintptr(0)))))
	defer C.free(unsafe.Pointer(array))
	list := unsafe.Slice(array, len(predicates))
	for i, p := range predicates {
		p.mu.RLock()
		defer p.mu.RUnlock()
		if p.ptr == nil {
			return nil, closedError("AnchorPredicate")
		}
		list[i] = p.ptr
	}
	return newPredicate(func(out **C.mrt_anchor_predicate) C.mrt_status {
		if and {
			return C.mrt_anchor_predicate_and(C.int32_t(kind), C.int32_t(accept), C.int32_t(reject), array, C.size_t(len(predicates)), out)
		}
		return C.mrt_anchor_predicate_or(C.int32_t(kind), C.int32_t(accept), C.int32_t(reject), array, C.size_t(len(predicates)), out)
	})
}

// Evaluate is the policy the predicate gives model's anchor with handle anchorHandle.
func (p *AnchorPredicate) Evaluate(model *Model, anchorHandle string) (policy int32, err error) {
	cHandle := C.CString(anchorHandle)
	defer C.free(unsafe.Pointer(cHandle))
	err = p.use(func(pp *C.mrt_anchor_predicate) error {
		return model.use(func(mp *C.mrt_model) error {
			var v C.int32_t
			err := call(func() C.mrt_status { return C.mrt_anchor_predicate_evaluate(pp, mp, cHandle, &v) })
			policy = int32(v)
			return err
		})
	})
	return policy, err
}

func (p *AnchorPredicate) use(f func(*C.mrt_anchor_predicate) error) error {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.ptr == nil {
		return closedError("AnchorPredicate")
	}
	return f(p.ptr)
}

// cPredicate is p's pointer for a call made while the caller holds it, or
// NULL for a nil predicate.
func (p *AnchorPredicate) cPointer() *C.mrt_anchor_predicate {
	if p == nil {
		return nil
	}
	return p.ptr
}

// Close releases the caller's reference. Idempotent.
func (p *AnchorPredicate) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ptr != nil {
		C.mrt_anchor_predicate_destroy(p.ptr)
		p.ptr = nil
		runtime.SetFinalizer(p, nil)
	}
	return nil
}

// cUint64s is a C copy of values (never NULL); free it with C.free.
func cUint64s(values []uint64) unsafe.Pointer {
	p := C.calloc(C.size_t(len(values)+1), 8)
	copy(unsafe.Slice((*uint64)(p), len(values)), values)
	return p
}
