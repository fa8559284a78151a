//! ModelBuilder: a PopEF model made in memory from an executable, to serve
//! with a ModelRunner or write to a file.
use std::os::raw::c_void;
use std::ptr::{self, NonNull};

use crate::error::{check, Result};
use crate::executable::Executable;
use crate::ffi::{defaults, name_to_c, optional_c, ptr_or_null};
use crate::model::{DataSource, Model, OptionSet, ProgramPhase};
use crate::sys;
use crate::tensor::{as_bytes, Element};

/// One anchor of a built model (mrt_anchor_config). Direction, element
/// type and count come from the stream or remote buffer `handle` names.
#[derive(Clone, Debug, Default)]
pub struct AnchorConfig<'a> {
    /// The tensor's name; None: the handle.
    pub name: Option<&'a str>,
    pub handle: &'a str,
    pub shape: &'a [i64],
    /// The programs that move it.
    pub programs: &'a [u64],
    pub is_per_replica: bool,
    pub data_source: Option<DataSource>,
}

/// Builds a model; use from one thread at a time (Send, not Sync).
pub struct ModelBuilder {
    raw: NonNull<sys::mrt_model_builder>,
}

// mrt_c.h: "Use from one thread at a time."
unsafe impl Send for ModelBuilder {}

impl ModelBuilder {
    /// A builder for `executable` (kept) under the model name `name`.
    pub fn new(name: &str, executable: &Executable) -> Result<ModelBuilder> {
        let name = name_to_c(name)?;
        let mut out = ptr::null_mut();
        check(unsafe { sys::mrt_model_builder_create(name.as_ptr(), executable.as_ptr(), &mut out) })?;
        Ok(ModelBuilder { raw: NonNull::new(out).expect("MRT_OK and a NULL model builder") })
    }

    fn as_ptr(&self) -> *mut sys::mrt_model_builder {
        self.raw.as_ptr()
    }

    pub fn set_inference(&mut self, is_inference: bool) -> Result<()> {
        check(unsafe { sys::mrt_model_builder_set_inference(self.as_ptr(), is_inference) })
    }

    pub fn set_option(&mut self, set: OptionSet, key: &str, value: &str) -> Result<()> {
        let (key, value) = (name_to_c(key)?, name_to_c(value)?);
        check(unsafe { sys::mrt_model_builder_set_option(self.as_ptr(), set as i32, key.as_ptr(), value.as_ptr()) })
    }

    pub fn set_seed_handle(&mut self, handle: &str) -> Result<()> {
        let handle = name_to_c(handle)?;
        check(unsafe { sys::mrt_model_builder_set_seed_handle(self.as_ptr(), handle.as_ptr()) })
    }

    pub fn set_program_name(&mut self, program: u64, name: &str) -> Result<()> {
        let name = name_to_c(name)?;
        check(unsafe { sys::mrt_model_builder_set_program_name(self.as_ptr(), program, name.as_ptr()) })
    }

    /// The programs of `phase`, in run order.
    pub fn set_program_flow(&mut self, phase: ProgramPhase, programs: &[u64]) -> Result<()> {
        check(unsafe {
            sys::mrt_model_builder_set_program_flow(self.as_ptr(), phase as i32, programs.as_ptr(), programs.len())
        })
    }

    pub fn add_anchor(&mut self, anchor: &AnchorConfig<'_>) -> Result<()> {
        let name = optional_c(anchor.name)?;
        let handle = name_to_c(anchor.handle)?;
        let mut raw = defaults(sys::mrt_anchor_config_init_sized);
        raw.name = ptr_or_null(&name);
        raw.handle = handle.as_ptr();
        raw.shape = anchor.shape.as_ptr();
        raw.rank = anchor.shape.len();
        raw.programs = anchor.programs.as_ptr();
        raw.num_programs = anchor.programs.len();
        raw.is_per_replica = anchor.is_per_replica;
        if let Some(source) = anchor.data_source {
            raw.data_source = source as i32;
        }
        check(unsafe { sys::mrt_model_builder_add_anchor(self.as_ptr(), &raw) })
    }

    /// A TensorData blob (copied) of `shape`, with T's element type.
    pub fn add_tensor_data<T: Element>(&mut self, name: &str, shape: &[i64], data: &[T]) -> Result<()> {
        let name = name_to_c(name)?;
        let bytes = as_bytes(data);
        check(unsafe {
            sys::mrt_model_builder_add_tensor_data(
                self.as_ptr(),
                name.as_ptr(),
                T::DATA_TYPE.raw(),
                shape.as_ptr(),
                shape.len(),
                bytes.as_ptr() as *const c_void,
                bytes.len() as u64,
            )
        })
    }

    /// A FeedData blob (copied): num_tensors tensors of `shape`.
    pub fn add_feed_data<T: Element>(&mut self, name: &str, shape: &[i64], data: &[T], num_tensors: u64) -> Result<()> {
        let name = name_to_c(name)?;
        let bytes = as_bytes(data);
        check(unsafe {
            sys::mrt_model_builder_add_feed_data(
                self.as_ptr(),
                name.as_ptr(),
                T::DATA_TYPE.raw(),
                shape.as_ptr(),
                shape.len(),
                bytes.as_ptr() as *const c_void,
                bytes.len() as u64,
                num_tensors,
            )
        })
    }

    /// The model, checked as a loaded file is. The builder may be used again.
    pub fn build(&mut self) -> Result<Model> {
        let mut out = ptr::null_mut();
        check(unsafe { sys::mrt_model_builder_build(self.as_ptr(), &mut out) })?;
        Ok(unsafe { Model::from_raw(out) })
    }
}

impl Drop for ModelBuilder {
    fn drop(&mut self) {
        unsafe { sys::mrt_model_builder_destroy(self.raw.as_ptr()) }
    }
}

crate::ffi::debug_handle!(ModelBuilder);
