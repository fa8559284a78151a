//! The two-phase enqueue (mrt_*_queue_enqueue_lock / _complete): the
//! producer locks the ring's next slot, waiting for room as enqueue does,
//! then completes it with a buffer, which the slot's entry then holds as
//! enqueue would. Locking again before completing returns the same slot.
//! An entry dropped without complete leaves its slot locked: enqueue and
//! flush then fail with FailedPrecondition until it is locked again and
//! completed (or the queue is reset).
use std::os::raw::c_void;
use std::ptr::{self, NonNull};

use super::{check_buffer, entry_done, lock, Entry, Queue, QueueInfo, QueueSlot};
use crate::callback::free_boxed;
use crate::error::{check, Result, Status};
use crate::sys;
use crate::tensor::Element;

/// The locked entry of a queue's ring slot: `enqueue_lock` gives it,
/// `complete` publishes it.
pub struct QueueEntry<'q, E: RawEntry> {
    slot_of_queue: &'q QueueSlot<E::Queue>,
    info: &'q QueueInfo,
    raw: NonNull<E>,
    slot: i64,
}

/// The locked entry of an input queue's ring slot (mrt_input_queue_entry).
pub type InputEntry<'q> = QueueEntry<'q, sys::mrt_input_queue_entry>;
/// The locked entry of an output queue's ring slot (mrt_output_queue_entry).
pub type OutputEntry<'q> = QueueEntry<'q, sys::mrt_output_queue_entry>;

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

/// What complete writes into a library entry.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct Fields {
    data: *mut c_void,
    size: i64,
    done: sys::mrt_queue_data_fn,
    user_data: *mut c_void,
    free: Option<unsafe extern "C" fn(*mut c_void)>,
}

const NO_FIELDS: Fields = Fields { data: ptr::null_mut(), size: 0, done: None, user_data: ptr::null_mut(), free: None };

/// A library entry (the fields both kinds share) and its complete call;
/// sealed: this module is private.
#[doc(hidden)]
pub trait RawEntry {
    type Queue;
    const COMPLETE: unsafe extern "C" fn(*mut Self::Queue) -> sys::mrt_status;
    fn fill(&mut self, f: Fields);
}

impl RawEntry for sys::mrt_input_queue_entry {
    type Queue = sys::mrt_input_queue;
    const COMPLETE: unsafe extern "C" fn(*mut Self::Queue) -> sys::mrt_status = sys::mrt_input_queue_enqueue_complete;
    fn fill(&mut self, f: Fields) {
        (self.data, self.size_bytes, self.read_start_fn, self.read_complete_fn) = (f.data, f.size, None, f.done);
        (self.user_data, self.user_data_free) = (f.user_data, f.free);
    }
}

impl RawEntry for sys::mrt_output_queue_entry {
    type Queue = sys::mrt_output_queue;
    const COMPLETE: unsafe extern "C" fn(*mut Self::Queue) -> sys::mrt_status = sys::mrt_output_queue_enqueue_complete;
    fn fill(&mut self, f: Fields) {
        (self.data, self.size_bytes, self.write_complete_fn) = (f.data, f.size, f.done);
        (self.user_data, self.user_data_free) = (f.user_data, f.free);
    }
}

/// Fills the locked entry `raw` of `slot`'s queue with `buffer` and `done`
/// and publishes it. The library takes the boxed buffer when the call
/// succeeds or is Cancelled (it then frees it); otherwise (no entry locked
/// any more) it is still ours: the entry forgets it and it is dropped here.
fn complete_entry<E, T, F>(slot: &QueueSlot<E::Queue>, raw: NonNull<E>, mut buffer: Vec<T>, done: F) -> Result<()>
where
    E: RawEntry,
    T: Element,
    F: FnOnce(Vec<T>) + Send + 'static,
{
    let (pointer, size) = (buffer.as_mut_ptr() as *mut c_void, std::mem::size_of_val(&buffer[..]) as i64);
    // Moving the Vec into the box keeps its heap buffer where it is.
    let user_data = Box::into_raw(Box::new(Entry { buffer, done: Some(done) })) as *mut c_void;
    let _producer = lock(&slot.producer);
    // Producer calls (the library's only users of the entry) hold the lock.
    let entry = unsafe { &mut *raw.as_ptr() };
    let free = Some(free_boxed::<Entry<T, F>> as unsafe extern "C" fn(*mut c_void));
    entry.fill(Fields { data: pointer, size, done: Some(entry_done::<T, F>), user_data, free });
    let result = check(unsafe { E::COMPLETE(slot.raw) });
    if matches!(&result, Err(err) if err.status() != Status::Cancelled) {
        entry.fill(NO_FIELDS);
        unsafe { free_boxed::<Entry<T, F>>(user_data) };
    }
    result
}

impl<'m> Queue<'m, sys::mrt_input_queue> {
    /// Locks the ring's next slot (two-phase enqueue); blocks while the ring
    /// is full, Cancelled if the queue is or gets disconnected.
    pub fn enqueue_lock(&self) -> Result<InputEntry<'_>> {
        let (raw, slot) = lock_slot(self, sys::mrt_input_queue_enqueue_lock, |e| e.slot)?;
        Ok(QueueEntry { slot_of_queue: self.slot, info: &self.info, raw, slot })
    }
}

impl<'m> Queue<'m, sys::mrt_output_queue> {
    /// As InputQueue::enqueue_lock, for an output buffer.
    pub fn enqueue_lock(&self) -> Result<OutputEntry<'_>> {
        let (raw, slot) = lock_slot(self, sys::mrt_output_queue_enqueue_lock, |e| e.slot)?;
        Ok(QueueEntry { slot_of_queue: self.slot, info: &self.info, raw, slot })
    }
}

impl<E: RawEntry> QueueEntry<'_, E> {
    /// The ring slot, 0 .. num_buffers - 1.
    pub fn slot(&self) -> i64 {
        self.slot
    }

    /// Publishes the entry with `buffer` (whole samples of the queue's
    /// type), as enqueue would: `done` gets the buffer back once the device
    /// has read it (input) or written it (output). FailedPrecondition if
    /// the slot is no longer locked (it was completed through another lock
    /// of it); Cancelled if the queue was disconnected since the lock. On an
    /// Err the buffer is dropped.
    pub fn complete<T, F>(self, buffer: Vec<T>, done: F) -> Result<()>
    where
        T: Element,
        F: FnOnce(Vec<T>) + Send + 'static,
    {
        check_buffer::<T>(self.info, buffer.len())?;
        complete_entry(self.slot_of_queue, self.raw, buffer, done)
    }
}
