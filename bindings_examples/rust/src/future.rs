//! Future: the pending outcome of ModelRunner::execute_async.
use std::ffi::CString;
use std::os::raw::c_void;
use std::ptr::NonNull;
use std::time::Duration;

use crate::callback::call_guarded;
use crate::error::{check, string_from_c, MrtError, Result, Status};
use crate::memory::TensorMemory;
use crate::sys;

/// One queued request. It owns the copies of the request's inputs, which the
/// library reads until the request is done, and the library-allocated
/// outputs, handed out by `wait` once they hold the results.
///
/// Dropping a pending Future waits for the request to finish first, so the
/// inputs are never freed under the library. (Leaking it with mem::forget
/// leaks the inputs too, which is safe.)
pub struct Future {
    raw: NonNull<sys::mrt_future>,
    outputs: Option<TensorMemory>,
    // Read by the library until the request is done; never touched here.
    _inputs: Vec<Vec<u8>>,
    _names: Vec<CString>,
}

// mrt_c.h: "every function may be called from any thread, concurrently".
unsafe impl Send for Future {}
unsafe impl Sync for Future {}

impl Future {
    pub(crate) unsafe fn from_raw(
        raw: *mut sys::mrt_future,
        outputs: *mut sys::mrt_tensor_memory,
        inputs: Vec<Vec<u8>>,
        names: Vec<CString>,
    ) -> Future {
        Future {
            raw: NonNull::new(raw).expect("libmrt returned MRT_OK and a NULL future"),
            outputs: Some(TensorMemory::from_raw(outputs)),
            _inputs: inputs,
            _names: names,
        }
    }

    /// True once the request is done (succeeded or failed).
    pub fn is_ready(&self) -> bool {
        unsafe { sys::mrt_future_is_ready(self.raw.as_ptr()) }
    }

    /// Waits up to `timeout` for the request; true if it is done.
    pub fn wait_timeout(&self, timeout: Duration) -> bool {
        let nanos = i64::try_from(timeout.as_nanos()).unwrap_or(i64::MAX);
        unsafe { sys::mrt_future_wait(self.raw.as_ptr(), nanos) };
        self.is_ready()
    }

    /// Waits for the request and returns its outputs, or its error (the code
    /// and the future's own message: asynchronous failures never go through
    /// the per-thread message).
    pub fn wait(mut self) -> Result<TensorMemory> {
        let status = unsafe { sys::mrt_future_wait(self.raw.as_ptr(), -1) };
        if status != sys::MRT_OK {
            let message = unsafe { string_from_c(sys::mrt_future_error_message(self.raw.as_ptr())) };
            return Err(MrtError::new(Status(status), message));
        }
        Ok(self.outputs.take().expect("outputs are taken only here"))
    }

    /// Calls `callback` once with the request's status when it is done: at
    /// once on this thread if it already is, otherwise on a library thread
    /// (hence Send). It must not block for long: it holds up the replica. A
    /// panic in it is caught at the C boundary (see caught_callback_panics).
    pub fn on_ready<F>(&self, callback: F) -> Result<()>
    where
        F: FnOnce(Status) + Send + 'static,
    {
        let slot: Box<Option<F>> = Box::new(Some(callback));
        let user_data = Box::into_raw(slot) as *mut c_void;
        // If registration fails the library calls ready_free(user_data) itself.
        check(unsafe {
            sys::mrt_future_on_ready(self.raw.as_ptr(), Some(ready_trampoline::<F>), user_data, Some(ready_free::<F>))
        })
    }
}

unsafe extern "C" fn ready_trampoline<F: FnOnce(Status) + Send + 'static>(
    status: sys::mrt_status,
    user_data: *mut c_void,
) {
    // Called exactly once; the slot itself is freed by ready_free afterwards.
    let slot = &mut *(user_data as *mut Option<F>);
    if let Some(callback) = slot.take() {
        call_guarded("a future's on_ready callback", move || callback(Status(status)));
    }
}

unsafe extern "C" fn ready_free<F: FnOnce(Status) + Send + 'static>(user_data: *mut c_void) {
    let slot = Box::from_raw(user_data as *mut Option<F>);
    call_guarded("dropping an on_ready callback", move || drop(slot));
}

impl std::fmt::Debug for Future {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Future({:p})", self.raw)
    }
}

impl Drop for Future {
    fn drop(&mut self) {
        // The request reads self._inputs until it is done: wait before they go.
        if !self.is_ready() {
            unsafe { sys::mrt_future_wait(self.raw.as_ptr(), -1) };
        }
        unsafe { sys::mrt_future_destroy(self.raw.as_ptr()) }
    }
}
