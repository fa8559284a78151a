//! mrt: the safe Rust API of libmrt, over the raw bindings of `mrt-sys`.
//!
//! Serving a model (the README's example):
//!
//! ```no_run
//! use mrt::{Input, Model, ModelRunner, Output};
//!
//! fn main() -> mrt::Result<()> {
//!     let model = Model::load("mlp.popef")?;
//!     let runner = ModelRunner::new(&model)?;
//!     let image = vec![0.5f32; 784];
//!     let mut probs = [0f32; 10];
//!     runner.execute(&[Input::new("image", &image)], &mut [Output::new("probs", &mut probs)])?;
//!     println!("{probs:?}");
//!     Ok(())
//! }
//! ```
//!
//! - Handles are owned types freed by Drop: [`Model`], [`DeviceManager`],
//!   [`Device`], [`Session`], [`AnchorPredicate`], [`QueueManager`],
//!   [`ModelRunner`], [`Future`], [`TensorMemory`], [`Graph`],
//!   [`Executable`], [`Engine`], [`ModelBuilder`]. Children keep what they
//!   need of their parents alive, as the C API promises.
//! - Failures are `Result<T, Error>`; an [`Error`] carries the [`Status`],
//!   the library's message and, for device errors, the [`RecoveryAction`].
//! - Closures given to the library travel as boxed user_data, are freed
//!   through user_data_free, and never let a panic unwind into C
//!   ([`caught_callback_panics`] counts the panics caught).
//! - Send/Sync follow the header's thread rules for each handle.
//! - Tensors are slices of any [`Element`] type (all of mrt_data_type, with
//!   [`F16`] and [`Bool`] for the types Rust lacks), checked against the
//!   model's element type and shape before C is called.
//! - Waits take `Option<Duration>`: None waits forever.

mod builder;
mod callback;
mod device;
mod error;
mod executable;
mod ffi;
mod flush;
mod future;
mod graph;
mod log;
mod memory;
mod model;
mod onnx;
mod popef;
mod predicate;
mod queue;
mod runner;
mod session;
mod tensor;

/// The raw C API (the `mrt-sys` crate).
pub use mrt_sys as sys;

pub use builder::{AnchorConfig, ModelBuilder};
pub use callback::caught_callback_panics;
pub use device::{Device, DeviceInfo, DeviceManager, DeviceRequest, DeviceWait};
pub use error::{Error, RecoveryAction, Result, Status};
pub use executable::{
    Engine, Executable, ExecutableInfo, HandleInfo, HandleKind, PrintCallback, ProfileFormat, Replicas, StepInfo,
    StreamCallback,
};
pub use flush::{FlushSelectCallback, FlushSelection};
pub use future::Future;
pub use graph::{
    codelets, Codelet, ComputeSet, FieldDirection, Function, Graph, MatmulOperand, Program, ProgressCallback,
    RemoteBuffer, Stream, SyncType, Target, Tensor, TensorInfo, TileInterval, Tiles, Vertex,
};
pub use log::{clear_log_callback, log_level, log_message, set_log_callback, set_log_level, LogLevel};
pub use memory::TensorMemory;
pub use model::{AnchorInfo, DataSource, Model, ModelInfo, OptionSet, ProgramPhase, TensorType};
pub use onnx::{compile_onnx_bytes, compile_onnx_file, OnnxOptions, OnnxPrecision};
pub use popef::{blob_type_name, list_popef, BlobInfo, BlobType, PopefFile, PopefListing};
pub use predicate::{AnchorPredicate, CallbackPolicy, DataUsagePolicy, Policy, Prebuilt};
pub use queue::{
    InputEntry, InputQueue, OutputEntry, OutputQueue, Queue, QueueEntry, QueueInfo, QueueKind, QueueManager,
    QueueManagerConfig, QueueTimeoutCallback,
};
pub use runner::{FlushCallback, ModelRunner, RequestTimes, RunnerConfig, SaveOutput, SimulatedError, TensorDesc};
pub use session::{
    AnchorCallback, AnchorSet, DeviceCycles, Launch, Session, SessionConfig, SessionReplica, SessionStopper,
};
pub use tensor::{Bool, DataType, Element, Input, Output, OutputBuffer, F16};

/// The version of the loaded library, "MAJOR.MINOR.PATCH".
pub fn version() -> String {
    unsafe { error::string_from_c(sys::mrt_version_string()) }
}

/// Checks that the loaded library serves callers built for `major.minor`.
pub fn check_version(major: i32, minor: i32) -> Result<()> {
    error::check(unsafe { sys::mrt_check_version(major, minor) })
}

/// Checks the loaded library against the header mrt-sys was generated from.
pub fn check_header_version() -> Result<()> {
    check_version(sys::MRT_VERSION_MAJOR as i32, sys::MRT_VERSION_MINOR as i32)
}

/// The process-wide host memory limit (bytes) and the bytes reserved now.
pub fn host_memory() -> (u64, u64) {
    unsafe { (sys::mrt_host_memory_limit(), sys::mrt_host_memory_reserved()) }
}

/// Sets the host memory limit; None restores the default.
pub fn set_host_memory_limit(bytes: Option<u64>) {
    unsafe { sys::mrt_set_host_memory_limit(bytes.unwrap_or(0)) }
}
