//! mrt: a safe Rust wrapper over libmrt's C API (include/mrt_c.h), written
//! directly against the C ABI with no dependencies.
//!
//! - Handles are owned types freed by Drop: [`Model`], [`ModelRunner`],
//!   [`Future`], [`TensorMemory`]. Closing one takes it by value, so use
//!   after close does not compile.
//! - Failures are `Result<T, MrtError>`; an [`MrtError`] carries the status
//!   code and the library's message.
//! - Closures given to the library (log callback, on_ready) travel as boxed
//!   user_data, are freed through user_data_free, and never let a panic
//!   unwind into C.
//! - Send/Sync follow the header's thread rules for each handle.

mod callback;
mod error;
mod future;
mod log;
mod memory;
mod model;
mod runner;
pub mod sys;
mod tensor;

pub use callback::caught_callback_panics;
pub use error::{MrtError, Result, Status};
pub use future::Future;
pub use log::{clear_log_callback, log_message, set_log_callback, set_log_level, LogLevel};
pub use memory::TensorMemory;
pub use model::Model;
pub use runner::{ModelRunner, RunnerOptions, TensorDesc};
pub use tensor::{Element, Input, Output};

/// The version of the loaded library, "MAJOR.MINOR.PATCH".
pub fn version() -> String {
    unsafe { error::string_from_c(sys::mrt_version_string()) }
}

/// Checks that the loaded library serves callers built for `major.minor`.
pub fn check_version(major: i32, minor: i32) -> Result<()> {
    error::check(unsafe { sys::mrt_check_version(major, minor) })
}

#[cfg(test)]
mod tests;
