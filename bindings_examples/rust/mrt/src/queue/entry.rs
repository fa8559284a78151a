//! The two-phase enqueue (mrt_*_queue_enqueue_lock / _complete): the
//! producer locks the ring's next slot, waiting for room as enqueue does,
//! then completes it with a buffer, which the slot's entry then holds as
//! enqueue would. Locking again before completing returns the same slot.
//! An entry dropped without complete leaves its slot locked: enqueue and
//! flush then fail with FailedPrecondition until it is locked again and
//! completed (or the queue is reset).
use std::os::raw::c_void;
use std::ptr::{self, NonNull};

use super::{check_buffer, entry_done, lock, Entry, Queue};
use crate::callback::free_boxed;
use crate::error::{check, Result, Status};
use crate::sys;
use crate::tensor::{as_bytes, Element};

/// The locked entry of an input queue's ring slot (mrt_input_queue_entry).
pub struct InputEntry<'q, 'm> {
    queue: &'q Queue<'m, sys::mrt_input_queue>,
    raw: NonNull<sys::mrt_input_queue_entry>,
    slot: i64,
}

/// The locked entry of an output queue's ring slot (mrt_output_queue_entry).
pub struct OutputEntry<'q, 'm> {
    queue: &'q Queue<'m, sys::mrt_output_queue>,
    raw: NonNull<sys::mrt_output_queue_entry>,
    slot: i64,
}

/// Locks the next slot of `queue` with `lock_fn` under its producer lock;
/// the entry and its slot.
fn lock_slot<Q: super::QueueKind, E>(
    queue: &Queue<'_, Q>,
    lock_fn: unsafe extern "C" fn(*mut Q, *mut *mut E) -> sys::mrt_status,
    slot_of: fn(&E) -> i64,
) -> Result<(NonNull<E>, i64)> {
    let _producer = lock(&queue.slot.producer);
    let mut raw = ptr::null_mut();
    check(unsafe { lock_fn(queue.slot.raw, &mut raw) })?;
    let raw = NonNull::new(raw).expect("libmrt returned MRT_OK and a NULL entry");
    Ok((raw, slot_of(unsafe { raw.as_ref() })))
}

/// The outcome of a complete whose entry holds `user_data`: the library
/// takes it when the call succeeds or is Cancelled (it then frees it);
/// otherwise (no entry locked any more, an entry refused) it is still ours,
/// and `clear` makes the entry forget it before it is freed.
fn published<T, F>(code: sys::mrt_status, user_data: *mut c_void, clear: impl FnOnce()) -> Result<()> {
    let result = check(code);
    if matches!(&result, Err(err) if err.status() != Status::Cancelled) {
        clear();
        unsafe { free_boxed::<Entry<T, F>>(user_data) };
    }
    result
}

impl<'m> Queue<'m, sys::mrt_input_queue> {
    /// Locks the ring's next slot (two-phase enqueue); blocks while the ring
    /// is full, Cancelled if the queue is or gets disconnected.
    pub fn enqueue_lock(&self) -> Result<InputEntry<'_, 'm>> {
        let (raw, slot) = lock_slot(self, sys::mrt_input_queue_enqueue_lock, |e| e.slot)?;
        Ok(InputEntry { queue: self, raw, slot })
    }
}

impl<'m> Queue<'m, sys::mrt_output_queue> {
    /// As InputQueue::enqueue_lock, for an output buffer.
    pub fn enqueue_lock(&self) -> Result<OutputEntry<'_, 'm>> {
        let (raw, slot) = lock_slot(self, sys::mrt_output_queue_enqueue_lock, |e| e.slot)?;
        Ok(OutputEntry { queue: self, raw, slot })
    }
}

impl InputEntry<'_, '_> {
    /// The ring slot, 0 .. num_buffers - 1.
    pub fn slot(&self) -> i64 {
        self.slot
    }

    /// Publishes the entry with `data` (whole samples of the queue's type),
    /// as enqueue_then would: `done` gets the buffer back once the device
    /// has read it. FailedPrecondition if the slot is no longer locked (it
    /// was completed through another lock of it); Cancelled if the queue
    /// was disconnected since the lock (the buffer is dropped).
    pub fn complete<T, F>(self, data: Vec<T>, done: F) -> Result<()>
    where
        T: Element,
        F: FnOnce(Vec<T>) + Send + 'static,
    {
        check_buffer::<T>(&self.queue.info, data.len())?;
        let (pointer, size) = (as_bytes(&data).as_ptr(), std::mem::size_of_val(&data[..]) as i64);
        let user_data = Box::into_raw(Box::new(Entry { buffer: data, done: Some(done) })) as *mut c_void;
        let _producer = lock(&self.queue.slot.producer);
        // Producer calls (the library's only users of the entry) hold the lock.
        let entry = unsafe { &mut *self.raw.as_ptr() };
        entry.data = pointer as *const c_void;
        entry.size_bytes = size;
        entry.read_start_fn = None;
        entry.read_complete_fn = Some(entry_done::<T, F>);
        entry.user_data = user_data;
        entry.user_data_free = Some(free_boxed::<Entry<T, F>>);
        let code = unsafe { sys::mrt_input_queue_enqueue_complete(self.queue.slot.raw) };
        published::<T, F>(code, user_data, || {
            entry.data = ptr::null();
            entry.user_data = ptr::null_mut();
            entry.user_data_free = None;
        })
    }
}

impl OutputEntry<'_, '_> {
    /// The ring slot, 0 .. num_buffers - 1.
    pub fn slot(&self) -> i64 {
        self.slot
    }

    /// Publishes the entry with `buffer` for the device's output, as
    /// OutputQueue::enqueue would: `done` gets it back, written. Otherwise
    /// as InputEntry::complete.
    pub fn complete<T, F>(self, mut buffer: Vec<T>, done: F) -> Result<()>
    where
        T: Element,
        F: FnOnce(Vec<T>) + Send + 'static,
    {
        check_buffer::<T>(&self.queue.info, buffer.len())?;
        let (pointer, size) = (buffer.as_mut_ptr() as *mut c_void, std::mem::size_of_val(&buffer[..]) as i64);
        let user_data = Box::into_raw(Box::new(Entry { buffer, done: Some(done) })) as *mut c_void;
        let _producer = lock(&self.queue.slot.producer);
        let entry = unsafe { &mut *self.raw.as_ptr() };
        entry.data = pointer;
        entry.size_bytes = size;
        entry.write_complete_fn = Some(entry_done::<T, F>);
        entry.user_data = user_data;
        entry.user_data_free = Some(free_boxed::<Entry<T, F>>);
        let code = unsafe { sys::mrt_output_queue_enqueue_complete(self.queue.slot.raw) };
        published::<T, F>(code, user_data, || {
            entry.data = ptr::null_mut();
            entry.user_data = ptr::null_mut();
            entry.user_data_free = None;
        })
    }
}
