package mrt

/*
#include <stdlib.h>
#include <string.h>
#include "requests.h"
#include "trampolines.h"
*/
import "C"

import (
	"context"
	"runtime"
	"runtime/cgo"
	"sort"
	"sync"
	"time"
	"unsafe"
)

// TensorDesc describes one input or output of a runner (mrt_data_desc):
// the size and shape of one model batch.
type TensorDesc struct {
	Name                    string
	SizeInBytes             int64
	Shape                   []int64
	DataType                DataType
	PopefContainsTensorData bool
}

// RunnerOptions configure a ModelRunner; the zero value is the library's
// defaults except where noted. Durations: nil waits forever.
type RunnerOptions struct {
	Replicas uint32 // 0: 1
	// DeviceWait is how long to wait for free devices; nil: until there are.
	DeviceWait *time.Duration
	// FlushTimeout: after waiting this long for input, dummy data is flushed
	// (and OnFlush called); also the hang watchdog. nil: wait forever.
	FlushTimeout *time.Duration
	// FrozenInputs are fixed for the runner's life (copied at creation).
	FrozenInputs         map[string]Tensor
	RunSavePrograms      bool
	SkipPackageHashCheck bool
	AutoReset            bool    // reset the device after an IPU_RESET error or a hang
	BatchingDim          *uint32 // dynamic batch sizes along this dimension; nil: disabled
	MaxLookAhead         *int64  // host syncs prepared ahead; nil: unlimited
	// OnFlush is called on a replica's goroutine when it flushes dummy data
	// after FlushTimeout waiting for input tensor.
	OnFlush func(tensor string)
	// OnFlushSelect is as OnFlush, also choosing the queues padded (see
	// FlushSelection); set at most one of the two.
	OnFlushSelect func(tensor string, selection *FlushSelection)
	// SaveOutputs are where the Save programs' outputs go, per replica and
	// output name, written when the runner is closed (with RunSavePrograms);
	// each tensor of its anchor's type and size (and shape, if it has one).
	SaveOutputs map[uint32]map[string]Tensor
	// ReplicaDevices are the devices of replicas [0, len) (nil entries: the
	// runner picks one); the runner keeps its own references.
	ReplicaDevices           []*Device
	RingBufferSizeMultiplier uint32 // ring entries per batch; 0: the default (2)
	FlushOnWaitingOutputs    bool
	// BatchSizeTimeout pads a partial batch after this long; nil: never.
	BatchSizeTimeout *time.Duration
	// DataParallelTimeout pads an empty batch after this long; nil: never.
	DataParallelTimeout *time.Duration
	// SkipIOValidation turns off the name and size checks the library makes
	// on every execute (validate_io_params); this package still checks them.
	SkipIOValidation bool
	// RequestTracepoints is how many traces each replica keeps for the
	// statistics; 0: the default (1000).
	RequestTracepoints int
}

// ModelRunner serves inference requests on a model: one simulated device,
// session and device thread per replica. Created thread safe: any number of
// goroutines may call Execute and ExecuteAsync at once.
type ModelRunner struct {
	mu      sync.RWMutex
	ptr     *C.mrt_model_runner
	inputs  []TensorDesc
	outputs []TensorDesc
	batched bool
	save    *saveOutputs // written into the caller's tensors at Close
}

// NewModelRunner creates a runner for model and attaches its devices.
func NewModelRunner(model *Model, options *RunnerOptions) (*ModelRunner, error) {
	return newModelRunner(model, options, func(arm func(), config *C.mrt_model_runner_config, out **C.mrt_model_runner) error {
		return model.use(func(mp *C.mrt_model) error {
			arm()
			return call(func() C.mrt_status { return C.mrt_model_runner_create(mp, config, out) })
		})
	})
}

