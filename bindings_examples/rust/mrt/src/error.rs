//! Error: a failed libmrt call as a Rust error, with its Status and the
//! library's message.
use std::ffi::CStr;
use std::fmt;
use std::os::raw::c_char;

use crate::sys;

/// mrt_status without MRT_OK: why a call failed. The numbers are the
/// header's, which never change; a code this crate does not know yet (from a
/// newer library) is `Unknown`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    InvalidArgument,
    NotFound,
    FailedPrecondition,
    ResourceExhausted,
    DeadlineExceeded,
    Cancelled,
    Unavailable,
    DeviceError,
    CorruptModel,
    VersionMismatch,
    Unimplemented,
    Internal,
    Unknown(i32),
}

/// Every known status, in code order (1..=12).
const KNOWN: [Status; 12] = [
    Status::InvalidArgument,
    Status::NotFound,
    Status::FailedPrecondition,
    Status::ResourceExhausted,
    Status::DeadlineExceeded,
    Status::Cancelled,
    Status::Unavailable,
    Status::DeviceError,
    Status::CorruptModel,
    Status::VersionMismatch,
    Status::Unimplemented,
    Status::Internal,
];

impl Status {
    /// The status of a failed call's code; None for MRT_OK.
    pub fn from_code(code: i32) -> Option<Status> {
        match code {
            0 => None,
            1..=12 => Some(KNOWN[(code - 1) as usize]),
            other => Some(Status::Unknown(other)),
        }
    }

    /// The header's number of the status.
    pub fn code(self) -> i32 {
        match self {
            Status::Unknown(code) => code,
            known => KNOWN.iter().position(|k| *k == known).map(|i| i as i32 + 1).unwrap_or(-1),
        }
    }

    /// The library's name and meaning of the code, e.g. "MRT_NOT_FOUND: not found".
    pub fn name(self) -> String {
        // Static storage, never NULL (the header promises both).
        unsafe { CStr::from_ptr(sys::mrt_status_string(self.code())) }.to_string_lossy().into_owned()
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// What a device needs after Status::DeviceError (mrt_recovery_action).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RecoveryAction {
    None,
    IpuReset,
    PartitionReset,
    FullReset,
}

impl RecoveryAction {
    pub(crate) fn from_raw(raw: i32) -> RecoveryAction {
        match raw {
            1 => RecoveryAction::IpuReset,
            2 => RecoveryAction::PartitionReset,
            3 => RecoveryAction::FullReset,
            _ => RecoveryAction::None,
        }
    }
}

/// A failure: its status, the message saying what was wrong and, for a
/// device error, what the device needs to run again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    status: Status,
    message: String,
    recovery: RecoveryAction,
}

impl Error {
    pub fn new(status: Status, message: impl Into<String>) -> Error {
        Error { status, message: message.into(), recovery: RecoveryAction::None }
    }

    pub(crate) fn with_recovery(mut self, recovery: RecoveryAction) -> Error {
        self.recovery = recovery;
        self
    }

    pub fn status(&self) -> Status {
        self.status
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    pub fn recovery_action(&self) -> RecoveryAction {
        self.recovery
    }

    /// The error of the mrt_* call that just returned `code` on this thread.
    /// Must run right after that call, before any other mrt_* call: the
    /// library keeps one message per thread.
    pub(crate) fn from_last_call(code: i32) -> Error {
        let status = Status::from_code(code).unwrap_or(Status::Internal);
        let recovery = RecoveryAction::from_raw(unsafe { sys::mrt_last_error_recovery_action() });
        Error::new(status, last_error_message()).with_recovery(recovery)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.status.name(), self.message)
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

/// Ok(()) for MRT_OK, otherwise the thread's last error.
pub(crate) fn check(code: sys::mrt_status) -> Result<()> {
    if code == 0 {
        Ok(())
    } else {
        Err(Error::from_last_call(code))
    }
}

/// An argument refused by this crate before calling C.
pub(crate) fn invalid(message: impl Into<String>) -> Error {
    Error::new(Status::InvalidArgument, format!("{} (checked by the Rust binding)", message.into()))
}

/// This thread's last error message, copied (mrt_last_error_message_copy
/// tells the full length, so a long message is read whole on a second try).
fn last_error_message() -> String {
    let mut buffer = vec![0u8; 256];
    loop {
        let mut length = 0usize;
        let code =
            unsafe { sys::mrt_last_error_message_copy(buffer.as_mut_ptr() as *mut c_char, buffer.len(), &mut length) };
        if code != 0 {
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
