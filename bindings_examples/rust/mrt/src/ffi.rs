//! Helpers for crossing into C: strings, option lists, sized structs,
//! borrowed arrays and durations.
use std::ffi::CString;
use std::os::raw::c_char;
use std::path::Path;
use std::time::Duration;

use crate::error::{invalid, Result};

/// Debug for a handle type: its name and the C pointer it owns
/// (`self.raw`, a NonNull).
macro_rules! debug_handle {
    ($($t:ty),* $(,)?) => {
        $(impl std::fmt::Debug for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}({:p})", stringify!($t), self.raw)
            }
        })*
    };
}
pub(crate) use debug_handle;

pub(crate) fn name_to_c(name: &str) -> Result<CString> {
    CString::new(name).map_err(|_| invalid(format!("name {name:?} contains a NUL byte")))
}

pub(crate) fn path_to_c(path: &Path) -> Result<CString> {
    use std::os::unix::ffi::OsStrExt;
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| invalid(format!("path {} contains a NUL byte", path.display())))
}

/// Several C strings and the array of their pointers (e.g. PopEF paths).
pub(crate) struct CStrings {
    _strings: Vec<CString>,
    pointers: Vec<*const c_char>,
}

impl CStrings {
    pub(crate) fn paths<P: AsRef<Path>>(paths: &[P]) -> Result<CStrings> {
        let strings = paths.iter().map(|p| path_to_c(p.as_ref())).collect::<Result<Vec<_>>>()?;
        Ok(CStrings::from(strings, false))
    }

    /// NULL-terminated key/value pairs, { "k", "v", NULL }, as device and
    /// engine options take them.
    pub(crate) fn options(options: &[(&str, &str)]) -> Result<CStrings> {
        let mut strings = Vec::with_capacity(options.len() * 2);
        for (key, value) in options {
            strings.push(name_to_c(key)?);
            strings.push(name_to_c(value)?);
        }
        Ok(CStrings::from(strings, true))
    }

    fn from(strings: Vec<CString>, null_terminated: bool) -> CStrings {
        let mut pointers: Vec<*const c_char> = strings.iter().map(|s| s.as_ptr()).collect();
        if null_terminated {
            pointers.push(std::ptr::null());
        }
        CStrings { _strings: strings, pointers }
    }

    pub(crate) fn as_ptr(&self) -> *const *const c_char {
        self.pointers.as_ptr()
    }

    pub(crate) fn len(&self) -> usize {
        self.pointers.len()
    }
}

/// A C struct that starts with struct_size, zeroed with struct_size set to
/// this header's size: what the library fills "as far as it knows".
pub(crate) trait SizedStruct {
    fn sized() -> Self;
}

macro_rules! sized_structs {
    ($($t:ty),* $(,)?) => {
        $(impl SizedStruct for $t {
            fn sized() -> Self {
                // Plain C data: zero bytes are valid (NULL pointers, None callbacks).
                let mut value: $t = unsafe { std::mem::zeroed() };
                value.struct_size = std::mem::size_of::<$t>();
                value
            }
        })*
    };
}

sized_structs!(
    crate::sys::mrt_model_info,
    crate::sys::mrt_anchor_info,
    crate::sys::mrt_device_info,
    crate::sys::mrt_queue_info,
    crate::sys::mrt_request_times,
    crate::sys::mrt_tensor_info,
    crate::sys::mrt_codelet_info,
    crate::sys::mrt_executable_info,
    crate::sys::mrt_step_info,
    crate::sys::mrt_handle_info,
    crate::sys::mrt_target,
    crate::sys::mrt_model_runner_config,
    crate::sys::mrt_blob_info,
);

/// A config struct filled with the library's defaults by its init_sized.
pub(crate) fn defaults<T>(init_sized: unsafe extern "C" fn(*mut T, usize) -> i32) -> T {
    let mut value: T = unsafe { std::mem::zeroed() };
    let code = unsafe { init_sized(&mut value, std::mem::size_of::<T>()) };
    // Only a NULL or a size below V1 fail, and this header's size is above V1.
    assert_eq!(code, 0, "init_sized refused this header's struct size");
    value
}

/// A borrowed C array as a slice (NULL with length 0 is the empty slice).
pub(crate) unsafe fn slice<'a, T>(data: *const T, len: usize) -> &'a [T] {
    if len == 0 || data.is_null() {
        &[]
    } else {
        std::slice::from_raw_parts(data, len)
    }
}

/// The header's duration convention for waits: negative (MRT_FOREVER, a
/// macro bindgen cannot translate) = forever, 0 = do not wait, > 0 = a
/// bound in ns. None means forever here; never 0.
pub(crate) const TIMEOUT_FOREVER: i64 = -1;

pub(crate) fn timeout_ns(timeout: Option<Duration>) -> i64 {
    match timeout {
        None => TIMEOUT_FOREVER,
        Some(bound) => duration_ns(bound),
    }
}

/// A duration in ns, saturating at i64::MAX.
pub(crate) fn duration_ns(duration: Duration) -> i64 {
    i64::try_from(duration.as_nanos()).unwrap_or(i64::MAX)
}

/// A C string option: None is NULL.
pub(crate) fn optional_c(text: Option<&str>) -> Result<Option<CString>> {
    text.map(name_to_c).transpose()
}

pub(crate) fn ptr_or_null(text: &Option<CString>) -> *const c_char {
    text.as_ref().map(|t| t.as_ptr()).unwrap_or(std::ptr::null())
}
