//! ModelRunner: serves inference requests on a model (mrt_model_runner).
use std::collections::HashMap;
use std::ffi::CString;
use std::mem::MaybeUninit;
use std::os::raw::c_void;
use std::ptr::{self, NonNull};
use std::time::Duration;

use crate::error::{check, string_from_c, MrtError, Result, Status};
use crate::future::Future;
use crate::model::{name_to_c, Model};
use crate::sys;
use crate::tensor::{Input, Output};

/// How to create a runner.
#[derive(Clone, Debug)]
pub struct RunnerOptions {
    /// Replicas, each on its own simulated device.
    pub replicas: u32,
    /// How long to wait for busy devices; None fails at once if none is free.
    pub device_wait: Option<Duration>,
}

impl Default for RunnerOptions {
    fn default() -> RunnerOptions {
        RunnerOptions { replicas: 1, device_wait: None }
    }
}

/// What execute takes or returns for one tensor (mrt_data_desc, copied).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorDesc {
    pub name: String,
    /// Of one model batch.
    pub size_in_bytes: i64,
    pub shape: Vec<i64>,
    /// An mrt_data_type.
    pub data_type: i32,
}

/// A model runner. It is always created with `thread_safe`, which is what
/// lets the header allow execute calls from many threads at once: so it is
/// Send and Sync and its methods take &self. Destruction cannot overlap
/// other calls: Drop needs the runner by value.
pub struct ModelRunner {
    raw: NonNull<sys::mrt_model_runner>,
    inputs: Vec<TensorDesc>,
    outputs: Vec<TensorDesc>,
}

// mrt_c.h: "with config.thread_safe, execute and execute_async may be called
// from any number of threads at once ... The description and statistics
// calls may be made from any thread."
unsafe impl Send for ModelRunner {}
unsafe impl Sync for ModelRunner {}

/// The config struct with room behind it: mrt_model_runner_config_init
/// writes sizeof(the library's struct), which a newer library may have grown
/// (fields are only appended); the tail takes those bytes.
#[repr(C)]
struct ConfigStorage {
    config: sys::mrt_model_runner_config,
    _tail: [u8; 512],
}

impl ModelRunner {
    /// A runner for `model` with the default options. The runner keeps what
    /// it needs of the model: the model may be dropped first.
    pub fn new(model: &Model) -> Result<ModelRunner> {
        ModelRunner::with_options(model, &RunnerOptions::default())
    }

    pub fn with_options(model: &Model, options: &RunnerOptions) -> Result<ModelRunner> {
        let mut wait = MaybeUninit::<sys::mrt_device_wait_config>::zeroed();
        let mut storage = MaybeUninit::<ConfigStorage>::zeroed();
        let mut raw = ptr::null_mut();
        let status = unsafe {
            let config = ptr::addr_of_mut!((*storage.as_mut_ptr()).config);
            sys::mrt_model_runner_config_init(config);
            (*config).replication_factor = options.replicas;
            (*config).thread_safe = true;
            if let Some(timeout) = options.device_wait {
                sys::mrt_device_wait_config_init(wait.as_mut_ptr());
                let wait = wait.as_mut_ptr();
                (*wait).strategy = sys::MRT_DEVICE_WAIT_WITH_TIMEOUT;
                (*wait).timeout_ns = i64::try_from(timeout.as_nanos()).unwrap_or(i64::MAX);
                (*wait).sleep_time_ns = 1_000_000;
                (*config).device_wait_config = wait;
            }
            sys::mrt_model_runner_create(model.as_ptr(), config, &mut raw)
        };
        check(status)?;
        let raw = NonNull::new(raw).expect("mrt_model_runner_create returned MRT_OK and NULL");
        // Own the handle before anything else can fail, so Drop frees it.
        let mut runner = ModelRunner { raw, inputs: Vec::new(), outputs: Vec::new() };
        runner.inputs = runner.descs(sys::mrt_model_runner_execute_inputs)?;
        runner.outputs = runner.descs(sys::mrt_model_runner_execute_outputs)?;
        Ok(runner)
    }

    /// The tensors execute takes (inputs without PopEF data), in name order.
    pub fn inputs(&self) -> &[TensorDesc] {
        &self.inputs
    }

    /// The tensors execute returns, in name order.
    pub fn outputs(&self) -> &[TensorDesc] {
        &self.outputs
    }

    fn descs(
        &self,
        list: unsafe extern "C" fn(*const sys::mrt_model_runner, *mut *const sys::mrt_data_desc, *mut usize) -> i32,
    ) -> Result<Vec<TensorDesc>> {
        let mut descs = ptr::null();
        let mut count = 0usize;
        check(unsafe { list(self.raw.as_ptr(), &mut descs, &mut count) })?;
        let descs = if count == 0 { &[][..] } else { unsafe { std::slice::from_raw_parts(descs, count) } };
        Ok(descs
            .iter()
            .map(|d| TensorDesc {
                name: unsafe { string_from_c(d.name) },
                size_in_bytes: d.size_in_bytes,
                shape: if d.rank == 0 {
                    Vec::new()
                } else {
                    unsafe { std::slice::from_raw_parts(d.shape, d.rank) }.to_vec()
                },
                data_type: d.data_type,
            })
            .collect())
    }