// NewModelRunnerFromFiles creates a runner for the model held by PopEF
// files (mrt_model_runner_create_from_files).
func NewModelRunnerFromFiles(paths []string, options *RunnerOptions) (*ModelRunner, error) {
	var model *Model // to check SaveOutputs against
	if options != nil && len(options.SaveOutputs) > 0 {
		var err error
		if model, err = LoadModel(paths...); err != nil {
			return nil, err
		}
		defer model.Close()
	}
	return newModelRunner(model, options, func(arm func(), config *C.mrt_model_runner_config, out **C.mrt_model_runner) error {
		cPaths := newCArray(paths, false)
		defer cPaths.free()
		arm()
		return call(func() C.mrt_status {
			return C.mrt_model_runner_create_from_files(cPaths.array, C.size_t(len(paths)), config, out)
		})
	})
}

// newModelRunner fills the config from options and creates the runner with
// create, which calls arm (setting the callbacks, whose handles the library
// frees from then on, also when creation fails) right before the C create;
// model is the runner's model (nil: no SaveOutputs to check).
func newModelRunner(model *Model, options *RunnerOptions,
	create func(arm func(), config *C.mrt_model_runner_config, out **C.mrt_model_runner) error) (*ModelRunner, error) {
	if options == nil {
		options = &RunnerOptions{}
	}
	if options.OnFlush != nil && options.OnFlushSelect != nil {
		return nil, bindingError(InvalidArgument, "RunnerOptions: OnFlush and OnFlushSelect are both set; set at most one")
	}
	save, err := newSaveOutputs(model, options.SaveOutputs)
	if err != nil {
		return nil, err
	}
	var config C.mrt_model_runner_config
	C.mrt_model_runner_config_init_sized(&config, C.size_t(unsafe.Sizeof(config)))
	config.thread_safe = true
	if options.Replicas > 0 {
		config.replication_factor = C.uint32_t(options.Replicas)
	}
	// In C memory: a Go struct passed to C may not point to Go memory.
	wait := (*C.mrt_device_wait_config)(C.malloc(C.sizeof_mrt_device_wait_config))
	defer C.free(unsafe.Pointer(wait))
	C.mrt_device_wait_config_init_sized(wait, C.sizeof_mrt_device_wait_config)
	wait.strategy = C.MRT_DEVICE_WAIT_FOREVER
	wait.sleep_time_ns = C.int64_t(devicePollInterval)
	if options.DeviceWait != nil {
		wait.strategy = C.MRT_DEVICE_WAIT_WITH_TIMEOUT
		wait.timeout_ns = C.int64_t(options.DeviceWait.Nanoseconds())
	}
	config.device_wait_config = wait
	config.timeout_ns = C.GOMRT_TIMEOUT_FOREVER
	if options.FlushTimeout != nil {
		config.timeout_ns = C.int64_t(options.FlushTimeout.Nanoseconds())
	}
	config.run_save_programs = C.bool(options.RunSavePrograms)
	config.check_package_hash = C.bool(!options.SkipPackageHashCheck)
	config.auto_reset = C.bool(options.AutoReset)
	if options.BatchingDim != nil {
		config.batching_dim = C.uint32_t(*options.BatchingDim)
	}
	if options.MaxLookAhead != nil {
		config.max_look_ahead = C.int64_t(*options.MaxLookAhead)
	}
	frozenNames := sortedNames(options.FrozenInputs)
	frozen := toCViews(options.FrozenInputs, frozenNames, true)
	defer C.gomrt_views_free(frozen, C.size_t(len(frozenNames)))
	config.frozen_inputs = frozen
	config.num_frozen_inputs = C.size_t(len(frozenNames))
	if options.RingBufferSizeMultiplier > 0 {
		config.ring_buffer_size_multiplier = C.uint32_t(options.RingBufferSizeMultiplier)
	}
	config.flush_on_waiting_outputs = C.bool(options.FlushOnWaitingOutputs)
	if options.BatchSizeTimeout != nil {
		config.batch_size_timeout_ns = C.int64_t(options.BatchSizeTimeout.Nanoseconds())
		config.is_batch_size_timeout_enabled = true
	}
	if options.DataParallelTimeout != nil {
		config.data_parallel_timeout_ns = C.int64_t(options.DataParallelTimeout.Nanoseconds())
	}
	config.validate_io_params = C.bool(!options.SkipIOValidation)
	if options.RequestTracepoints > 0 {
		config.request_tracepoints_buffer_size = C.size_t(options.RequestTracepoints)
	}
	// In C memory, as the wait config; each device stays open during the call.
	devices := (**C.mrt_device)(C.calloc(C.size_t(len(options.ReplicaDevices)+1), C.size_t(unsafe.Sizeof(uintptr(0)))))
	defer C.free(unsafe.Pointer(devices))
	for i, d := range options.ReplicaDevices {
		if d != nil {
			d.mu.RLock()
			defer d.mu.RUnlock()
			unsafe.Slice(devices, len(options.ReplicaDevices))[i] = d.ptr
		}
	}
	config.replica_devices, config.num_replica_devices = devices, C.size_t(len(options.ReplicaDevices))
	if save != nil {
		config.save_programs_outputs, config.num_save_programs_outputs = save.replicas, C.size_t(len(save.views))
	}
	arm := func() {
		if options.OnFlush != nil {
			C.gomrt_runner_config_set_flush(&config, C.uintptr_t(cgo.NewHandle(options.OnFlush)))
		}
		if options.OnFlushSelect != nil {
			C.gomrt_runner_config_set_flush_select(&config, C.uintptr_t(cgo.NewHandle(options.OnFlushSelect)))
		}
	}
	var ptr *C.mrt_model_runner
	if err := create(arm, &config, &ptr); err != nil {
		if save != nil {
			save.free()
		}
		return nil, err
	}
	r := &ModelRunner{ptr: ptr, batched: options.BatchingDim != nil, save: save}
	runtime.SetFinalizer(r, (*ModelRunner).Close)
	if r.inputs, err = r.descs(executeInputs); err == nil {
		r.outputs, err = r.descs(executeOutputs)
	}
	if err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// Which description list descs reads.
const (
	executeInputs = iota
	executeOutputs
	modelInputs
	modelOutputs
)

func (r *ModelRunner) descs(which int) ([]TensorDesc, error) {
	var descs *C.mrt_data_desc
	var count C.size_t
	if err := call(func() C.mrt_status {
		switch which {
		case executeInputs:
			return C.mrt_model_runner_execute_inputs(r.ptr, &descs, &count)
		case executeOutputs:
			return C.mrt_model_runner_execute_outputs(r.ptr, &descs, &count)
		case modelInputs:
			return C.mrt_model_runner_model_inputs(r.ptr, &descs, &count)
		default:
			return C.mrt_model_runner_model_outputs(r.ptr, &descs, &count)
		}
	}); err != nil {
		return nil, err
	}
	list := make([]TensorDesc, 0, int(count))
	if count == 0 {
		return list, nil
	}
	for _, d := range unsafe.Slice(descs, int(count)) {
		list = append(list, TensorDesc{Name: C.GoString(d.name), SizeInBytes: int64(d.size_in_bytes),
			Shape: int64s(unsafe.Pointer(d.shape), int(d.rank)), DataType: DataType(d.data_type),
			PopefContainsTensorData: bool(d.popef_contains_tensor_data)})
	}
	return list, nil
}

// Inputs are the tensors Execute takes, in name order.
func (r *ModelRunner) Inputs() []TensorDesc { return r.inputs }

// Outputs are the tensors Execute returns, in name order.
func (r *ModelRunner) Outputs() []TensorDesc { return r.outputs }

// ModelInputs are every input of the model, PopEF-fed ones included.
func (r *ModelRunner) ModelInputs() (descs []TensorDesc, err error) {
	err = r.use(func() error { descs, err = r.descs(modelInputs); return err })
	return descs, err
}

// ModelOutputs are every output of the model.
func (r *ModelRunner) ModelOutputs() (descs []TensorDesc, err error) {
	err = r.use(func() error { descs, err = r.descs(modelOutputs); return err })
	return descs, err
}

func (r *ModelRunner) use(f func() error) error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.ptr == nil {
		return closedError("ModelRunner")
	}
	return f()
}

