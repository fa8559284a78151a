//! TensorMemory: outputs allocated by the library (mrt_tensor_memory).
use std::ptr::NonNull;

use crate::error::{check, string_from_c, Result};
use crate::ffi::name_to_c;
use crate::sys;
use crate::tensor::{cast_slice, Element};

/// The outputs of one request, in memory libmrt allocated (64-byte aligned).
/// The header allows its use from any thread: Send and Sync.
pub struct TensorMemory {
    raw: NonNull<sys::mrt_tensor_memory>,
}

// mrt_c.h: "Owned by the caller ... Any thread." Nothing here mutates it.
unsafe impl Send for TensorMemory {}
unsafe impl Sync for TensorMemory {}

impl TensorMemory {
    /// Takes ownership of a handle the library returned.
    pub(crate) unsafe fn from_raw(raw: *mut sys::mrt_tensor_memory) -> TensorMemory {
        TensorMemory { raw: NonNull::new(raw).expect("libmrt returned MRT_OK and a NULL tensor memory") }
    }

    /// The number of outputs held.
    pub fn len(&self) -> usize {
        let mut count = 0;
        // Cannot fail on a valid handle; a failure would leave count at 0.
        let _ = unsafe { sys::mrt_tensor_memory_count(self.raw.as_ptr(), &mut count) };
        count
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The outputs' names, in the library's (name) order.
    pub fn names(&self) -> Result<Vec<String>> {
        (0..self.len())
            .map(|index| {
                let mut view = empty_view();
                check(unsafe { sys::mrt_tensor_memory_get(self.raw.as_ptr(), index, &mut view) })?;
                Ok(unsafe { string_from_c(view.name) })
            })
            .collect()
    }

    /// The bytes of output `name`, borrowed from this handle.
    pub fn bytes(&self, name: &str) -> Result<&[u8]> {
        let c_name = name_to_c(name)?;
        let mut view = empty_view();
        check(unsafe { sys::mrt_tensor_memory_find(self.raw.as_ptr(), c_name.as_ptr(), &mut view) })?;
        if view.size_bytes == 0 {
            return Ok(&[]);
        }
        Ok(unsafe { std::slice::from_raw_parts(view.data as *const u8, view.size_bytes as usize) })
    }

    /// Output `name` as elements of T.
    pub fn get<T: Element>(&self, name: &str) -> Result<&[T]> {
        cast_slice(name, self.bytes(name)?)
    }
}

impl Drop for TensorMemory {
    fn drop(&mut self) {
        unsafe { sys::mrt_tensor_memory_destroy(self.raw.as_ptr()) }
    }
}

fn empty_view() -> sys::mrt_tensor_view {
    sys::mrt_tensor_view { name: std::ptr::null(), data: std::ptr::null_mut(), size_bytes: 0 }
}

crate::ffi::debug_handle!(TensorMemory);
