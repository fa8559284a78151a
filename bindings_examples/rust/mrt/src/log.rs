//! libmrt's logger: the level, a Rust closure as the destination, and
//! messages of the application in the same stream.
use std::ffi::CStr;
use std::os::raw::{c_char, c_void};

use crate::callback::{closure_user_data, free_boxed, with_closure};
use crate::error::{check, Result};
use crate::ffi::name_to_c;
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
    fn from_raw(level: u32) -> LogLevel {
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

pub fn log_level() -> LogLevel {
    LogLevel::from_raw(unsafe { sys::mrt_get_log_level() })
}

/// Emits `message` through libmrt's logger (and so through a callback set
/// with set_log_callback).
pub fn log_message(level: LogLevel, message: &str) -> Result<()> {
    let message = name_to_c(message)?;
    check(unsafe { sys::mrt_log_message(level as i32, message.as_ptr()) })
}

/// The closure behind the log callback's user_data. The library calls it
/// from any thread (hence Send), never overlapping.
type LogClosure = Box<dyn FnMut(LogLevel, &str) + Send + 'static>;

unsafe extern "C" fn log_trampoline(level: sys::mrt_log_level, message: *const c_char, user_data: *mut c_void) {
    let text = CStr::from_ptr(message).to_string_lossy();
    with_closure::<LogClosure, ()>(user_data, "a log callback", (), |closure| {
        closure(LogLevel::from_raw(level), &text)
    });
}

/// Sends libmrt's log messages to `callback` instead of stderr. The library
/// owns the closure from here: it drops it when another callback replaces it
/// (or at unload). The callback must not call set_log_callback itself.
pub fn set_log_callback<F>(callback: F) -> Result<()>
where
    F: FnMut(LogLevel, &str) + Send + 'static,
{
    let closure: LogClosure = Box::new(callback);
    // On failure the library itself frees user_data, once.
    check(unsafe {
        sys::mrt_set_log_callback(
            Some(log_trampoline),
            closure_user_data(closure),
            Some(free_boxed::<std::sync::Mutex<LogClosure>>),
        )
    })
}

/// Restores the MRT_LOG_DEST destination; the previous closure is dropped.
pub fn clear_log_callback() -> Result<()> {
    check(unsafe { sys::mrt_set_log_callback(None, std::ptr::null_mut(), None) })
}
