//! Model: a PopEF model loaded by libmrt, and the TensorData it carries.
use std::ffi::CString;
use std::os::raw::c_void;
use std::path::Path;
use std::ptr::{self, NonNull};

use crate::error::{check, MrtError, Result, Status};
use crate::sys;
use crate::tensor::{cast_slice, Element};

/// A loaded model. Immutable, so the header allows any number of threads to
/// use it at once: Send and Sync. Runners made from it keep what they need of
/// it alive, so it may be dropped before them.
pub struct Model {
    raw: NonNull<sys::mrt_model>,
}

// mrt_c.h: "Immutable once loaded, so every function below may be called
// from any number of threads at once on the same model."
unsafe impl Send for Model {}
unsafe impl Sync for Model {}

impl Model {
    /// Loads the model of one PopEF file.
    pub fn load(path: impl AsRef<Path>) -> Result<Model> {
        let path = path_to_c(path.as_ref())?;
        let paths = [path.as_ptr()];
        let mut raw = ptr::null_mut();
        check(unsafe { sys::mrt_model_load(paths.as_ptr(), paths.len(), &mut raw) })?;
        Ok(Model { raw: NonNull::new(raw).expect("mrt_model_load returned MRT_OK and NULL") })
    }

    pub(crate) fn as_ptr(&self) -> *const sys::mrt_model {
        self.raw.as_ptr()
    }

    /// The bytes of TensorData blob `name`, borrowed from the memory-mapped
    /// file (no copy): valid as long as the model, which the borrow enforces.
    pub fn tensor_data_bytes(&self, name: &str) -> Result<&[u8]> {
        let name = name_to_c(name)?;
        let mut data: *const c_void = ptr::null();
        let mut size = 0u64;
        check(unsafe { sys::mrt_model_tensor_data(self.raw.as_ptr(), name.as_ptr(), &mut data, &mut size) })?;
        if size == 0 {
            return Ok(&[]);
        }
        Ok(unsafe { std::slice::from_raw_parts(data as *const u8, size as usize) })
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
    pub fn tensor_data<T: Element>(&self, name: &str) -> Result<&[T]> {
        cast_slice(name, self.tensor_data_bytes(name)?)
    }

    /// Releases the model now. The same as dropping it; it exists to make
    /// "closing" explicit: it takes the model by value, so no later call on
    /// it can compile.
    ///
    /// ```compile_fail
    /// let model = mrt::Model::load("mlp.popef").unwrap();
    /// model.close();
    /// model.tensor_data::<f32>("w1"); // error[E0382]: borrow of moved value
    /// ```
    pub fn close(self) {}
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Model({:p})", self.raw)
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        unsafe { sys::mrt_model_destroy(self.raw.as_ptr()) }
    }
}

pub(crate) fn name_to_c(name: &str) -> Result<CString> {
    CString::new(name)
        .map_err(|_| MrtError::new(Status::INVALID_ARGUMENT, format!("name {name:?} contains a NUL byte")))
}

fn path_to_c(path: &Path) -> Result<CString> {
    use std::os::unix::ffi::OsStrExt;
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| MrtError::new(Status::INVALID_ARGUMENT, format!("path {} contains a NUL byte", path.display())))
}
