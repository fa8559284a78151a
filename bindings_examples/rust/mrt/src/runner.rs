//! ModelRunner: serves inference requests on a model (docs/runner.md).
use std::collections::HashMap;
use std::ffi::CString;
use std::os::raw::{c_char, c_void};
use std::path::Path;
use std::ptr::{self, NonNull};
use std::time::Duration;

use crate::callback::{closure_user_data, free_boxed, with_closure};
use crate::device::{Device, DeviceWait};
use crate::error::{check, invalid, string_from_c, Result};
use crate::ffi::{duration_ns, name_to_c, slice, timeout_ns, CStrings, SizedStruct};
use crate::flush::{flush_select_trampoline, FlushSelectCallback};
use crate::future::Future;
use crate::memory::TensorMemory;
use crate::model::Model;
use crate::sys;
use crate::tensor::{type_name, DataType, Input, Output, OutputBuffer};

/// Called on a replica's device thread when it timed out waiting for an
/// input (its name), before the runner flushes dummy data.
pub type FlushCallback = Box<dyn FnMut(&str) + Send + 'static>;

/// Simulated hardware faults (mrt_simulated_error).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SimulatedError {
    /// A worker's exception; recovery: reset the IPU.
    TileException = 0,
    /// Tile memory parity; reset the IPU.
    MemoryParity = 1,
    /// IPU-Link failure; reset the partition.
    ExchangeError = 2,
    /// PCIe link failure; full reset.
    HostLinkError = 3,
}

/// Runner options (mrt_model_runner_config). Default reads the library's
/// defaults. The runner is always created thread safe.
pub struct RunnerConfig<'a> {
    pub replication_factor: u32,
    /// Run the Save programs when the runner is destroyed; their outputs go
    /// to the `save_outputs` buffers (ModelRunner::close_with_save_outputs).
    pub run_save_programs: bool,
    /// Buffers the runner allocates for Save-program outputs.
    pub save_outputs: Vec<SaveOutput>,
    /// Data fixed for the runner's life (copied at creation).
    pub frozen_inputs: Vec<Input<'a>>,
    /// [replica id] -> device, or None for an automatic choice.
    pub replica_devices: Vec<Option<&'a Device>>,
    pub device_wait: DeviceWait,
    pub check_package_hash: bool,
    /// Flush dummy data after waiting this long for input, also the hang
    /// watchdog; None: wait forever (MRT_FOREVER, -1; zero is refused). Default 5 s.
    pub timeout: Option<Duration>,
    pub validate_io_params: bool,
    /// Dynamic batch sizing along this dimension; None: disabled.
    pub batching_dim: Option<u32>,
    pub auto_reset: bool,
    /// Host syncs prepared ahead; None: unlimited.
    pub max_look_ahead: Option<u64>,
    pub ring_buffer_size_multiplier: u32,
    pub flush_on_waiting_outputs: bool,
    /// Pad a partial batch after this long; None: never.
    pub batch_size_timeout: Option<Duration>,
    pub data_parallel_timeout: Option<Duration>,
    pub is_batch_size_timeout_enabled: bool,
    /// Traces kept per replica; 0: unbounded.
    pub request_tracepoints_buffer_size: usize,
    pub on_flush: Option<FlushCallback>,
    /// As on_flush, also choosing the queues padded; set at most one of the two.
    pub on_flush_select: Option<FlushSelectCallback>,
}

/// A negative "never" duration of the header as an Option.
fn optional_duration(ns: i64) -> Option<Duration> {
    u64::try_from(ns).ok().map(Duration::from_nanos)
}

