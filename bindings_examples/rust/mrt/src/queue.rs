//! QueueManager and its queues: pointers to the caller's buffers passed to
//! a device (a session's, or the caller playing the device with transfer).
//! The bytes are copied once, straight between the caller's buffer and the
//! device's. Buffers move into the queue as `Vec<T>` and come back through the
//! completion closure, so no borrow has to outlive a transfer.
use std::collections::HashMap;
use std::os::raw::{c_char, c_void};
use std::ptr::{self, NonNull};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use crate::callback::{call_guarded, closure_user_data, free_boxed, with_closure};
use crate::error::{check, invalid, string_from_c, Result};
use crate::ffi::{defaults, duration_ns, name_to_c, slice, SizedStruct};
use crate::model::{Model, TensorType};
use crate::sys;
use crate::tensor::{as_bytes, type_name, DataType, Element};

mod entry;
pub use entry::{InputEntry, OutputEntry, QueueEntry};

/// Called on the device thread when a transfer has waited `timeout` for the
/// caller's data (input) or buffers (output), and again every `timeout`:
/// (anchor name, direction, bytes already done).
pub type QueueTimeoutCallback = Box<dyn FnMut(&str, TensorType, i64) + Send + 'static>;

/// Queue manager options (mrt_queue_manager_config).
pub struct QueueManagerConfig {
    /// Ring entries per queue = multiplier x the model's batch, for anchors
    /// of the Main programs (default 16).
    pub ring_size_multiplier: i64,
    /// The same for anchors only of Load or Save programs (default 1).
    pub load_save_ring_size_multiplier: i64,
    /// Anchors (by name) with their own multiplier in place of their group's.
    pub ring_size_overrides: HashMap<String, i64>,
    /// How long a transfer waits before `on_timeout` is called; None (the
    /// default): wait forever, never call it.
    pub timeout: Option<Duration>,
    pub on_timeout: Option<QueueTimeoutCallback>,
}

impl Default for QueueManagerConfig {
    fn default() -> Self {
        let raw = defaults(sys::mrt_queue_manager_config_init_sized);
        QueueManagerConfig {
            ring_size_multiplier: raw.ring_size_multiplier,
            load_save_ring_size_multiplier: raw.load_save_ring_size_multiplier,
            ring_size_overrides: HashMap::new(),
            timeout: None,
            on_timeout: None,
        }
    }
}

/// What a queue transfers (mrt_queue_info), copied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueInfo {
    pub name: String,
    pub data_type: Option<DataType>,
    pub shape: Vec<i64>,
    /// One device transfer.
    pub size_in_bytes: i64,
    /// The unit of enqueued sizes (size_in_bytes / batch).
    pub sample_size_bytes: i64,
    pub num_buffers: i64,
    pub connected: bool,
}

/// One queue's lock for its producer calls: the header allows one producer
/// thread at a time, so enqueue and flush take it.
struct QueueSlot<Q> {
    raw: *mut Q,
    producer: Mutex<()>,
}

/// A queue manager. Lookups and disconnects may come from any thread and
/// each queue serializes its producers here: Send and Sync. Queues borrow
/// the manager, so it cannot be dropped (or reset) while one is in use.
pub struct QueueManager {
    raw: NonNull<sys::mrt_queue_manager>,
    inputs: Vec<QueueSlot<sys::mrt_input_queue>>,
    outputs: Vec<QueueSlot<sys::mrt_output_queue>>,
    /// transfer(): one thread at a time per handle.
    transfers: Mutex<HashMap<String, Arc<Mutex<()>>>>,
}

// mrt_c.h: "A manager's lookups may be called from any thread"; producer
// calls are serialized per queue by QueueSlot; disconnect is "any thread".
unsafe impl Send for QueueManager {}
unsafe impl Sync for QueueManager {}

