//! Executable (a compiled graph) and Engine (an executable loaded on a
//! device, Poplar's Engine).
use std::os::raw::{c_char, c_void};
use std::path::Path;
use std::ptr::{self, NonNull};

use crate::callback::{closure_user_data, free_boxed, with_closure};
use crate::device::Device;
use crate::error::{check, string_from_c, Result};
use crate::ffi::{name_to_c, path_to_c, slice, CStrings, SizedStruct};
use crate::graph::Target;
use crate::runner::SimulatedError;
use crate::sys;
use crate::tensor::{as_bytes, as_bytes_mut, DataType, Element};

/// A compiled graph and its programs. Immutable: Send and Sync.
pub struct Executable {
    raw: NonNull<sys::mrt_executable>,
}

// mrt_c.h: "Immutable: any thread, any number at once."
unsafe impl Send for Executable {}
unsafe impl Sync for Executable {}

/// What an executable holds and costs (mrt_executable_info).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecutableInfo {
    pub hash: u64,
    pub replication_factor: u32,
    pub num_ipus: u32,
    pub num_programs: u32,
    pub num_tiles: u32,
    pub num_streams: usize,
    pub num_remote_buffers: usize,
    pub num_host_reads: usize,
    pub num_host_writes: usize,
    pub num_steps: usize,
    pub total_memory_bytes: u64,
    pub max_tile_memory_bytes: u64,
    pub max_memory_tile: u32,
    pub bytes_per_tile: u64,
}

/// One program step: its kind, name and modelled cycles.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepInfo {
    pub kind: String,
    pub name: String,
    pub modelled_cycles: u64,
}

/// Kinds of an executable's handles (mrt_handle_kind).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HandleKind {
    HostToDevice = 0,
    DeviceToHost = 1,
    RemoteBuffer = 2,
    HostWrite = 3,
    HostRead = 4,
}

/// A stream, remote buffer or host read/write handle (mrt_handle_info).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HandleInfo {
    pub handle: String,
    pub kind: HandleKind,
    pub data_type: Option<DataType>,
    pub num_elements: u64,
    pub repeats: u64,
}

impl Executable {
    pub(crate) unsafe fn from_raw(raw: *mut sys::mrt_executable) -> Executable {
        Executable { raw: NonNull::new(raw).expect("MRT_OK and a NULL executable") }
    }

    pub fn as_ptr(&self) -> *const sys::mrt_executable {
        self.raw.as_ptr()
    }

    /// Reads serialized bytes (copied), verifying them.
    pub fn deserialize(bytes: &[u8]) -> Result<Executable> {
        let mut out = ptr::null_mut();
        check(unsafe {
            sys::mrt_executable_deserialize(bytes.as_ptr() as *const c_void, bytes.len() as u64, &mut out)
        })?;
        Ok(unsafe { Executable::from_raw(out) })
    }

    /// The serialized bytes, borrowed.
    pub fn serialize(&self) -> Result<&[u8]> {
        let (mut data, mut size): (*const c_void, u64) = (ptr::null(), 0);
        check(unsafe { sys::mrt_executable_serialize(self.as_ptr(), &mut data, &mut size) })?;
        Ok(unsafe { slice(data as *const u8, size as usize) })
    }

    pub fn info(&self) -> Result<ExecutableInfo> {
        let mut raw = sys::mrt_executable_info::sized();
        check(unsafe { sys::mrt_executable_get_info(self.as_ptr(), &mut raw) })?;
        Ok(ExecutableInfo {
            hash: raw.hash,
            replication_factor: raw.replication_factor,
            num_ipus: raw.num_ipus,
            num_programs: raw.num_programs,
            num_tiles: raw.num_tiles,
            num_streams: raw.num_streams,
            num_remote_buffers: raw.num_remote_buffers,
            num_host_reads: raw.num_host_reads,
            num_host_writes: raw.num_host_writes,
            num_steps: raw.num_steps,
            total_memory_bytes: raw.total_memory_bytes,
            max_tile_memory_bytes: raw.max_tile_memory_bytes,
            max_memory_tile: raw.max_memory_tile,
            bytes_per_tile: raw.bytes_per_tile,
        })
    }