impl RunnerConfig<'_> {
    fn from_raw(raw: &sys::mrt_model_runner_config) -> RunnerConfig<'static> {
        RunnerConfig {
            replication_factor: raw.replication_factor,
            run_save_programs: raw.run_save_programs,
            frozen_inputs: Vec::new(),
            save_outputs: Vec::new(),
            replica_devices: Vec::new(),
            device_wait: DeviceWait::NoWait,
            check_package_hash: raw.check_package_hash,
            // The header's duration convention: negative = forever.
            timeout: optional_duration(raw.timeout_ns),
            validate_io_params: raw.validate_io_params,
            batching_dim: if raw.batching_dim == sys::MRT_BATCHING_DISABLED { None } else { Some(raw.batching_dim) },
            auto_reset: raw.auto_reset,
            max_look_ahead: u64::try_from(raw.max_look_ahead).ok(),
            ring_buffer_size_multiplier: raw.ring_buffer_size_multiplier,
            flush_on_waiting_outputs: raw.flush_on_waiting_outputs,
            batch_size_timeout: optional_duration(raw.batch_size_timeout_ns),
            data_parallel_timeout: optional_duration(raw.data_parallel_timeout_ns),
            is_batch_size_timeout_enabled: raw.is_batch_size_timeout_enabled,
            request_tracepoints_buffer_size: raw.request_tracepoints_buffer_size,
            on_flush: None,
            on_flush_select: None,
        }
    }
}

impl Default for RunnerConfig<'_> {
    fn default() -> Self {
        RunnerConfig::from_raw(&crate::ffi::defaults(sys::mrt_model_runner_config_init_sized))
    }
}

/// What execute takes or returns for one tensor (mrt_data_desc, copied).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorDesc {
    pub name: String,
    /// Of one model batch.
    pub size_in_bytes: i64,
    pub shape: Vec<i64>,
    /// None for a value outside mrt_data_type.
    pub data_type: Option<DataType>,
    pub popef_contains_tensor_data: bool,
}

/// Phases of requests in microseconds (or counts, for statistics_count).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RequestTimes {
    pub request_us: f64,
    pub read_preparation_us: f64,
    pub read_queue_us: f64,
    pub computation_us: f64,
}

/// A Save-program output to keep: written when the runner is destroyed
/// with run_save_programs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SaveOutput {
    pub replica: u32,
    /// The output anchor's name.
    pub name: String,
    pub size_in_bytes: usize,
}

/// The Save-output buffers and the C arrays naming them, which the library
/// borrows until the runner is destroyed.
#[derive(Default)]
struct SaveBuffers {
    outputs: Vec<SaveOutput>,
    buffers: Vec<Vec<u8>>,
    _names: Vec<CString>,
    _views: Vec<Vec<sys::mrt_tensor_view>>,
    replicas: Vec<sys::mrt_replica_outputs>,
}

impl SaveBuffers {
    fn new(outputs: Vec<SaveOutput>) -> Result<SaveBuffers> {
        let names = outputs.iter().map(|o| name_to_c(&o.name)).collect::<Result<Vec<_>>>()?;
        let mut buffers: Vec<Vec<u8>> = outputs.iter().map(|o| vec![0u8; o.size_in_bytes]).collect();
        let mut replica_ids: Vec<u32> = outputs.iter().map(|o| o.replica).collect();
        replica_ids.sort_unstable();
        replica_ids.dedup();
        // One array of views per replica; moving the Vecs into Self keeps
        // their heap buffers (and so these pointers) where they are.
        let views: Vec<Vec<sys::mrt_tensor_view>> = replica_ids
            .iter()
            .map(|&replica| {
                outputs
                    .iter()
                    .zip(names.iter().zip(buffers.iter_mut()))
                    .filter(|(o, _)| o.replica == replica)
                    .map(|(_, (name, buffer))| view(name, buffer.as_mut_ptr() as *mut c_void, buffer.len()))
                    .collect()
            })
            .collect();
        let replicas = replica_ids
            .iter()
            .zip(&views)
            .map(|(&replica_id, views)| sys::mrt_replica_outputs {
                replica_id,
                outputs: views.as_ptr(),
                num_outputs: views.len(),
            })
            .collect();
        Ok(SaveBuffers { outputs, buffers, _names: names, _views: views, replicas })
    }
}

/// A model runner, always created with `thread_safe`, which is what lets the
/// header allow execute calls from many threads at once: so it is Send and
/// Sync and its methods take &self. Destruction cannot overlap other calls:
/// Drop needs the runner by value.
pub struct ModelRunner {
    raw: NonNull<sys::mrt_model_runner>,
    inputs: Vec<TensorDesc>,
    outputs: Vec<TensorDesc>,
    batching_dim: Option<u32>,
    save: SaveBuffers,
}

