//! Model: a PopEF model loaded by libmrt, its metadata, anchors and data.
use std::os::raw::{c_char, c_void};
use std::path::Path;
use std::ptr::{self, NonNull};

use crate::error::{check, invalid, string_from_c, Result};
use crate::executable::Executable;
use crate::ffi::{name_to_c, path_to_c, slice, CStrings, SizedStruct};
use crate::sys;
use crate::tensor::{cast_slice, DataType, Element};

/// A loaded model. Immutable, so the header allows any number of threads to
/// use it at once: Send and Sync. Runners and sessions made from it keep what
/// they need of it alive, so it may be dropped before them.
pub struct Model {
    raw: NonNull<sys::mrt_model>,
}

// mrt_c.h: "Immutable once loaded, so every function below may be called
// from any number of threads at once on the same model."
unsafe impl Send for Model {}
unsafe impl Sync for Model {}

/// mrt_model_info, copied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelInfo {
    pub executable: String,
    pub replication_factor: u64,
    pub num_ipus: u64,
    pub ipu_version: u32,
    pub is_inference: bool,
    pub seed_handle: String,
    pub package_hash: String,
    pub num_anchors: usize,
    pub num_programs: usize,
    pub num_engine_options: usize,
    pub num_device_options: usize,
    pub num_tensor_data: usize,
    pub num_feed_data: usize,
}

/// Direction of an anchor, seen from the device (mrt_tensor_type).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TensorType {
    Input,
    Output,
    Unknown,
}

impl TensorType {
    pub(crate) fn from_raw(raw: i32) -> TensorType {
        match raw {
            0 => TensorType::Input,
            1 => TensorType::Output,
            _ => TensorType::Unknown,
        }
    }
}

/// Where an input's bytes come from when the user gives none (mrt_data_source).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DataSource {
    None = 0,
    TensorData = 1,
    FeedData = 2,
}

/// The phases of a program flow (mrt_program_phase).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProgramPhase {
    Load = 0,
    Main = 1,
    Save = 2,
}

/// Which option set of a model (mrt_model_options).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OptionSet {
    Engine = 0,
    Device = 1,
}

/// One anchor (mrt_anchor_info), copied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnchorInfo {
    pub name: String,
    pub handle: String,
    /// None for a value outside mrt_data_type.
    pub data_type: Option<DataType>,
    pub shape: Vec<i64>,
    pub size_in_bytes: i64,
    pub programs: Vec<u64>,
    pub is_per_replica: bool,
    pub tensor_type: TensorType,
    pub data_source: DataSource,
    /// The remote buffer's name and slots, if the anchor has one.
    pub remote_buffer: Option<(String, i64)>,
    /// For the anchor a callback factory is given: the replica its callback
    /// will serve (a replicated model's factory is asked once per replica).
    /// 0 elsewhere.
    pub replica: u32,
}

impl AnchorInfo {
    /// Copies an anchor the library lent for the duration of a call.
    pub(crate) unsafe fn from_raw(raw: &sys::mrt_anchor_info) -> AnchorInfo {
        AnchorInfo {
            name: string_from_c(raw.name),
            handle: string_from_c(raw.handle),
            data_type: DataType::from_raw(raw.data_type),
            shape: slice(raw.shape, raw.rank).to_vec(),
            size_in_bytes: raw.size_in_bytes,
            programs: slice(raw.programs, raw.num_programs).to_vec(),
            is_per_replica: raw.is_per_replica,
            tensor_type: TensorType::from_raw(raw.tensor_type),
            data_source: match raw.data_source {
                1 => DataSource::TensorData,
                2 => DataSource::FeedData,
                _ => DataSource::None,
            },
            remote_buffer: if raw.remote_buffer.is_null() {
                None
            } else {
                Some((string_from_c(raw.remote_buffer), raw.remote_buffer_repeats))
            },
            // A library older than the field fills less of the struct.
            replica: if raw.struct_size >= end_of_replica(raw) { raw.replica } else { 0 },
        }
    }
}

/// Where mrt_anchor_info's replica field ends (std::mem::offset_of! is
/// newer than the crate's rust-version).
fn end_of_replica(raw: &sys::mrt_anchor_info) -> usize {
    std::ptr::addr_of!(raw.replica) as usize - raw as *const sys::mrt_anchor_info as usize + std::mem::size_of::<u32>()
}

impl Model {
    /// Loads the model of one PopEF file.
    pub fn load(path: impl AsRef<Path>) -> Result<Model> {
        Model::load_files(&[path.as_ref()])
    }

    /// Loads the model held by several PopEF files (in any order).
    pub fn load_files<P: AsRef<Path>>(paths: &[P]) -> Result<Model> {
        let paths = CStrings::paths(paths)?;
        let mut raw = ptr::null_mut();
        check(unsafe { sys::mrt_model_load(paths.as_ptr(), paths.len(), &mut raw) })?;
        Ok(unsafe { Model::from_raw(raw) })
    }