// Execute runs one request on replica 0 and returns its outputs, or when
// ctx ends first an error wrapping ctx.Err() (the request goes on; its
// outputs are dropped). With ctx already ended, no request is queued.
func (r *ModelRunner) Execute(ctx context.Context, inputs map[string]Tensor) (map[string]Tensor, error) {
	if ctx.Err() != nil {
		return nil, contextError(ctx, "the request was not queued")
	}
	future, err := r.ExecuteAsync(inputs)
	if err != nil {
		return nil, err
	}
	defer future.Close()
	return future.Wait(ctx)
}

// ExecuteAsync queues one request on replica 0 and returns at once.
func (r *ModelRunner) ExecuteAsync(inputs map[string]Tensor) (*Future, error) {
	return r.ExecuteAsyncOn(0, inputs)
}

// ExecuteAsyncOn queues one request on replica. Types and sizes of the
// tensors the model knows are checked here first (names it does not know
// are left to the library, which names them). The inputs are copied into C
// memory the library frees when the request is done, so the caller's
// slices are free again at once; the outputs are allocated by the library
// and copied out by Future.Wait.
func (r *ModelRunner) ExecuteAsyncOn(replica uint32, inputs map[string]Tensor) (future *Future, err error) {
	err = r.use(func() error {
		if err := r.checkInputs(inputs); err != nil {
			return err
		}
		names := sortedNames(inputs)
		views := toCViews(inputs, names, true)
		var ptr *C.mrt_future
		var memory *C.mrt_tensor_memory
		// gomrt_execute_async owns the views from here, on success and failure.
		if err := call(func() C.mrt_status {
			return C.gomrt_execute_async(r.ptr, views, C.size_t(len(names)), C.uint32_t(replica), &ptr, &memory)
		}); err != nil {
			return err
		}
		future, err = newFuture(ptr, memory, r.outputs)
		return err
	})
	return future, err
}