// mrt_c.h: "with config.thread_safe, execute and execute_async may be called
// from any number of threads at once ... The description and statistics
// calls may be made from any thread."
unsafe impl Send for ModelRunner {}
unsafe impl Sync for ModelRunner {}

type DescList = unsafe extern "C" fn(*const sys::mrt_model_runner, *mut *const sys::mrt_data_desc, *mut usize) -> i32;
type StatisticsFn = unsafe extern "C" fn(*mut sys::mrt_model_runner, u32, *mut sys::mrt_request_times) -> i32;

impl ModelRunner {
    /// A runner for `model` with the default options. The runner keeps what
    /// it needs of the model: the model may be dropped first.
    pub fn new(model: &Model) -> Result<ModelRunner> {
        ModelRunner::with_config(model, RunnerConfig::default())
    }

    pub fn with_config(model: &Model, config: RunnerConfig<'_>) -> Result<ModelRunner> {
        ModelRunner::create(config, |raw_config, out| unsafe {
            sys::mrt_model_runner_create(model.as_ptr(), raw_config, out)
        })
    }

    /// A runner of the model held by PopEF files.
    pub fn from_files<P: AsRef<Path>>(paths: &[P], config: RunnerConfig<'_>) -> Result<ModelRunner> {
        let paths = CStrings::paths(paths)?;
        ModelRunner::create(config, |raw_config, out| unsafe {
            sys::mrt_model_runner_create_from_files(paths.as_ptr(), paths.len(), raw_config, out)
        })
    }

    fn create(
        config: RunnerConfig<'_>,
        create: impl FnOnce(*const sys::mrt_model_runner_config, *mut *mut sys::mrt_model_runner) -> i32,
    ) -> Result<ModelRunner> {
        // Copied by the library at create.
        let frozen_names = c_names(config.frozen_inputs.iter().map(|t| t.name))?;
        let frozen = borrowed_views(&config.frozen_inputs, &frozen_names);
        let devices: Vec<*mut sys::mrt_device> =
            config.replica_devices.iter().map(|d| d.map(|d| d.as_ptr()).unwrap_or(ptr::null_mut())).collect();
        let wait = config.device_wait.to_raw();
        let save = SaveBuffers::new(config.save_outputs)?;
        let mut raw = crate::ffi::defaults(sys::mrt_model_runner_config_init_sized);
        raw.replication_factor = config.replication_factor;
        raw.run_save_programs = config.run_save_programs;
        raw.thread_safe = true;
        raw.frozen_inputs = frozen.as_ptr();
        raw.num_frozen_inputs = frozen.len();
        raw.save_programs_outputs = save.replicas.as_ptr();
        raw.num_save_programs_outputs = save.replicas.len();
        raw.replica_devices = devices.as_ptr();
        raw.num_replica_devices = devices.len();
        raw.device_wait_config = &wait;
        raw.check_package_hash = config.check_package_hash;
        raw.timeout_ns = timeout_ns(config.timeout);
        raw.validate_io_params = config.validate_io_params;
        raw.batching_dim = config.batching_dim.unwrap_or(sys::MRT_BATCHING_DISABLED);
        raw.auto_reset = config.auto_reset;
        raw.max_look_ahead = config.max_look_ahead.map(|n| i64::try_from(n).unwrap_or(i64::MAX)).unwrap_or(-1);
        raw.ring_buffer_size_multiplier = config.ring_buffer_size_multiplier;
        raw.flush_on_waiting_outputs = config.flush_on_waiting_outputs;
        raw.batch_size_timeout_ns = config.batch_size_timeout.map(duration_ns).unwrap_or(-1);
        raw.data_parallel_timeout_ns = config.data_parallel_timeout.map(duration_ns).unwrap_or(-1);
        raw.is_batch_size_timeout_enabled = config.is_batch_size_timeout_enabled;
        raw.request_tracepoints_buffer_size = config.request_tracepoints_buffer_size;
        match (config.on_flush, config.on_flush_select) {
            (Some(_), Some(_)) => {
                return Err(invalid("RunnerConfig: on_flush and on_flush_select are both set; set at most one"))
            }
            (Some(callback), None) => {
                raw.flush_callback = Some(flush_trampoline);
                raw.flush_user_data = closure_user_data(callback);
                raw.flush_user_data_free = Some(free_boxed::<std::sync::Mutex<FlushCallback>>);
            }
            (None, Some(callback)) => {
                raw.flush_select_callback = Some(flush_select_trampoline);
                raw.flush_user_data = closure_user_data(callback);
                raw.flush_user_data_free = Some(free_boxed::<std::sync::Mutex<FlushSelectCallback>>);
            }
            (None, None) => {}
        }
        let mut out = ptr::null_mut();
        // The library frees the flush closure itself, also on failure.
        check(create(&raw, &mut out))?;
        // Own the handle before anything else can fail, so Drop frees it.
        let mut runner = ModelRunner {
            raw: NonNull::new(out).expect("mrt_model_runner_create returned MRT_OK and NULL"),
            inputs: Vec::new(),
            outputs: Vec::new(),
            batching_dim: config.batching_dim,
            save,
        };
        runner.inputs = runner.descs(sys::mrt_model_runner_execute_inputs)?;
        runner.outputs = runner.descs(sys::mrt_model_runner_execute_outputs)?;
        Ok(runner)
    }

