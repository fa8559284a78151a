//! Typed tensors crossing the C boundary: element types libmrt knows, and
//! named views of caller slices for execute.
use crate::error::{MrtError, Result, Status};
use crate::sys;

/// Element types whose bytes libmrt may read and write: plain numbers for
/// which every bit pattern is a valid value.
///
/// # Safety
/// Implement only for types with no padding and no invalid bit patterns,
/// whose `DATA_TYPE` is the matching mrt_data_type.
pub unsafe trait Element: Copy + 'static {
    const DATA_TYPE: i32;
    const NAME: &'static str;
}

unsafe impl Element for f32 {
    const DATA_TYPE: i32 = sys::MRT_F32;
    const NAME: &'static str = "f32";
}
unsafe impl Element for f64 {
    const DATA_TYPE: i32 = 11;
    const NAME: &'static str = "f64";
}
unsafe impl Element for i32 {
    const DATA_TYPE: i32 = 5;
    const NAME: &'static str = "s32";
}
unsafe impl Element for u8 {
    const DATA_TYPE: i32 = 1;
    const NAME: &'static str = "u8";
}

/// A named input of one request, borrowed from the caller.
pub struct Input<'a> {
    pub(crate) name: &'a str,
    pub(crate) bytes: &'a [u8],
    pub(crate) data_type: i32,
    pub(crate) type_name: &'static str,
}

impl<'a> Input<'a> {
    pub fn new<T: Element>(name: &'a str, data: &'a [T]) -> Input<'a> {
        let bytes = unsafe { std::slice::from_raw_parts(data.as_ptr() as *const u8, std::mem::size_of_val(data)) };
        Input { name, bytes, data_type: T::DATA_TYPE, type_name: T::NAME }
    }
}

/// A named output of one request: the caller's slice the library writes.
pub struct Output<'a> {
    pub(crate) name: &'a str,
    pub(crate) bytes: &'a mut [u8],
    pub(crate) data_type: i32,
    pub(crate) type_name: &'static str,
}

impl<'a> Output<'a> {
    pub fn new<T: Element>(name: &'a str, data: &'a mut [T]) -> Output<'a> {
        let size = std::mem::size_of_val(data);
        // Element guarantees any bytes written are valid values of T.
        let bytes = unsafe { std::slice::from_raw_parts_mut(data.as_mut_ptr() as *mut u8, size) };
        Output { name, bytes, data_type: T::DATA_TYPE, type_name: T::NAME }
    }
}

/// `bytes` as a slice of T, if aligned and a whole number of elements.
pub(crate) fn cast_slice<'a, T: Element>(name: &str, bytes: &'a [u8]) -> Result<&'a [T]> {
    let size = std::mem::size_of::<T>();
    if bytes.len() % size != 0 || (bytes.as_ptr() as usize) % std::mem::align_of::<T>() != 0 {
        return Err(MrtError::new(
            Status::INVALID_ARGUMENT,
            format!("tensor '{name}' ({} bytes) is not an aligned array of {}", bytes.len(), T::NAME),
        ));
    }
    if bytes.is_empty() {
        return Ok(&[]);
    }
    Ok(unsafe { std::slice::from_raw_parts(bytes.as_ptr() as *const T, bytes.len() / size) })
}
