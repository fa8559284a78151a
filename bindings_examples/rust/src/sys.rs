//! Raw declarations of the part of include/mrt_c.h this crate uses. The
//! layouts follow the header field by field; `tests::layouts_match_the_header`
//! checks the sizes the header gives on x86-64 / aarch64 Linux.
#![allow(non_camel_case_types)]

use std::os::raw::{c_char, c_int, c_void};

pub type mrt_status = i32;

pub const MRT_OK: mrt_status = 0;
pub const MRT_INVALID_ARGUMENT: mrt_status = 1;
pub const MRT_NOT_FOUND: mrt_status = 2;
pub const MRT_DEADLINE_EXCEEDED: mrt_status = 5;

pub const MRT_F32: i32 = 10;
pub const MRT_DEVICE_WAIT_WITH_TIMEOUT: i32 = 1;

/// Opaque handles: only ever used behind pointers.
#[repr(C)]
pub struct mrt_model {
    _private: [u8; 0],
}
#[repr(C)]
pub struct mrt_model_runner {
    _private: [u8; 0],
}
#[repr(C)]
pub struct mrt_future {
    _private: [u8; 0],
}
#[repr(C)]
pub struct mrt_tensor_memory {
    _private: [u8; 0],
}
#[repr(C)]
pub struct mrt_device {
    _private: [u8; 0],
}
#[repr(C)]
pub struct mrt_replica_outputs {
    _private: [u8; 0],
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct mrt_tensor_view {
    pub name: *const c_char,
    pub data: *mut c_void,
    pub size_bytes: u64,
}

#[repr(C)]
pub struct mrt_data_desc {
    pub name: *const c_char,
    pub size_in_bytes: i64,
    pub shape: *const i64,
    pub rank: usize,
    pub data_type: i32,
    pub popef_contains_tensor_data: bool,
}

#[repr(C)]
pub struct mrt_device_wait_config {
    pub struct_size: usize,
    pub strategy: i32,
    pub timeout_ns: i64,
    pub sleep_time_ns: i64,
}

pub type mrt_flush_fn = Option<unsafe extern "C" fn(tensor_id: *const c_char, user_data: *mut c_void)>;
pub type mrt_free_fn = Option<unsafe extern "C" fn(user_data: *mut c_void)>;
pub type mrt_log_fn = Option<unsafe extern "C" fn(level: c_int, message: *const c_char, user_data: *mut c_void)>;
pub type mrt_future_ready_fn = Option<unsafe extern "C" fn(status: mrt_status, user_data: *mut c_void)>;

#[repr(C)]
pub struct mrt_model_runner_config {
    pub struct_size: usize,
    pub replication_factor: u32,
    pub run_save_programs: bool,
    pub thread_safe: bool,
    pub frozen_inputs: *const mrt_tensor_view,
    pub num_frozen_inputs: usize,
    pub save_programs_outputs: *const mrt_replica_outputs,
    pub num_save_programs_outputs: usize,
    pub replica_devices: *const *mut mrt_device,
    pub num_replica_devices: usize,
    pub device_wait_config: *const mrt_device_wait_config,
    pub check_package_hash: bool,
    pub timeout_ns: i64,
    pub validate_io_params: bool,
    pub batching_dim: u32,
    pub auto_reset: bool,
    pub max_look_ahead: i64,
    pub ring_buffer_size_multiplier: u32,
    pub flush_on_waiting_outputs: bool,
    pub batch_size_timeout_ns: i64,
    pub data_parallel_timeout_ns: i64,
    pub is_batch_size_timeout_enabled: bool,
    pub request_tracepoints_buffer_size: usize,
    pub flush_callback: mrt_flush_fn,
    pub flush_user_data: *mut c_void,
    pub flush_user_data_free: mrt_free_fn,
}

extern "C" {
    pub fn mrt_status_string(code: mrt_status) -> *const c_char;
    pub fn mrt_last_error_message_copy(buffer: *mut c_char, buffer_size: usize, out_length: *mut usize) -> mrt_status;
    pub fn mrt_version_string() -> *const c_char;
    pub fn mrt_check_version(major: c_int, minor: c_int) -> mrt_status;

    pub fn mrt_set_log_level(level: i32) -> mrt_status;
    pub fn mrt_set_log_callback(fn_: mrt_log_fn, user_data: *mut c_void, user_data_free: mrt_free_fn) -> mrt_status;
    pub fn mrt_log_message(level: i32, message: *const c_char) -> mrt_status;

    pub fn mrt_model_load(paths: *const *const c_char, num_paths: usize, out: *mut *mut mrt_model) -> mrt_status;
    pub fn mrt_model_destroy(model: *mut mrt_model);
    pub fn mrt_model_tensor_data(
        model: *const mrt_model,
        name: *const c_char,
        out_data: *mut *const c_void,
        out_size: *mut u64,
    ) -> mrt_status;

    pub fn mrt_device_wait_config_init(config: *mut mrt_device_wait_config);
    pub fn mrt_model_runner_config_init(config: *mut mrt_model_runner_config);
    pub fn mrt_model_runner_create(
        model: *const mrt_model,
        config: *const mrt_model_runner_config,
        out: *mut *mut mrt_model_runner,
    ) -> mrt_status;
    pub fn mrt_model_runner_destroy(runner: *mut mrt_model_runner);
    pub fn mrt_model_runner_execute_inputs(
        runner: *const mrt_model_runner,
        out_descs: *mut *const mrt_data_desc,
        out_count: *mut usize,
    ) -> mrt_status;
    pub fn mrt_model_runner_execute_outputs(
        runner: *const mrt_model_runner,
        out_descs: *mut *const mrt_data_desc,
        out_count: *mut usize,
    ) -> mrt_status;
    pub fn mrt_model_runner_execute(
        runner: *mut mrt_model_runner,
        inputs: *const mrt_tensor_view,
        num_inputs: usize,
        outputs: *const mrt_tensor_view,
        num_outputs: usize,
        replica_id: u32,
    ) -> mrt_status;
    pub fn mrt_model_runner_execute_async_alloc(
        runner: *mut mrt_model_runner,
        inputs: *const mrt_tensor_view,
        num_inputs: usize,
        replica_id: u32,
        out_future: *mut *mut mrt_future,
        out_outputs: *mut *mut mrt_tensor_memory,
    ) -> mrt_status;

    pub fn mrt_future_is_ready(future: *const mrt_future) -> bool;
    pub fn mrt_future_wait(future: *mut mrt_future, timeout_ns: i64) -> mrt_status;
    pub fn mrt_future_error_message(future: *const mrt_future) -> *const c_char;
    pub fn mrt_future_on_ready(
        future: *mut mrt_future,
        fn_: mrt_future_ready_fn,
        user_data: *mut c_void,
        user_data_free: mrt_free_fn,
    ) -> mrt_status;
    pub fn mrt_future_destroy(future: *mut mrt_future);

    pub fn mrt_tensor_memory_count(memory: *const mrt_tensor_memory, out_count: *mut usize) -> mrt_status;
    pub fn mrt_tensor_memory_get(
        memory: *const mrt_tensor_memory,
        index: usize,
        out_view: *mut mrt_tensor_view,
    ) -> mrt_status;
    pub fn mrt_tensor_memory_find(
        memory: *const mrt_tensor_memory,
        name: *const c_char,
        out_view: *mut mrt_tensor_view,
    ) -> mrt_status;
    pub fn mrt_tensor_memory_destroy(memory: *mut mrt_tensor_memory);
}