// checkInputs refuses, before calling C, tensors the model knows whose type
// differs, or (without batching) whose size is not a whole, non-zero number
// of model batches, or whose batch counts differ.
func (r *ModelRunner) checkInputs(inputs map[string]Tensor) error {
	batches, first := int64(-1), ""
	for _, desc := range r.inputs {
		tensor, given := inputs[desc.Name]
		if !given {
			continue // the library reports a missing tensor itself
		}
		if tensor.Type != desc.DataType {
			return bindingError(InvalidArgument, "input '%s' is %v, the model takes %v", desc.Name, tensor.Type, desc.DataType)
		}
		size := int64(len(tensor.Data))
		if r.batched {
			continue // the library checks sizes along the batching dimension
		}
		if size == 0 || size%desc.SizeInBytes != 0 {
			return bindingError(InvalidArgument, "input '%s' has %d bytes, expected %d (shape %v) or a whole multiple",
				desc.Name, size, desc.SizeInBytes, desc.Shape)
		}
		if n := size / desc.SizeInBytes; batches < 0 {
			batches, first = n, desc.Name
		} else if n != batches {
			return bindingError(InvalidArgument, "input '%s' holds %d batches but '%s' holds %d", desc.Name, n, first, batches)
		}
	}
	return nil
}

func sortedNames(tensors map[string]Tensor) []string {
	names := make([]string, 0, len(tensors))
	for name := range tensors {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// toCViews copies names (and, with values, the bytes) into C memory; free
// the views with gomrt_views_free.
func toCViews(tensors map[string]Tensor, names []string, values bool) *C.mrt_tensor_view {
	views := C.gomrt_views_alloc(C.size_t(len(names)))
	list := unsafe.Slice(views, len(names))
	for i, name := range names {
		data := tensors[name].Data
		list[i].name = C.CString(name)
		list[i].size_bytes = C.uint64_t(len(data))
		if values {
			list[i].data = cBytes(data)
		} else {
			list[i].data = C.malloc(C.size_t(len(data) + 1))
		}
	}
	return views
}

// tensorMemoryOutputs copies a finished request's outputs into Go tensors,
// typed and shaped from the runner's descriptions (the first dimension
// scaled to the batches held).
func tensorMemoryOutputs(memory *C.mrt_tensor_memory, descs []TensorDesc) (map[string]Tensor, error) {
	var count C.size_t
	if err := call(func() C.mrt_status { return C.mrt_tensor_memory_count(memory, &count) }); err != nil {
		return nil, err
	}
	byName := make(map[string]TensorDesc, len(descs))
	for _, d := range descs {
		byName[d.Name] = d
	}
	outputs := make(map[string]Tensor, int(count))
	for i := C.size_t(0); i < count; i++ {
		var view C.mrt_tensor_view
		if err := call(func() C.mrt_status { return C.mrt_tensor_memory_get(memory, i, &view) }); err != nil {
			return nil, err
		}
		name := C.GoString(view.name)
		desc := byName[name]
		tensor := Tensor{Type: desc.DataType, Data: goBytes(view.data, uint64(view.size_bytes))}
		tensor.Shape = append([]int64(nil), desc.Shape...)
		if len(tensor.Shape) > 0 && desc.SizeInBytes > 0 {
			tensor.Shape[0] *= int64(len(tensor.Data)) / desc.SizeInBytes
		}
		outputs[name] = tensor
	}
	return outputs, nil
}

// RequestTimes are the phases of requests (mrt_request_times).
type RequestTimes struct {
	Request         time.Duration // receipt to completion
	ReadPreparation time.Duration // validating and queueing
	ReadQueue       time.Duration // waiting in the queue
	Computation     time.Duration // on the device
}

// RequestCounts are how many requests each phase has seen.
type RequestCounts struct {
	Request, ReadPreparation, ReadQueue, Computation int64
}

func (r *ModelRunner) times(get func(*C.mrt_request_times) C.mrt_status) (C.mrt_request_times, error) {
	var c C.mrt_request_times
	c.struct_size = C.size_t(unsafe.Sizeof(c))
	err := r.use(func() error { return call(func() C.mrt_status { return get(&c) }) })
	return c, err
}

func microseconds(us C.double) time.Duration {
	return time.Duration(float64(us) * float64(time.Microsecond))
}

func durations(c C.mrt_request_times, err error) (RequestTimes, error) {
	return RequestTimes{microseconds(c.request_us), microseconds(c.read_preparation_us),
		microseconds(c.read_queue_us), microseconds(c.computation_us)}, err
}

// TimeTrace is the phases of a recent request of replica: cur -1 the last
// one, otherwise the index among the kept traces (0 = oldest).
func (r *ModelRunner) TimeTrace(replica uint32, cur int32) (RequestTimes, error) {
	return durations(r.times(func(c *C.mrt_request_times) C.mrt_status {
		return C.mrt_model_runner_time_trace(r.ptr, C.uint32_t(replica), C.int32_t(cur), c)
	}))
}

// Percentile is the quantile (0..1) of each phase over replica's kept traces.
func (r *ModelRunner) Percentile(quantile float64, replica uint32) (RequestTimes, error) {
	return durations(r.times(func(c *C.mrt_request_times) C.mrt_status {
		return C.mrt_model_runner_statistics_percentile(r.ptr, C.double(quantile), C.uint32_t(replica), c)
	}))
}

// Mean is the mean of each phase over replica's kept traces.
func (r *ModelRunner) Mean(replica uint32) (RequestTimes, error) {
	return durations(r.times(func(c *C.mrt_request_times) C.mrt_status {
		return C.mrt_model_runner_statistics_mean(r.ptr, C.uint32_t(replica), c)
	}))
}

// Count is how many requests each phase of replica has seen, ever.
func (r *ModelRunner) Count(replica uint32) (RequestCounts, error) {
	c, err := r.times(func(c *C.mrt_request_times) C.mrt_status {
		return C.mrt_model_runner_statistics_count(r.ptr, C.uint32_t(replica), c)
	})
	return RequestCounts{int64(c.request_us), int64(c.read_preparation_us), int64(c.read_queue_us), int64(c.computation_us)}, err
}

// NumReplicas is how many replicas the runner serves (replica ids 0 ..
// NumReplicas()-1): the replication factor copies x the model's own
// replication factor.
func (r *ModelRunner) NumReplicas() (count uint32, err error) {
	err = r.use(func() error {
		var c C.uint32_t
		err := call(func() C.mrt_status { return C.mrt_model_runner_num_replicas(r.ptr, &c) })
		count = uint32(c)
		return err
	})
	return count, err
}

// Model is the runner's model (a new reference: Close it).
func (r *ModelRunner) Model() (model *Model, err error) {
	err = r.use(func() error {
		var ptr *C.mrt_model
		err := call(func() C.mrt_status { return C.mrt_model_runner_model(r.ptr, &ptr) })
		if err == nil {
			model = newModel(ptr)
		}
		return err
	})
	return model, err
}

// RunnerConfig is what a runner runs with (mrt_model_runner_get_config's
// scalar fields).
type RunnerConfig struct {
	Replicas                 uint32
	RunSavePrograms          bool
	ThreadSafe               bool
	CheckPackageHash         bool
	FlushTimeout             *time.Duration // nil: waits forever
	ValidateIO               bool
	BatchingDim              uint32 // ^uint32(0): disabled
	AutoReset                bool
	MaxLookAhead             int64 // < 0: unlimited
	RingBufferSizeMultiplier uint32
	FlushOnWaitingOutputs    bool
	RequestTracepoints       int
	BatchSizeTimeout         *time.Duration // nil: never
	DataParallelTimeout      *time.Duration // nil: never
}

// Config is the configuration the runner runs with.
func (r *ModelRunner) Config() (config RunnerConfig, err error) {
	var c C.mrt_model_runner_config
	C.mrt_model_runner_config_init_sized(&c, C.size_t(unsafe.Sizeof(c)))
	err = r.use(func() error { return call(func() C.mrt_status { return C.mrt_model_runner_get_config(r.ptr, &c) }) })
	// A limit, or nil for forever: 0 (older headers' runner timeout) or negative (MRT_FOREVER).
	limit := func(ns C.int64_t) *time.Duration {
		if ns > 0 {
			return For(time.Duration(ns))
		}
		return nil
	}
	return RunnerConfig{uint32(c.replication_factor), bool(c.run_save_programs), bool(c.thread_safe),
		bool(c.check_package_hash), limit(c.timeout_ns), bool(c.validate_io_params), uint32(c.batching_dim),
		bool(c.auto_reset), int64(c.max_look_ahead), uint32(c.ring_buffer_size_multiplier),
		bool(c.flush_on_waiting_outputs), int(c.request_tracepoints_buffer_size), limit(c.batch_size_timeout_ns),
		limit(c.data_parallel_timeout_ns)}, err
}

// InsertSimulatedError makes replica's device fail once with fault at the
// first program step named step of its next Main run.
func (r *ModelRunner) InsertSimulatedError(fault SimulatedError, step string, replica uint32) error {
	cStep := C.CString(step)
	defer C.free(unsafe.Pointer(cStep))
	return r.use(func() error {
		return call(func() C.mrt_status {
			return C.mrt_model_runner_insert_simulated_error(r.ptr, C.int32_t(fault), cStep, C.uint32_t(replica))
		})
	})
}

// Close destroys the runner (pending requests complete with Cancelled; their
// futures stay usable), running the Save programs into SaveOutputs if
// configured. Idempotent; later calls return an ErrClosed error.
func (r *ModelRunner) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ptr != nil {
		C.mrt_model_runner_destroy(r.ptr)
		r.ptr = nil
		runtime.SetFinalizer(r, nil)
		if r.save != nil {
			r.save.deliver()
			r.save = nil
		}
	}
	return nil
}