fn lock(mutex: &Mutex<()>) -> MutexGuard<'_, ()> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl QueueManager {
    /// A manager over `model`'s anchors, connected to no device: move the
    /// data with transfer().
    pub fn new(model: &Model, config: QueueManagerConfig) -> Result<QueueManager> {
        QueueManager::create(config, |raw_config, out| unsafe {
            sys::mrt_queue_manager_create(model.as_ptr(), raw_config, out)
        })
    }

    pub(crate) fn create(
        config: QueueManagerConfig,
        create: impl FnOnce(*const sys::mrt_queue_manager_config, *mut *mut sys::mrt_queue_manager) -> i32,
    ) -> Result<QueueManager> {
        // Before the timeout closure is boxed: a bad name must not leak it.
        let override_names =
            config.ring_size_overrides.keys().map(|name| name_to_c(name)).collect::<Result<Vec<_>>>()?;
        let overrides: Vec<sys::mrt_ring_size_override> = override_names
            .iter()
            .zip(config.ring_size_overrides.values())
            .map(|(name, &multiplier)| sys::mrt_ring_size_override { anchor_name: name.as_ptr(), multiplier })
            .collect();
        let mut raw_config = defaults(sys::mrt_queue_manager_config_init_sized);
        raw_config.ring_size_multiplier = config.ring_size_multiplier;
        raw_config.load_save_ring_size_multiplier = config.load_save_ring_size_multiplier;
        raw_config.ring_size_overrides = overrides.as_ptr();
        raw_config.num_ring_size_overrides = overrides.len();
        // None keeps the library's default, which is "wait forever".
        if let Some(timeout) = config.timeout {
            raw_config.timeout_ns = duration_ns(timeout);
        }
        if let Some(callback) = config.on_timeout {
            raw_config.timeout_fn = Some(timeout_trampoline);
            raw_config.timeout_user_data = closure_user_data(callback);
            raw_config.timeout_user_data_free = Some(free_boxed::<Mutex<QueueTimeoutCallback>>);
        }
        let mut out = ptr::null_mut();
        // The library frees the timeout closure itself, also on failure.
        check(create(&raw_config, &mut out))?;
        let mut manager = QueueManager {
            raw: NonNull::new(out).expect("MRT_OK and a NULL queue manager"),
            inputs: Vec::new(),
            outputs: Vec::new(),
            transfers: Mutex::new(HashMap::new()),
        };
        for name in manager.input_names()? {
            let raw = manager.lookup(sys::mrt_queue_manager_input_queue, &name)?;
            manager.inputs.push(QueueSlot { raw, producer: Mutex::new(()) });
        }
        for name in manager.output_names()? {
            let raw = manager.lookup(sys::mrt_queue_manager_output_queue, &name)?;
            manager.outputs.push(QueueSlot { raw, producer: Mutex::new(()) });
        }
        Ok(manager)
    }

    fn as_ptr(&self) -> *mut sys::mrt_queue_manager {
        self.raw.as_ptr()
    }

    fn lookup<Q>(
        &self,
        find: unsafe extern "C" fn(*mut sys::mrt_queue_manager, *const c_char, *mut *mut Q) -> i32,
        name: &str,
    ) -> Result<*mut Q> {
        let name = name_to_c(name)?;
        let mut out = ptr::null_mut();
        check(unsafe { find(self.as_ptr(), name.as_ptr(), &mut out) })?;
        Ok(out)
    }

    fn names(
        &self,
        count: unsafe extern "C" fn(*const sys::mrt_queue_manager, *mut usize) -> i32,
        name: unsafe extern "C" fn(*const sys::mrt_queue_manager, usize, *mut *const c_char) -> i32,
    ) -> Result<Vec<String>> {
        let mut n = 0;
        check(unsafe { count(self.as_ptr(), &mut n) })?;
        (0..n)
            .map(|index| {
                let mut text = ptr::null();
                check(unsafe { name(self.as_ptr(), index, &mut text) })?;
                Ok(unsafe { string_from_c(text) })
            })
            .collect()
    }

    /// The input queues' anchor names, sorted.
    pub fn input_names(&self) -> Result<Vec<String>> {
        self.names(sys::mrt_queue_manager_num_inputs, sys::mrt_queue_manager_input_name)
    }

    pub fn output_names(&self) -> Result<Vec<String>> {
        self.names(sys::mrt_queue_manager_num_outputs, sys::mrt_queue_manager_output_name)
    }

    /// The input queue of an anchor, by name or stream handle.
    pub fn input_queue(&self, name: &str) -> Result<InputQueue<'_>> {
        let raw = self.lookup(sys::mrt_queue_manager_input_queue, name)?;
        let slot = self.inputs.iter().find(|slot| slot.raw == raw).expect("every input queue has a slot");
        Queue::new(slot)
    }

    pub fn output_queue(&self, name: &str) -> Result<OutputQueue<'_>> {
        let raw = self.lookup(sys::mrt_queue_manager_output_queue, name)?;
        let slot = self.outputs.iter().find(|slot| slot.raw == raw).expect("every output queue has a slot");
        Queue::new(slot)
    }

    /// Flushes every queue (a producer call on each).
    pub fn flush_all(&self) -> Result<()> {
        let _producers: Vec<MutexGuard<'_, ()>> = self
            .inputs
            .iter()
            .map(|s| lock(&s.producer))
            .chain(self.outputs.iter().map(|s| lock(&s.producer)))
            .collect();
        check(unsafe { sys::mrt_queue_manager_flush_all(self.as_ptr()) })
    }

    /// Disconnects every queue: blocked calls return, the device gets zeros
    /// and its outputs are dropped until reset. Any thread.
    pub fn disconnect_all(&self) -> Result<()> {
        check(unsafe { sys::mrt_queue_manager_disconnect_all(self.as_ptr()) })
    }

    /// Empties and reconnects every queue: &mut, so no queue is in use.
    pub fn reset_all(&mut self) -> Result<()> {
        check(unsafe { sys::mrt_queue_manager_reset_all(self.as_ptr()) })
    }

    pub fn reset_input(&mut self, name: &str) -> Result<()> {
        let raw = self.lookup(sys::mrt_queue_manager_input_queue, name)?;
        check(unsafe { sys::mrt_input_queue_reset(raw) })
    }

    pub fn reset_output(&mut self, name: &str) -> Result<()> {
        let raw = self.lookup(sys::mrt_queue_manager_output_queue, name)?;
        check(unsafe { sys::mrt_output_queue_reset(raw) })
    }

    /// Plays the device for one anchor (by handle or name): an input's next
    /// enqueued bytes are copied into `device_buffer`, or `device_buffer` is
    /// copied into an output's next buffers. Blocks until enough is
    /// enqueued; runs the completion closures. Only for a manager made with
    /// QueueManager::new (a session's device does its own transfers).
    pub fn transfer(&self, handle: &str, device_buffer: &mut [u8]) -> Result<()> {
        let c_handle = name_to_c(handle)?;
        // The library needs exactly one transfer's bytes: check the size.
        let expected = self.transfer_size(handle)?;
        if device_buffer.len() as i64 != expected {
            return Err(invalid(format!(
                "transfer of '{handle}' needs a device buffer of {expected} bytes, got {}",
                device_buffer.len()
            )));
        }
        let turn = {
            let mut transfers = self.transfers.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            Arc::clone(transfers.entry(handle.to_string()).or_default())
        };
        let _turn = lock(&turn);
        check(unsafe {
            sys::mrt_queue_manager_transfer(self.as_ptr(), c_handle.as_ptr(), device_buffer.as_mut_ptr() as *mut c_void)
        })
    }

    fn transfer_size(&self, handle: &str) -> Result<i64> {
        match self.input_queue(handle) {
            Ok(queue) => Ok(queue.info().size_in_bytes),
            Err(_) => Ok(self.output_queue(handle)?.info().size_in_bytes),
        }
    }
}