    pub fn target(&self) -> Result<Target> {
        let mut raw = sys::mrt_target::sized();
        check(unsafe { sys::mrt_executable_get_target(self.as_ptr(), &mut raw) })?;
        Ok(Target::from_raw(raw))
    }

    /// Bytes used on each tile of one replica.
    pub fn memory_per_tile(&self) -> Result<Vec<u64>> {
        let (mut bytes, mut count) = (ptr::null(), 0);
        check(unsafe { sys::mrt_executable_memory_per_tile(self.as_ptr(), &mut bytes, &mut count) })?;
        Ok(unsafe { slice(bytes, count) }.to_vec())
    }

    pub fn step(&self, index: usize) -> Result<StepInfo> {
        let mut raw = sys::mrt_step_info::sized();
        check(unsafe { sys::mrt_executable_step(self.as_ptr(), index, &mut raw) })?;
        Ok(StepInfo {
            kind: unsafe { string_from_c(raw.kind) },
            name: unsafe { string_from_c(raw.name) },
            modelled_cycles: raw.modelled_cycles,
        })
    }

    pub fn program_name(&self, program: u32) -> Result<String> {
        let mut name = ptr::null();
        check(unsafe { sys::mrt_executable_program_name(self.as_ptr(), program, &mut name) })?;
        Ok(unsafe { string_from_c(name) })
    }

    /// Handle `index` of `kind` (streams of both directions count together).
    pub fn handle(&self, kind: HandleKind, index: usize) -> Result<HandleInfo> {
        let mut raw = sys::mrt_handle_info::sized();
        check(unsafe { sys::mrt_executable_handle(self.as_ptr(), kind as i32, index, &mut raw) })?;
        Ok(HandleInfo {
            handle: unsafe { string_from_c(raw.handle) },
            kind: match raw.kind {
                0 => HandleKind::HostToDevice,
                1 => HandleKind::DeviceToHost,
                2 => HandleKind::RemoteBuffer,
                3 => HandleKind::HostWrite,
                _ => HandleKind::HostRead,
            },
            data_type: DataType::from_raw(raw.data_type),
            num_elements: raw.num_elements,
            repeats: raw.repeats,
        })
    }
}

impl Drop for Executable {
    fn drop(&mut self) {
        unsafe { sys::mrt_executable_destroy(self.raw.as_ptr()) }
    }
}

/// Which replicas a call concerns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Replicas {
    All,
    One(u32),
}

impl Replicas {
    fn raw(self) -> u32 {
        match self {
            Replicas::All => sys::MRT_ALL_REPLICAS,
            Replicas::One(replica) => replica,
        }
    }
}

/// Profile formats (mrt_profile_format).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProfileFormat {
    Summary = 0,
    Intervals = 1,
    Trace = 2,
}

/// A stream callback: (bytes to fill or read, replica). Called on the
/// thread running the replica.
pub type StreamCallback = Box<dyn FnMut(&mut [u8], u32) + Send + 'static>;

/// PrintTensor output, one line per call, on the running thread.
pub type PrintCallback = Box<dyn FnMut(&str) + Send + 'static>;

/// An executable loaded on a device. The library refuses a call while
/// another runs on the engine (Status::FailedPrecondition), and stop() may
/// come from any thread: Send and Sync, methods take &self.
pub struct Engine {
    raw: NonNull<sys::mrt_engine>,
    /// Circular stream buffers the library borrows while the engine lives:
    /// (handle, replicas, bytes), freed only after the engine.
    stream_buffers: Vec<(String, Replicas, Vec<u8>)>,
}

// mrt_c.h: "calls other than mrt_engine_stop() while another call is
// running on it fail with MRT_FAILED_PRECONDITION. mrt_engine_stop() may be
// called from any thread."
unsafe impl Send for Engine {}
unsafe impl Sync for Engine {}

impl Engine {
    /// An engine for `executable` with engine options.
    pub fn new(executable: &Executable, options: &[(&str, &str)]) -> Result<Engine> {
        let options = CStrings::options(options)?;
        let mut out = ptr::null_mut();
        check(unsafe { sys::mrt_engine_create(executable.as_ptr(), options.as_ptr(), &mut out) })?;
        Ok(Engine { raw: NonNull::new(out).expect("MRT_OK and a NULL engine"), stream_buffers: Vec::new() })
    }

