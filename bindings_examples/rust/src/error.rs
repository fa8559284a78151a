//! MrtError: a failed libmrt call as a Rust error, with the status code and
//! the library's message.
use std::ffi::CStr;
use std::fmt;
use std::os::raw::c_char;

use crate::sys;

/// A libmrt status code (mrt_status). The values are the header's and never
/// change; `name()` gives the library's own text for them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Status(pub i32);

impl Status {
    pub const OK: Status = Status(0);
    pub const INVALID_ARGUMENT: Status = Status(1);
    pub const NOT_FOUND: Status = Status(2);
    pub const FAILED_PRECONDITION: Status = Status(3);
    pub const RESOURCE_EXHAUSTED: Status = Status(4);
    pub const DEADLINE_EXCEEDED: Status = Status(5);
    pub const CANCELLED: Status = Status(6);
    pub const UNAVAILABLE: Status = Status(7);
    pub const DEVICE_ERROR: Status = Status(8);
    pub const CORRUPT_MODEL: Status = Status(9);
    pub const VERSION_MISMATCH: Status = Status(10);
    pub const UNIMPLEMENTED: Status = Status(11);
    pub const INTERNAL: Status = Status(12);

    pub fn is_ok(self) -> bool {
        self == Status::OK
    }

    /// The library's name and meaning of the code, e.g. "MRT_NOT_FOUND: not found".
    pub fn name(self) -> String {
        // Static storage, never NULL (the header promises both).
        unsafe { CStr::from_ptr(sys::mrt_status_string(self.0)) }.to_string_lossy().into_owned()
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// A failure: the status code and the message saying what was wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MrtError {
    code: Status,
    message: String,
}

impl MrtError {
    pub fn new(code: Status, message: impl Into<String>) -> MrtError {
        MrtError { code, message: message.into() }
    }

    pub fn code(&self) -> Status {
        self.code
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    /// The error of the mrt_* call that just returned `status` on this thread.
    /// Must run right after that call, before any other mrt_* call: the
    /// library keeps one message per thread. (Rust code does not move between
    /// threads behind its back, so "right after, on the same thread" holds.)
    pub(crate) fn from_last_call(status: sys::mrt_status) -> MrtError {
        MrtError::new(Status(status), last_error_message())
    }
}

impl fmt::Display for MrtError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.name(), self.message)
    }
}

impl std::error::Error for MrtError {}

pub type Result<T> = std::result::Result<T, MrtError>;

/// Ok(()) for MRT_OK, otherwise the thread's last error as an MrtError.
pub(crate) fn check(status: sys::mrt_status) -> Result<()> {
    if status == sys::MRT_OK {
        Ok(())
    } else {
        Err(MrtError::from_last_call(status))
    }
}

/// This thread's last error message, copied (mrt_last_error_message_copy
/// tells the full length, so a long message is read whole on a second try).
fn last_error_message() -> String {
    let mut buffer = vec![0u8; 256];
    loop {
        let mut length = 0usize;
        let status =
            unsafe { sys::mrt_last_error_message_copy(buffer.as_mut_ptr() as *mut c_char, buffer.len(), &mut length) };
        if status != sys::MRT_OK {
            return String::from("(the library's error message could not be read)");
        }
        if length < buffer.len() {
            buffer.truncate(length);
            return String::from_utf8_lossy(&buffer).into_owned();
        }
        buffer.resize(length + 1, 0);
    }
}

/// Copies a borrowed C string; NULL reads as "".
pub(crate) unsafe fn string_from_c(text: *const c_char) -> String {
    if text.is_null() {
        String::new()
    } else {
        CStr::from_ptr(text).to_string_lossy().into_owned()
    }
}
