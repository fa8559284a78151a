//! ONNX import: compiles an ONNX model into a PopEF Model for the simulated
//! IPU (docs/onnx.md lists the operators).
use std::os::raw::c_void;
use std::path::Path;
use std::ptr;

use crate::callback::{closure_user_data, free_boxed};
use crate::error::{check, Result};
use crate::ffi::{defaults, name_to_c, optional_c, path_to_c, ptr_or_null};
use crate::graph::{progress_trampoline, ProgressCallback, Target};
use crate::model::Model;
use crate::sys;

/// The precision the model computes in (mrt_onnx_precision).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnnxPrecision {
    F32 = 0,
    /// FLOAT tensors run as FLOAT16; inputs and outputs keep their types.
    F16 = 1,
}

/// ONNX compile options; Default gives the library's defaults.
pub struct OnnxOptions<'a> {
    /// A system of Target::new ("gc200" by default).
    pub target: Option<&'a str>,
    /// Overrides `target`.
    pub custom_target: Option<&'a Target>,
    pub num_ipus: u32,
    pub replication_factor: u32,
    /// The value of dynamic dimensions of inputs.
    pub batch_size: i64,
    /// The executable's name; None: the ONNX graph's name.
    pub model_name: Option<&'a str>,
    /// Whole shapes replacing the declared ones: (input name, dims).
    pub input_shapes: &'a [(&'a str, &'a [i64])],
    pub precision: OnnxPrecision,
    /// The dimension of every input and output recorded in the model as the
    /// one a ModelRunner batches requests along (Model::batching_dim); None:
    /// none.
    pub batching_dim: Option<u32>,
    /// Called on the compiling thread.
    pub progress: Option<ProgressCallback>,
}

impl Default for OnnxOptions<'_> {
    fn default() -> Self {
        let raw = defaults(sys::mrt_onnx_options_init_sized);
        OnnxOptions {
            target: None,
            custom_target: None,
            num_ipus: raw.num_ipus,
            replication_factor: raw.replication_factor,
            batch_size: raw.batch_size,
            model_name: None,
            input_shapes: &[],
            precision: OnnxPrecision::F32,
            batching_dim: None,
            progress: None,
        }
    }
}

/// Compiles the ONNX file at `path` (external data is read from its directory).
pub fn compile_onnx_file(path: impl AsRef<Path>, options: OnnxOptions<'_>) -> Result<Model> {
    let path = path_to_c(path.as_ref())?;
    compile(options, |raw, out| unsafe { sys::mrt_onnx_compile_file(path.as_ptr(), raw, out) })
}

/// Compiles an ONNX model from its bytes (copied; no external data).
pub fn compile_onnx_bytes(bytes: &[u8], options: OnnxOptions<'_>) -> Result<Model> {
    compile(options, |raw, out| unsafe {
        sys::mrt_onnx_compile_memory(bytes.as_ptr() as *const c_void, bytes.len(), raw, out)
    })
}

fn compile(
    options: OnnxOptions<'_>,
    compile: impl FnOnce(*const sys::mrt_onnx_options, *mut *mut sys::mrt_model) -> i32,
) -> Result<Model> {
    let target = optional_c(options.target)?;
    let model_name = optional_c(options.model_name)?;
    let shape_names = options.input_shapes.iter().map(|(name, _)| name_to_c(name)).collect::<Result<Vec<_>>>()?;
    let shapes: Vec<sys::mrt_onnx_input_shape> = options
        .input_shapes
        .iter()
        .zip(&shape_names)
        .map(|((_, dims), name)| sys::mrt_onnx_input_shape {
            name: name.as_ptr(),
            dims: dims.as_ptr(),
            rank: dims.len(),
        })
        .collect();
    let mut raw = defaults(sys::mrt_onnx_options_init_sized);
    if target.is_some() {
        raw.target = ptr_or_null(&target);
    }
    raw.custom_target = options.custom_target.map(|t| t.raw() as *const sys::mrt_target).unwrap_or(ptr::null());
    raw.num_ipus = options.num_ipus;
    raw.replication_factor = options.replication_factor;
    raw.batch_size = options.batch_size;
    if model_name.is_some() {
        raw.model_name = ptr_or_null(&model_name);
    }
    raw.input_shapes = if shapes.is_empty() { ptr::null() } else { shapes.as_ptr() };
    raw.num_input_shapes = shapes.len();
    raw.precision = options.precision as i32;
    raw.batching_dim = options.batching_dim.unwrap_or(sys::MRT_BATCHING_DISABLED);
    if let Some(progress) = options.progress {
        raw.progress = Some(progress_trampoline);
        raw.user_data = closure_user_data(progress);
        raw.user_data_free = Some(free_boxed::<std::sync::Mutex<ProgressCallback>>);
    }
    let mut out = ptr::null_mut();
    check(compile(&raw, &mut out))?;
    Ok(unsafe { Model::from_raw(out) })
}