    /// The tensors execute takes (inputs without PopEF data, not frozen),
    /// in name order.
    pub fn inputs(&self) -> &[TensorDesc] {
        &self.inputs
    }

    /// The tensors execute returns, in name order.
    pub fn outputs(&self) -> &[TensorDesc] {
        &self.outputs
    }

    /// Every input of the model, those PopEF provides included.
    pub fn model_inputs(&self) -> Result<Vec<TensorDesc>> {
        self.descs(sys::mrt_model_runner_model_inputs)
    }

    pub fn model_outputs(&self) -> Result<Vec<TensorDesc>> {
        self.descs(sys::mrt_model_runner_model_outputs)
    }

    fn descs(&self, list: DescList) -> Result<Vec<TensorDesc>> {
        let mut descs = ptr::null();
        let mut count = 0usize;
        check(unsafe { list(self.raw.as_ptr(), &mut descs, &mut count) })?;
        Ok(unsafe { slice(descs, count) }
            .iter()
            .map(|d| TensorDesc {
                name: unsafe { string_from_c(d.name) },
                size_in_bytes: d.size_in_bytes,
                shape: unsafe { slice(d.shape, d.rank) }.to_vec(),
                data_type: DataType::from_raw(d.data_type),
                popef_contains_tensor_data: d.popef_contains_tensor_data,
            })
            .collect())
    }

    /// The replicas served (replica ids 0 .. num_replicas()):
    /// replication_factor copies x the model's own replication factor.
    pub fn num_replicas(&self) -> Result<u32> {
        let mut count = 0;
        check(unsafe { sys::mrt_model_runner_num_replicas(self.raw.as_ptr(), &mut count) })?;
        Ok(count)
    }

    /// The runner's model.
    pub fn model(&self) -> Result<Model> {
        let mut out = ptr::null_mut();
        check(unsafe { sys::mrt_model_runner_model(self.raw.as_ptr(), &mut out) })?;
        Ok(unsafe { Model::from_raw(out) })
    }