unsafe extern "C" fn timeout_trampoline(
    anchor_name: *const c_char,
    direction: i32,
    bytes_done: i64,
    user_data: *mut c_void,
) {
    let name = string_from_c(anchor_name);
    with_closure::<QueueTimeoutCallback, ()>(user_data, "a queue timeout callback", (), |callback| {
        callback(&name, TensorType::from_raw(direction), bytes_done)
    });
}

/// A buffer in a queue and the closure to call when the device is done
/// with it. Boxed as the entry's user_data, dropped by user_data_free.
struct Entry<T, F> {
    buffer: Vec<T>,
    done: Option<F>,
}

unsafe extern "C" fn entry_done<T, F>(user_data: *mut c_void)
where
    T: Element,
    F: FnOnce(Vec<T>) + Send + 'static,
{
    // The library has copied the last byte: the buffer is the caller's again.
    let entry = &mut *(user_data as *mut Entry<T, F>);
    if let Some(done) = entry.done.take() {
        let buffer = std::mem::take(&mut entry.buffer);
        call_guarded("a queue completion callback", (), move || done(buffer));
    }
}

/// Checks a buffer against the queue: element type and whole samples.
fn check_buffer<T: Element>(info: &QueueInfo, len: usize) -> Result<()> {
    if info.data_type != Some(T::DATA_TYPE) {
        return Err(invalid(format!(
            "queue '{}' carries {}, got a buffer of {:?}",
            info.name,
            info.data_type.map(|t| format!("{t:?}")).unwrap_or_else(|| type_name(-1)),
            T::DATA_TYPE
        )));
    }
    let bytes = (len * std::mem::size_of::<T>()) as i64;
    if bytes == 0 || info.sample_size_bytes <= 0 || bytes % info.sample_size_bytes != 0 {
        return Err(invalid(format!(
            "queue '{}' takes whole samples of {} bytes (shape {:?}), got {bytes} bytes",
            info.name, info.sample_size_bytes, info.shape
        )));
    }
    Ok(())
}