    fn as_ptr(&self) -> *mut sys::mrt_engine {
        self.raw.as_ptr()
    }

    /// Loads the executable on `device` (kept while loaded).
    pub fn load(&self, device: &Device) -> Result<()> {
        check(unsafe { sys::mrt_engine_load(self.as_ptr(), device.as_ptr()) })
    }

    /// Runs program `program` on every replica, or on one.
    pub fn run(&self, program: u32, replicas: Replicas) -> Result<()> {
        check(match replicas {
            Replicas::All => unsafe { sys::mrt_engine_run(self.as_ptr(), program) },
            Replicas::One(replica) => unsafe { sys::mrt_engine_run_replica(self.as_ptr(), program, replica) },
        })
    }

    /// Asks a running program to stop; returns at once. Any thread.
    pub fn stop(&self) -> Result<()> {
        check(unsafe { sys::mrt_engine_stop(self.as_ptr()) })
    }

    /// Connects stream `handle` to `callback`, replacing an earlier connection.
    pub fn connect_stream(&self, handle: &str, replicas: Replicas, callback: StreamCallback) -> Result<()> {
        let handle = name_to_c(handle)?;
        // The library frees user_data itself if this fails.
        check(unsafe {
            sys::mrt_engine_connect_stream(
                self.as_ptr(),
                handle.as_ptr(),
                replicas.raw(),
                Some(stream_trampoline),
                closure_user_data(callback),
                Some(free_boxed::<std::sync::Mutex<StreamCallback>>),
            )
        })
    }

    /// Connects stream `handle` to a circular host buffer (a whole number of
    /// transfers), read or written in turn by successive transfers. The
    /// engine keeps the buffer; &mut, so no run is in progress.
    pub fn connect_stream_to_buffer(&mut self, handle: &str, replicas: Replicas, mut buffer: Vec<u8>) -> Result<()> {
        let c_handle = name_to_c(handle)?;
        check(unsafe {
            sys::mrt_engine_connect_stream_to_buffer(
                self.as_ptr(),
                c_handle.as_ptr(),
                replicas.raw(),
                buffer.as_mut_ptr() as *mut c_void,
                buffer.len() as u64,
            )
        })?;
        // Moving the Vec keeps its heap buffer where the library points.
        self.stream_buffers.push((handle.to_string(), replicas, buffer));
        Ok(())
    }

    /// The bytes of the buffer last connected to `handle` for `replicas`;
    /// &mut, so no run is writing it.
    pub fn stream_buffer(&mut self, handle: &str, replicas: Replicas) -> Option<&[u8]> {
        self.stream_buffers.iter().rev().find(|(h, r, _)| h == handle && *r == replicas).map(|(_, _, b)| &b[..])
    }

    /// Writes a host-write tensor (its whole size) on one replica or all.
    pub fn write_tensor<T: Element>(&self, handle: &str, data: &[T], replicas: Replicas) -> Result<()> {
        let handle = name_to_c(handle)?;
        let bytes = as_bytes(data);
        check(unsafe {
            sys::mrt_engine_write_tensor(
                self.as_ptr(),
                handle.as_ptr(),
                bytes.as_ptr() as *const c_void,
                bytes.len() as u64,
                replicas.raw(),
            )
        })
    }

    /// Reads a host-read tensor (its whole size) of one replica.
    pub fn read_tensor<T: Element>(&self, handle: &str, data: &mut [T], replica: u32) -> Result<()> {
        let handle = name_to_c(handle)?;
        let bytes = as_bytes_mut(data);
        check(unsafe {
            sys::mrt_engine_read_tensor(
                self.as_ptr(),
                handle.as_ptr(),
                bytes.as_mut_ptr() as *mut c_void,
                bytes.len() as u64,
                replica,
            )
        })
    }

    /// Writes one slot of a remote buffer.
    pub fn copy_to_remote_buffer<T: Element>(&self, handle: &str, data: &[T], slot: u64, replica: u32) -> Result<()> {
        let handle = name_to_c(handle)?;
        let bytes = as_bytes(data);
        check(unsafe {
            sys::mrt_engine_copy_to_remote_buffer(
                self.as_ptr(),
                handle.as_ptr(),
                bytes.as_ptr() as *const c_void,
                bytes.len() as u64,
                slot,
                replica,
            )
        })
    }