    /// The options the runner runs with (without the arrays, devices and
    /// callbacks, which the library does not return).
    pub fn config(&self) -> Result<RunnerConfig<'static>> {
        let mut raw = sys::mrt_model_runner_config::sized();
        check(unsafe { sys::mrt_model_runner_get_config(self.raw.as_ptr(), &mut raw) })?;
        Ok(RunnerConfig::from_raw(&raw))
    }

    /// Runs one request on replica 0; see execute_on.
    pub fn execute(&self, inputs: &[Input<'_>], outputs: &mut [Output<'_>]) -> Result<()> {
        self.execute_on(0, inputs, outputs)
    }

    /// Runs one request on `replica` and returns when `outputs` hold the
    /// results. Element types and sizes (whole batches, or whole samples
    /// with batching_dim, of the model's shape) are checked here, before C;
    /// names the model does not know are left to the library's message.
    pub fn execute_on(&self, replica: u32, inputs: &[Input<'_>], outputs: &mut [Output<'_>]) -> Result<()> {
        self.check_tensors(described(inputs), outputs.iter().map(|t| (t.name, t.bytes.len(), t.data_type)))?;
        let input_names = c_names(inputs.iter().map(|t| t.name))?;
        let output_names = c_names(outputs.iter().map(|t| t.name))?;
        let input_views = borrowed_views(inputs, &input_names);
        let output_views: Vec<sys::mrt_tensor_view> = outputs
            .iter_mut()
            .zip(&output_names)
            .map(|(t, name)| view(name, t.bytes.as_mut_ptr() as *mut c_void, t.bytes.len()))
            .collect();
        check(unsafe {
            sys::mrt_model_runner_execute(
                self.raw.as_ptr(),
                input_views.as_ptr(),
                input_views.len(),
                output_views.as_ptr(),
                output_views.len(),
                replica,
            )
        })
    }

    /// Runs one request on `replica` with outputs the library allocates.
    pub fn execute_alloc(&self, replica: u32, inputs: &[Input<'_>]) -> Result<TensorMemory> {
        self.check_tensors(described(inputs), std::iter::empty())?;
        let names = c_names(inputs.iter().map(|t| t.name))?;
        let views = borrowed_views(inputs, &names);
        let mut out = ptr::null_mut();
        check(unsafe {
            sys::mrt_model_runner_execute_alloc(self.raw.as_ptr(), views.as_ptr(), views.len(), replica, &mut out)
        })?;
        Ok(unsafe { TensorMemory::from_raw(out) })
    }

    /// Queues one request on replica 0; see execute_async_on.
    pub fn execute_async(&self, inputs: &[Input<'_>]) -> Result<Future> {
        self.execute_async_on(0, inputs)
    }

    /// Queues one request on `replica` and returns at once. The inputs are
    /// copied into the Future, so the caller's slices are free again right
    /// away; the outputs are allocated by the library. The Future is a
    /// std::future::Future too: `.await` it.
    pub fn execute_async_on(&self, replica: u32, inputs: &[Input<'_>]) -> Result<Future> {
        self.check_tensors(described(inputs), std::iter::empty())?;
        let OwnedInputs { names, copies, views } = owned_inputs(inputs)?;
        let mut future = ptr::null_mut();
        let mut outputs = ptr::null_mut();
        check(unsafe {
            sys::mrt_model_runner_execute_async_alloc(
                self.raw.as_ptr(),
                views.as_ptr(),
                views.len(),
                replica,
                &mut future,
                &mut outputs,
            )
        })?;
        unsafe { Future::from_raw(future, TensorMemory::from_raw(outputs), copies, names) }
    }

    /// As execute_async_on, writing the outputs into the caller's buffers,
    /// which the Future owns until the request is done and then hands back
    /// (checked like execute's outputs).
    pub fn execute_async_into(
        &self,
        replica: u32,
        inputs: &[Input<'_>],
        outputs: Vec<OutputBuffer>,
    ) -> Result<Future<Vec<OutputBuffer>>> {
        self.check_tensors(described(inputs), outputs.iter().map(|o| (o.name(), o.len_bytes(), o.data_type())))?;
        let OwnedInputs { mut names, copies, views: input_views } = owned_inputs(inputs)?;
        let output_names = c_names(outputs.iter().map(|o| o.name()))?;
        // The buffers' bytes live in their boxed Vecs: moving `outputs` into
        // the Future does not move them.
        let output_views: Vec<sys::mrt_tensor_view> =
            outputs.iter().zip(&output_names).map(|(o, name)| view(name, o.data_ptr(), o.len_bytes())).collect();
        let mut future = ptr::null_mut();
        check(unsafe {
            sys::mrt_model_runner_execute_async(
                self.raw.as_ptr(),
                input_views.as_ptr(),
                input_views.len(),
                output_views.as_ptr(),
                output_views.len(),
                replica,
                &mut future,
            )
        })?;
        names.extend(output_names);
        unsafe { Future::from_raw(future, outputs, copies, names) }
    }

    /// Checks what the binding can check before calling C: every tensor the
    /// model knows has its element type and a whole, non-zero number of
    /// batches (samples, with batching_dim), the same for all. So whatever
    /// the library writes into an output fits in the caller's slice.
    fn check_tensors<'n>(
        &self,
        inputs: impl Iterator<Item = (&'n str, usize, DataType)>,
        outputs: impl Iterator<Item = (&'n str, usize, DataType)>,
    ) -> Result<()> {
        let known: HashMap<&str, (&TensorDesc, &str)> = self
            .inputs
            .iter()
            .map(|d| (d.name.as_str(), (d, "input")))
            .chain(self.outputs.iter().map(|d| (d.name.as_str(), (d, "output"))))
            .collect();
        let mut counts: Option<(usize, &str)> = None;
        for (name, size, data_type) in inputs.chain(outputs) {
            let (desc, direction) = match known.get(name) {
                Some(found) => *found,
                None => continue, // the library names unknown tensors itself
            };
            if Some(data_type) != desc.data_type {
                return Err(invalid(format!(
                    "{direction} '{name}' is given as {data_type:?}, the model's element type is {}",
                    desc.data_type.map(|t| format!("{t:?}")).unwrap_or_else(|| type_name(-1))
                )));
            }
            let (unit, what) = self.unit(desc);
            if size == 0 || unit == 0 || size % unit != 0 {
                return Err(invalid(format!(
                    "{direction} '{name}' has {size} bytes, expected a whole number of {what} of {unit} bytes \
                     (shape {:?})",
                    desc.shape
                )));
            }
            match counts {
                None => counts = Some((size / unit, name)),
                Some((count, first)) if count != size / unit => {
                    return Err(invalid(format!(
                        "{direction} '{name}' holds {} {what} but '{first}' holds {count}",
                        size / unit
                    )))
                }
                Some(_) => {}
            }
        }
        Ok(())
    }

    /// The bytes of one batch, or of one sample along batching_dim.
    fn unit(&self, desc: &TensorDesc) -> (usize, &'static str) {
        let batch = desc.size_in_bytes.max(0) as usize;
        match self.batching_dim.and_then(|dim| desc.shape.get(dim as usize)) {
            Some(&samples) if samples > 0 => (batch / samples as usize, "samples"),
            _ => (batch, "batches"),
        }
    }

    /// The phases of a recent request of `replica`: None the last one,
    /// Some(i) the i-th kept trace (0 = oldest).
    pub fn time_trace(&self, replica: u32, index: Option<usize>) -> Result<RequestTimes> {
        let cur = match index {
            None => -1,
            Some(i) => i32::try_from(i).map_err(|_| invalid(format!("trace index {i} is out of range")))?,
        };
        let mut raw = sys::mrt_request_times::sized();
        check(unsafe { sys::mrt_model_runner_time_trace(self.raw.as_ptr(), replica, cur, &mut raw) })?;
        Ok(times(&raw))
    }

    /// The quantile (0..=1) of each phase over the kept traces.
    pub fn statistics_percentile(&self, replica: u32, quantile: f64) -> Result<RequestTimes> {
        let mut raw = sys::mrt_request_times::sized();
        check(unsafe { sys::mrt_model_runner_statistics_percentile(self.raw.as_ptr(), quantile, replica, &mut raw) })?;
        Ok(times(&raw))
    }

    pub fn statistics_mean(&self, replica: u32) -> Result<RequestTimes> {
        self.statistics(sys::mrt_model_runner_statistics_mean, replica)
    }

    /// How many requests each phase has seen, ever.
    pub fn statistics_count(&self, replica: u32) -> Result<RequestTimes> {
        self.statistics(sys::mrt_model_runner_statistics_count, replica)
    }

    fn statistics(&self, statistic: StatisticsFn, replica: u32) -> Result<RequestTimes> {
        let mut raw = sys::mrt_request_times::sized();
        check(unsafe { statistic(self.raw.as_ptr(), replica, &mut raw) })?;
        Ok(times(&raw))
    }

    /// Makes `replica`'s device fail once with `error` at the first step
    /// named `step_name` of its next Main run (for tests and diagnostics).
    pub fn insert_simulated_error(&self, error: SimulatedError, step_name: &str, replica: u32) -> Result<()> {
        let step_name = name_to_c(step_name)?;
        check(unsafe {
            sys::mrt_model_runner_insert_simulated_error(self.raw.as_ptr(), error as i32, step_name.as_ptr(), replica)
        })
    }

    /// Destroys the runner now (pending requests complete with Cancelled).
    /// The same as dropping it; taking self by value means no call can follow:
    ///
    /// ```compile_fail
    /// let model = mrt::Model::load("mlp.popef").unwrap();
    /// let runner = mrt::ModelRunner::new(&model).unwrap();
    /// runner.close();
    /// let image = [0f32; 784];
    /// runner.execute_async(&[mrt::Input::new("image", &image)]); // error[E0382]: borrow of moved value
    /// ```
    pub fn close(self) {}

    /// Destroys the runner (running the Save programs if configured) and
    /// returns the Save outputs it wrote, with their descriptions.
    pub fn close_with_save_outputs(self) -> Vec<(SaveOutput, Vec<u8>)> {
        let mut runner = std::mem::ManuallyDrop::new(self);
        unsafe { sys::mrt_model_runner_destroy(runner.raw.as_ptr()) };
        // The library is done with the buffers; drop the rest by hand.
        let save = std::mem::take(&mut runner.save);
        unsafe {
            ptr::drop_in_place(&mut runner.inputs);
            ptr::drop_in_place(&mut runner.outputs);
        }
        save.outputs.into_iter().zip(save.buffers).collect()
    }
}

fn times(raw: &sys::mrt_request_times) -> RequestTimes {
    RequestTimes {
        request_us: raw.request_us,
        read_preparation_us: raw.read_preparation_us,
        read_queue_us: raw.read_queue_us,
        computation_us: raw.computation_us,
    }
}

unsafe extern "C" fn flush_trampoline(tensor_id: *const c_char, user_data: *mut c_void) {
    let name = string_from_c(tensor_id);
    with_closure::<FlushCallback, ()>(user_data, "a runner flush callback", (), |callback| callback(&name));
}

impl Drop for ModelRunner {
    fn drop(&mut self) {
        unsafe { sys::mrt_model_runner_destroy(self.raw.as_ptr()) }
    }
}

/// Views of the caller's inputs, which the library only reads (the C view
/// is not const-qualified).
fn borrowed_views(inputs: &[Input<'_>], names: &[CString]) -> Vec<sys::mrt_tensor_view> {
    inputs.iter().zip(names).map(|(t, name)| view(name, t.bytes.as_ptr() as *mut c_void, t.bytes.len())).collect()
}

/// What check_tensors needs of each input.
fn described<'a>(inputs: &'a [Input<'_>]) -> impl Iterator<Item = (&'a str, usize, DataType)> {
    inputs.iter().map(|t| (t.name, t.bytes.len(), t.data_type))
}

/// Copies of a request's inputs, their names and the views the library
/// reads: moving a Vec does not move its heap buffer, so the views stay
/// valid when names and copies move into the Future.
struct OwnedInputs {
    names: Vec<CString>,
    copies: Vec<Vec<u8>>,
    views: Vec<sys::mrt_tensor_view>,
}

fn owned_inputs(inputs: &[Input<'_>]) -> Result<OwnedInputs> {
    let names = c_names(inputs.iter().map(|t| t.name))?;
    let mut copies: Vec<Vec<u8>> = inputs.iter().map(|t| t.bytes.to_vec()).collect();
    let views = copies
        .iter_mut()
        .zip(&names)
        .map(|(bytes, name)| view(name, bytes.as_mut_ptr() as *mut c_void, bytes.len()))
        .collect();
    Ok(OwnedInputs { names, copies, views })
}

fn c_names<'a>(names: impl Iterator<Item = &'a str>) -> Result<Vec<CString>> {
    names.map(name_to_c).collect()
}

pub(crate) fn view(name: &CString, data: *mut c_void, size: usize) -> sys::mrt_tensor_view {
    sys::mrt_tensor_view { name: name.as_ptr(), data, size_bytes: size as u64 }
}

crate::ffi::debug_handle!(ModelRunner);