fn queue_info(raw: sys::mrt_queue_info) -> QueueInfo {
    unsafe {
        QueueInfo {
            name: string_from_c(raw.name),
            data_type: DataType::from_raw(raw.data_type),
            shape: slice(raw.shape, raw.rank).to_vec(),
            size_in_bytes: raw.size_in_bytes,
            sample_size_bytes: raw.sample_size_bytes,
            num_buffers: raw.num_buffers,
            connected: raw.connected,
        }
    }
}

/// The C calls both kinds of queue have, by queue type.
pub trait QueueKind {
    #[doc(hidden)]
    const NAME: &'static str;
    #[doc(hidden)]
    unsafe fn info(queue: *const Self, out: *mut sys::mrt_queue_info) -> i32;
    #[doc(hidden)]
    unsafe fn flush(queue: *mut Self) -> i32;
    #[doc(hidden)]
    unsafe fn disconnect(queue: *mut Self) -> i32;
}

impl QueueKind for sys::mrt_input_queue {
    const NAME: &'static str = "InputQueue";
    unsafe fn info(queue: *const Self, out: *mut sys::mrt_queue_info) -> i32 {
        sys::mrt_input_queue_info(queue, out)
    }
    unsafe fn flush(queue: *mut Self) -> i32 {
        sys::mrt_input_queue_flush(queue)
    }
    unsafe fn disconnect(queue: *mut Self) -> i32 {
        sys::mrt_input_queue_disconnect(queue)
    }
}

impl QueueKind for sys::mrt_output_queue {
    const NAME: &'static str = "OutputQueue";
    unsafe fn info(queue: *const Self, out: *mut sys::mrt_queue_info) -> i32 {
        sys::mrt_output_queue_info(queue, out)
    }
    unsafe fn flush(queue: *mut Self) -> i32 {
        sys::mrt_output_queue_flush(queue)
    }
    unsafe fn disconnect(queue: *mut Self) -> i32 {
        sys::mrt_output_queue_disconnect(queue)
    }
}

/// A queue, borrowed from its manager. Send and Sync: producer calls
/// (enqueue, flush) take the queue's producer lock; disconnect may come from
/// any thread.
pub struct Queue<'m, Q: QueueKind> {
    slot: &'m QueueSlot<Q>,
    info: QueueInfo,
}

/// An input queue: buffers the device reads.
pub type InputQueue<'m> = Queue<'m, sys::mrt_input_queue>;
/// An output queue: buffers the device writes.
pub type OutputQueue<'m> = Queue<'m, sys::mrt_output_queue>;

unsafe impl<Q: QueueKind> Send for Queue<'_, Q> {}
unsafe impl<Q: QueueKind> Sync for Queue<'_, Q> {}

