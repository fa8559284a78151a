//! libmrt's logger: the level, a Rust closure as the destination, and
//! messages of the application in the same stream.
use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_int, c_void};

use crate::callback::call_guarded;
use crate::error::{check, MrtError, Result, Status};
use crate::sys;

/// mrt_log_level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    Off = 0,
    Err = 1,
    Warn = 2,
    Info = 3,
    Debug = 4,
    Trace = 5,
}

impl LogLevel {
    fn from_raw(level: c_int) -> LogLevel {
        match level {
            0 => LogLevel::Off,
            1 => LogLevel::Err,
            2 => LogLevel::Warn,
            3 => LogLevel::Info,
            4 => LogLevel::Debug,
            _ => LogLevel::Trace,
        }
    }
}

pub fn set_log_level(level: LogLevel) -> Result<()> {
    check(unsafe { sys::mrt_set_log_level(level as i32) })
}

/// Emits `message` through libmrt's logger (and so through a callback set
/// with set_log_callback).
pub fn log_message(level: LogLevel, message: &str) -> Result<()> {
    let message = CString::new(message)
        .map_err(|_| MrtError::new(Status::INVALID_ARGUMENT, "log message contains a NUL byte"))?;
    check(unsafe { sys::mrt_log_message(level as i32, message.as_ptr()) })
}

/// The closure behind the log callback's user_data. The library serializes
/// the calls (they never overlap), which is what makes FnMut sound here; it
/// calls from any thread, hence Send.
type LogClosure = Box<dyn FnMut(LogLevel, &str) + Send + 'static>;

unsafe extern "C" fn log_trampoline(level: c_int, message: *const c_char, user_data: *mut c_void) {
    let closure = &mut *(user_data as *mut LogClosure);
    let text = CStr::from_ptr(message).to_string_lossy();
    call_guarded("a log callback", || closure(LogLevel::from_raw(level), &text));
}

unsafe extern "C" fn log_free(user_data: *mut c_void) {
    let closure = Box::from_raw(user_data as *mut LogClosure);
    call_guarded("dropping a log callback", move || drop(closure));
}

/// Sends libmrt's log messages to `callback` instead of stderr. The library
/// owns the closure from here: it drops it when another callback replaces it
/// (or at unload). The callback must not call set_log_callback itself.
pub fn set_log_callback<F>(callback: F) -> Result<()>
where
    F: FnMut(LogLevel, &str) + Send + 'static,
{
    let closure: Box<LogClosure> = Box::new(Box::new(callback));
    let user_data = Box::into_raw(closure) as *mut c_void;
    // On failure the library itself calls log_free(user_data), once.
    check(unsafe { sys::mrt_set_log_callback(Some(log_trampoline), user_data, Some(log_free)) })
}

/// Restores the MRT_LOG_DEST destination; the previous closure is dropped.
pub fn clear_log_callback() -> Result<()> {
    check(unsafe { sys::mrt_set_log_callback(None, std::ptr::null_mut(), None) })
}