    /// Loads the model whose executable is named `executable` from files
    /// that may hold several.
    pub fn load_named<P: AsRef<Path>>(paths: &[P], executable: &str) -> Result<Model> {
        let paths = CStrings::paths(paths)?;
        let executable = name_to_c(executable)?;
        let mut raw = ptr::null_mut();
        check(unsafe { sys::mrt_model_load_named(paths.as_ptr(), paths.len(), executable.as_ptr(), &mut raw) })?;
        Ok(unsafe { Model::from_raw(raw) })
    }

    /// Loads a model from the bytes of a PopEF file (copied).
    pub fn load_from_memory(bytes: &[u8]) -> Result<Model> {
        let mut raw = ptr::null_mut();
        check(unsafe { sys::mrt_model_load_from_memory(bytes.as_ptr() as *const c_void, bytes.len(), &mut raw) })?;
        Ok(unsafe { Model::from_raw(raw) })
    }

    /// Takes ownership of a model handle the library returned with MRT_OK.
    pub(crate) unsafe fn from_raw(raw: *mut sys::mrt_model) -> Model {
        Model { raw: NonNull::new(raw).expect("libmrt returned MRT_OK and a NULL model") }
    }

    pub fn as_ptr(&self) -> *const sys::mrt_model {
        self.raw.as_ptr()
    }

    pub fn info(&self) -> Result<ModelInfo> {
        let mut raw = sys::mrt_model_info::sized();
        check(unsafe { sys::mrt_model_get_info(self.as_ptr(), &mut raw) })?;
        Ok(unsafe {
            ModelInfo {
                executable: string_from_c(raw.executable),
                replication_factor: raw.replication_factor,
                num_ipus: raw.num_ipus,
                ipu_version: raw.ipu_version,
                is_inference: raw.is_inference,
                seed_handle: string_from_c(raw.seed_handle),
                package_hash: string_from_c(raw.package_hash),
                num_anchors: raw.num_anchors,
                num_programs: raw.num_programs,
                num_engine_options: raw.num_engine_options,
                num_device_options: raw.num_device_options,
                num_tensor_data: raw.num_tensor_data,
                num_feed_data: raw.num_feed_data,
            }
        })
    }

    /// The dimension a ModelRunner batches requests along when its config
    /// leaves batching_dim unset (recorded by OnnxOptions::batching_dim), or
    /// None if the model records none (mrt_model_batching_dim).
    pub fn batching_dim(&self) -> Result<Option<u32>> {
        let mut dim = sys::MRT_BATCHING_DISABLED;
        check(unsafe { sys::mrt_model_batching_dim(self.as_ptr(), &mut dim) })?;
        Ok(if dim == sys::MRT_BATCHING_DISABLED { None } else { Some(dim) })
    }

    /// Every anchor, in model order.
    pub fn anchors(&self) -> Result<Vec<AnchorInfo>> {
        (0..self.info()?.num_anchors)
            .map(|index| {
                let mut raw = sys::mrt_anchor_info::sized();
                check(unsafe { sys::mrt_model_anchor(self.as_ptr(), index, &mut raw) })?;
                Ok(unsafe { AnchorInfo::from_raw(&raw) })
            })
            .collect()
    }

    pub fn anchor_by_name(&self, name: &str) -> Result<AnchorInfo> {
        let name = name_to_c(name)?;
        let mut raw = sys::mrt_anchor_info::sized();
        check(unsafe { sys::mrt_model_anchor_by_name(self.as_ptr(), name.as_ptr(), &mut raw) })?;
        Ok(unsafe { AnchorInfo::from_raw(&raw) })
    }

    pub fn anchor_by_handle(&self, handle: &str) -> Result<AnchorInfo> {
        let handle = name_to_c(handle)?;
        let mut raw = sys::mrt_anchor_info::sized();
        check(unsafe { sys::mrt_model_anchor_by_handle(self.as_ptr(), handle.as_ptr(), &mut raw) })?;
        Ok(unsafe { AnchorInfo::from_raw(&raw) })
    }

    /// The (key, value) options of one set, in key order.
    pub fn options(&self, set: OptionSet) -> Result<Vec<(String, String)>> {
        let info = self.info()?;
        let count = match set {
            OptionSet::Engine => info.num_engine_options,
            OptionSet::Device => info.num_device_options,
        };
        (0..count)
            .map(|index| {
                let (mut key, mut value): (*const c_char, *const c_char) = (ptr::null(), ptr::null());
                check(unsafe { sys::mrt_model_option(self.as_ptr(), set as i32, index, &mut key, &mut value) })?;
                Ok(unsafe { (string_from_c(key), string_from_c(value)) })
            })
            .collect()
    }

    /// The program indices of one phase, in run order.
    pub fn program_flow(&self, phase: ProgramPhase) -> Result<Vec<u64>> {
        let mut programs = ptr::null();
        let mut count = 0;
        check(unsafe { sys::mrt_model_program_flow(self.as_ptr(), phase as i32, &mut programs, &mut count) })?;
        Ok(unsafe { slice(programs, count) }.to_vec())
    }