    /// Reads one slot of a remote buffer.
    pub fn copy_from_remote_buffer<T: Element>(
        &self,
        handle: &str,
        data: &mut [T],
        slot: u64,
        replica: u32,
    ) -> Result<()> {
        let handle = name_to_c(handle)?;
        let bytes = as_bytes_mut(data);
        check(unsafe {
            sys::mrt_engine_copy_from_remote_buffer(
                self.as_ptr(),
                handle.as_ptr(),
                bytes.as_mut_ptr() as *mut c_void,
                bytes.len() as u64,
                slot,
                replica,
            )
        })
    }

    /// Sends PrintTensor output to `callback` (None: stdout).
    pub fn set_print_callback(&self, callback: Option<PrintCallback>) -> Result<()> {
        check(match callback {
            None => unsafe { sys::mrt_engine_set_print_callback(self.as_ptr(), None, ptr::null_mut(), None) },
            Some(callback) => unsafe {
                sys::mrt_engine_set_print_callback(
                    self.as_ptr(),
                    Some(print_trampoline),
                    closure_user_data(callback),
                    Some(free_boxed::<std::sync::Mutex<PrintCallback>>),
                )
            },
        })
    }

    /// Modelled device cycles of `replica` since the last load.
    pub fn device_cycles(&self, replica: u32) -> Result<u64> {
        let mut cycles = 0;
        check(unsafe { sys::mrt_engine_device_cycles(self.as_ptr(), replica, &mut cycles) })?;
        Ok(cycles)
    }

    pub fn insert_simulated_error(&self, error: SimulatedError, step: u32, tile: u32) -> Result<()> {
        check(unsafe { sys::mrt_engine_insert_simulated_error(self.as_ptr(), error as i32, step, tile) })
    }

    pub fn erase_simulated_error(&self, step: u32, tile: u32) -> Result<()> {
        check(unsafe { sys::mrt_engine_erase_simulated_error(self.as_ptr(), step, tile) })
    }

    pub fn clear_simulated_errors(&self) -> Result<()> {
        check(unsafe { sys::mrt_engine_clear_simulated_errors(self.as_ptr()) })
    }

    pub fn set_profiling(&self, enabled: bool) -> Result<()> {
        check(unsafe { sys::mrt_engine_set_profiling(self.as_ptr(), enabled) })
    }

    pub fn write_profile(&self, format: ProfileFormat, path: impl AsRef<Path>) -> Result<()> {
        let path = path_to_c(path.as_ref())?;
        check(unsafe { sys::mrt_engine_write_profile(self.as_ptr(), format as i32, path.as_ptr()) })
    }

    /// The profile as text.
    pub fn profile_text(&self, format: ProfileFormat) -> Result<String> {
        let mut length = 0;
        check(unsafe { sys::mrt_engine_profile_text(self.as_ptr(), format as i32, ptr::null_mut(), 0, &mut length) })?;
        let mut buffer = vec![0u8; length + 1];
        check(unsafe {
            sys::mrt_engine_profile_text(
                self.as_ptr(),
                format as i32,
                buffer.as_mut_ptr() as *mut c_char,
                buffer.len(),
                &mut length,
            )
        })?;
        buffer.truncate(length.min(buffer.len() - 1));
        Ok(String::from_utf8_lossy(&buffer).into_owned())
    }
}

unsafe extern "C" fn stream_trampoline(data: *mut c_void, size: u64, replica: u32, user_data: *mut c_void) {
    let bytes: &mut [u8] =
        if size == 0 { &mut [] } else { std::slice::from_raw_parts_mut(data as *mut u8, size as usize) };
    with_closure::<StreamCallback, ()>(user_data, "a stream callback", (), |callback| callback(bytes, replica));
}

unsafe extern "C" fn print_trampoline(line: *const c_char, user_data: *mut c_void) {
    let line = string_from_c(line);
    with_closure::<PrintCallback, ()>(user_data, "a print callback", (), |callback| callback(&line));
}

impl Drop for Engine {
    fn drop(&mut self) {
        unsafe { sys::mrt_engine_destroy(self.raw.as_ptr()) }
    }
}

crate::ffi::debug_handle!(Executable, Engine);