impl<'m, Q: QueueKind> Queue<'m, Q> {
    fn new(slot: &'m QueueSlot<Q>) -> Result<Queue<'m, Q>> {
        let info = Queue::read_info(slot.raw)?;
        Ok(Queue { slot, info })
    }

    fn read_info(raw: *mut Q) -> Result<QueueInfo> {
        let mut info = sys::mrt_queue_info::sized();
        check(unsafe { Q::info(raw, &mut info) })?;
        Ok(queue_info(info))
    }

    /// What the queue transfers, as when it was looked up (connected may
    /// have changed since: see is_connected).
    pub fn info(&self) -> &QueueInfo {
        &self.info
    }

    pub fn is_connected(&self) -> Result<bool> {
        Ok(Queue::read_info(self.slot.raw)?.connected)
    }

    /// Input: completes a partial transfer with zeros, or queues one of
    /// zeros. Output: gives the dummy output of a flushed input a scratch
    /// buffer. A producer call.
    pub fn flush(&self) -> Result<()> {
        let _producer = lock(&self.slot.producer);
        check(unsafe { Q::flush(self.slot.raw) })
    }

    /// Wakes blocked calls; from now on an input's device gets zeros, an
    /// output's results are dropped, and enqueue fails with Cancelled until
    /// reset. Any thread.
    pub fn disconnect(&self) -> Result<()> {
        check(unsafe { Q::disconnect(self.slot.raw) })
    }
}

impl<'m> Queue<'m, sys::mrt_input_queue> {
    /// Queues `data` (whole samples of the anchor's type) for the device;
    /// blocks while the queue is full. The buffer is dropped once read.
    pub fn enqueue<T: Element>(&self, data: Vec<T>) -> Result<()> {
        self.enqueue_then(data, drop)
    }

    /// As enqueue; `done` gets the buffer back once the device has read it
    /// (on the device thread). If the queue is disconnected first, the
    /// buffer is dropped instead.
    pub fn enqueue_then<T, F>(&self, data: Vec<T>, done: F) -> Result<()>
    where
        T: Element,
        F: FnOnce(Vec<T>) + Send + 'static,
    {
        check_buffer::<T>(&self.info, data.len())?;
        let (pointer, size) = (as_bytes(&data).as_ptr(), std::mem::size_of_val(&data[..]) as i64);
        // Moving the Vec into the box keeps its heap buffer where it is.
        let user_data = Box::into_raw(Box::new(Entry { buffer: data, done: Some(done) })) as *mut c_void;
        let _producer = lock(&self.slot.producer);
        // The library frees user_data itself if this fails.
        check(unsafe {
            sys::mrt_input_queue_enqueue(
                self.slot.raw,
                pointer as *const c_void,
                size,
                None,
                Some(entry_done::<T, F>),
                user_data,
                Some(free_boxed::<Entry<T, F>>),
            )
        })
    }
}

impl<'m> Queue<'m, sys::mrt_output_queue> {
    /// Queues `buffer` for the device's output; `done` gets it back, written,
    /// on the device thread. If the queue is disconnected first, the buffer
    /// is dropped instead.
    pub fn enqueue<T, F>(&self, mut buffer: Vec<T>, done: F) -> Result<()>
    where
        T: Element,
        F: FnOnce(Vec<T>) + Send + 'static,
    {
        check_buffer::<T>(&self.info, buffer.len())?;
        let (pointer, size) = (buffer.as_mut_ptr() as *mut c_void, std::mem::size_of_val(&buffer[..]) as i64);
        let user_data = Box::into_raw(Box::new(Entry { buffer, done: Some(done) })) as *mut c_void;
        let _producer = lock(&self.slot.producer);
        check(unsafe {
            sys::mrt_output_queue_enqueue(
                self.slot.raw,
                pointer,
                size,
                Some(entry_done::<T, F>),
                user_data,
                Some(free_boxed::<Entry<T, F>>),
            )
        })
    }
}

impl<Q: QueueKind> std::fmt::Debug for Queue<'_, Q> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}({}, {:p})", Q::NAME, self.info.name, self.slot.raw)
    }
}

impl Drop for QueueManager {
    fn drop(&mut self) {
        unsafe { sys::mrt_queue_manager_destroy(self.raw.as_ptr()) }
    }
}

crate::ffi::debug_handle!(QueueManager);