    /// The programs map: (program index, name), in index order.
    pub fn programs(&self) -> Result<Vec<(u64, String)>> {
        (0..self.info()?.num_programs)
            .map(|index| {
                let (mut program, mut name) = (0u64, ptr::null());
                check(unsafe { sys::mrt_model_program(self.as_ptr(), index, &mut program, &mut name) })?;
                Ok((program, unsafe { string_from_c(name) }))
            })
            .collect()
    }

    /// The bytes of TensorData blob `name`, borrowed from the memory-mapped
    /// file (no copy): valid as long as the model, which the borrow enforces.
    pub fn tensor_data_bytes(&self, name: &str) -> Result<&[u8]> {
        let name = name_to_c(name)?;
        let mut data: *const c_void = ptr::null();
        let mut size = 0u64;
        check(unsafe { sys::mrt_model_tensor_data(self.as_ptr(), name.as_ptr(), &mut data, &mut size) })?;
        Ok(unsafe { slice(data as *const u8, size as usize) })
    }

    /// TensorData blob `name` as elements of T (the blob is 64-byte aligned;
    /// its size must be a whole number of elements). The slice borrows the
    /// model, so it cannot outlive it:
    ///
    /// ```compile_fail
    /// let w1: &[f32] = {
    ///     let model = mrt::Model::load("mlp.popef").unwrap();
    ///     model.tensor_data::<f32>("w1").unwrap()
    /// }; // error[E0597]: `model` does not live long enough
    /// ```
    ///
    /// T must be the element type of the anchor the blob belongs to (the
    /// anchor of the same name), when there is one.
    pub fn tensor_data<T: Element>(&self, name: &str) -> Result<&[T]> {
        let bytes = self.tensor_data_bytes(name)?;
        if let Ok(anchor) = self.anchor_by_name(name) {
            if anchor.data_type != Some(T::DATA_TYPE) {
                return Err(invalid(format!(
                    "TensorData '{name}' holds {}, asked for {:?}",
                    anchor.data_type.map(|t| format!("{t:?}")).unwrap_or_else(|| "an unknown type".into()),
                    T::DATA_TYPE
                )));
            }
        }
        cast_slice(name, bytes)
    }

    /// FeedData blob `name`: its bytes (borrowed) and how many tensors they hold.
    pub fn feed_data_bytes(&self, name: &str) -> Result<(&[u8], u64)> {
        let name = name_to_c(name)?;
        let mut data: *const c_void = ptr::null();
        let (mut size, mut count) = (0u64, 0u64);
        check(unsafe { sys::mrt_model_feed_data(self.as_ptr(), name.as_ptr(), &mut data, &mut size, &mut count) })?;
        Ok((unsafe { slice(data as *const u8, size as usize) }, count))
    }

    /// The serialized executable (borrowed bytes).
    pub fn executable_bytes(&self) -> Result<&[u8]> {
        let mut data: *const c_void = ptr::null();
        let mut size = 0u64;
        check(unsafe { sys::mrt_model_executable(self.as_ptr(), &mut data, &mut size) })?;
        Ok(unsafe { slice(data as *const u8, size as usize) })
    }

    /// The model's executable, deserialized and verified.
    pub fn executable(&self) -> Result<Executable> {
        let mut raw = ptr::null_mut();
        check(unsafe { sys::mrt_model_get_executable(self.as_ptr(), &mut raw) })?;
        Ok(unsafe { Executable::from_raw(raw) })
    }

    /// Writes the model as one PopEF file.
    pub fn write(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path_to_c(path.as_ref())?;
        check(unsafe { sys::mrt_model_write(self.as_ptr(), path.as_ptr()) })
    }

    /// Writes the metadata and executable to model_path and the data blobs
    /// to data_path.
    pub fn write_split(&self, model_path: impl AsRef<Path>, data_path: impl AsRef<Path>) -> Result<()> {
        let model_path = path_to_c(model_path.as_ref())?;
        let data_path = path_to_c(data_path.as_ref())?;
        check(unsafe { sys::mrt_model_write_split(self.as_ptr(), model_path.as_ptr(), data_path.as_ptr()) })
    }

    /// The bytes of the PopEF file write() would write.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let mut size = 0usize;
        check(unsafe { sys::mrt_model_write_to_memory(self.as_ptr(), ptr::null_mut(), 0, &mut size) })?;
        let mut bytes = vec![0u8; size];
        check(unsafe {
            sys::mrt_model_write_to_memory(self.as_ptr(), bytes.as_mut_ptr() as *mut c_void, bytes.len(), &mut size)
        })?;
        bytes.truncate(size);
        Ok(bytes)
    }

    /// Releases the model now. The same as dropping it; it takes the model
    /// by value, so no later call on it can compile.
    ///
    /// ```compile_fail
    /// let model = mrt::Model::load("mlp.popef").unwrap();
    /// model.close();
    /// model.tensor_data::<f32>("w1"); // error[E0382]: borrow of moved value
    /// ```
    pub fn close(self) {}
}

impl Drop for Model {
    fn drop(&mut self) {
        unsafe { sys::mrt_model_destroy(self.raw.as_ptr()) }
    }
}

crate::ffi::debug_handle!(Model);