    /// Runs one request on replica 0 and returns when `outputs` hold the
    /// results. Sizes and element types are checked here, before the library
    /// is called; names the model does not know are left to the library,
    /// which rejects them with its own message.
    pub fn execute(&self, inputs: &[Input<'_>], outputs: &mut [Output<'_>]) -> Result<()> {
        self.check_sizes(
            inputs.iter().map(|t| (t.name, t.bytes.len(), t.data_type, t.type_name)),
            outputs.iter().map(|t| (t.name, t.bytes.len(), t.data_type, t.type_name)),
        )?;
        let input_names = c_names(inputs.iter().map(|t| t.name))?;
        let output_names = c_names(outputs.iter().map(|t| t.name))?;
        let input_views: Vec<sys::mrt_tensor_view> = inputs
            .iter()
            .zip(&input_names)
            // The library only reads inputs; the C view is not const-qualified.
            .map(|(t, name)| view(name, t.bytes.as_ptr() as *mut c_void, t.bytes.len()))
            .collect();
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
                0,
            )
        })
    }

    /// Queues one request on replica 0 and returns at once. The inputs are
    /// copied into the Future, so the caller's slices are free again right
    /// away; the outputs are allocated by the library (Future::wait).
    pub fn execute_async(&self, inputs: &[Input<'_>]) -> Result<Future> {
        self.check_sizes(inputs.iter().map(|t| (t.name, t.bytes.len(), t.data_type, t.type_name)), std::iter::empty())?;
        let names = c_names(inputs.iter().map(|t| t.name))?;
        let mut copies: Vec<Vec<u8>> = inputs.iter().map(|t| t.bytes.to_vec()).collect();
        // Moving a Vec does not move its heap buffer: these pointers stay
        // valid when `copies` moves into the Future.
        let views: Vec<sys::mrt_tensor_view> = copies
            .iter_mut()
            .zip(&names)
            .map(|(bytes, name)| view(name, bytes.as_mut_ptr() as *mut c_void, bytes.len()))
            .collect();
        let mut future = ptr::null_mut();
        let mut outputs = ptr::null_mut();
        check(unsafe {
            sys::mrt_model_runner_execute_async_alloc(
                self.raw.as_ptr(),
                views.as_ptr(),
                views.len(),
                0,
                &mut future,
                &mut outputs,
            )
        })?;
        Ok(unsafe { Future::from_raw(future, outputs, copies, names) })
    }

    /// Checks what the binding can check before calling C: every tensor the
    /// model knows has its element type and a whole, non-zero number of
    /// model batches, the same number for all. So whatever the library
    /// writes into an output fits in the caller's slice.
    fn check_sizes<'n>(
        &self,
        inputs: impl Iterator<Item = (&'n str, usize, i32, &'static str)>,
        outputs: impl Iterator<Item = (&'n str, usize, i32, &'static str)>,
    ) -> Result<()> {
        let known: HashMap<&str, (&TensorDesc, &str)> = self
            .inputs
            .iter()
            .map(|d| (d.name.as_str(), (d, "input")))
            .chain(self.outputs.iter().map(|d| (d.name.as_str(), (d, "output"))))
            .collect();
        let mut batches: Option<(usize, &str)> = None;
        for (name, size, data_type, type_name) in inputs.chain(outputs) {
            let (desc, direction) = match known.get(name) {
                Some(found) => *found,
                None => continue, // the library names unknown tensors itself
            };
            if data_type != desc.data_type {
                return Err(size_error(format!(
                    "{direction} '{name}' is given as {type_name}, the model's element type is mrt_data_type {}",
                    desc.data_type
                )));
            }
            let unit = desc.size_in_bytes as usize;
            if size == 0 || unit == 0 || size % unit != 0 {
                return Err(size_error(format!(
                    "{direction} '{name}' has {size} bytes, expected {unit} (shape {:?}) or a whole multiple of it",
                    desc.shape
                )));
            }
            match batches {
                None => batches = Some((size / unit, name)),
                Some((count, first)) if count != size / unit => {
                    return Err(size_error(format!(
                        "{direction} '{name}' holds {} batches but '{first}' holds {count}",
                        size / unit
                    )))
                }
                Some(_) => {}
            }
        }
        Ok(())
    }

    /// Destroys the runner now (pending requests complete with CANCELLED).
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
}

impl std::fmt::Debug for ModelRunner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ModelRunner({:p})", self.raw)
    }
}

impl Drop for ModelRunner {
    fn drop(&mut self) {
        unsafe { sys::mrt_model_runner_destroy(self.raw.as_ptr()) }
    }
}

fn size_error(message: String) -> MrtError {
    MrtError::new(Status::INVALID_ARGUMENT, format!("{message} (checked by the Rust binding)"))
}

fn c_names<'a>(names: impl Iterator<Item = &'a str>) -> Result<Vec<CString>> {
    names.map(name_to_c).collect()
}

fn view(name: &CString, data: *mut c_void, size: usize) -> sys::mrt_tensor_view {
    sys::mrt_tensor_view { name: name.as_ptr(), data, size_bytes: size as u64 }
}
