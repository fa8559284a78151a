//! Future: the pending outcome of ModelRunner::execute_async, to wait for,
//! poll, or `.await` (it implements std::future::Future; the library's
//! completion callback wakes the task).
use std::ffi::CString;
use std::os::raw::c_void;
use std::pin::Pin;
use std::ptr::NonNull;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use crate::callback::{call_guarded, closure_user_data, free_boxed, into_user_data, user_data_ref, with_closure};
use crate::error::{check, string_from_c, Error, RecoveryAction, Result, Status};
use crate::ffi::timeout_ns;
use crate::memory::TensorMemory;
use crate::sys;

/// What the completion callback and poll share: whether the request is
/// done, and the waker of the task awaiting it.
#[derive(Default)]
struct Completion {
    done: bool,
    waker: Option<Waker>,
}

type SharedCompletion = Mutex<Completion>;

/// One queued request. It owns the copies of the request's inputs, which the
/// library reads until the request is done, and its outputs (`O`: the
/// library-allocated TensorMemory, or the caller's OutputBuffers), handed
/// out once they hold the results.
///
/// Dropping a pending Future waits for the request to finish first, so the
/// inputs are never freed under the library. (Leaking it with mem::forget
/// leaks the inputs too, which is safe.)
pub struct Future<O = TensorMemory> {
    raw: NonNull<sys::mrt_future>,
    outputs: Option<O>,
    completion: Arc<SharedCompletion>,
    // Read by the library until the request is done; never touched here.
    _inputs: Vec<Vec<u8>>,
    _names: Vec<CString>,
}

// mrt_c.h: "every function may be called from any thread, concurrently".
unsafe impl<O: Send> Send for Future<O> {}
unsafe impl<O: Sync> Sync for Future<O> {}

/// The on_ready closure of a user: called once with Ok or the failure's status.
type ReadyCallback<F> = Option<F>;

impl<O> Future<O> {
    /// Takes ownership of a future the library returned with MRT_OK, with
    /// what the request reads (inputs, names) and writes (outputs).
    pub(crate) unsafe fn from_raw(
        raw: *mut sys::mrt_future,
        outputs: O,
        inputs: Vec<Vec<u8>>,
        names: Vec<CString>,
    ) -> Result<Future<O>> {
        let future = Future {
            raw: NonNull::new(raw).expect("libmrt returned MRT_OK and a NULL future"),
            outputs: Some(outputs),
            completion: Arc::new(Mutex::new(Completion::default())),
            _inputs: inputs,
            _names: names,
        };
        // The waker's path: the library calls this once the request is done.
        let user_data = into_user_data(Arc::clone(&future.completion));
        check(sys::mrt_future_on_ready(
            future.raw.as_ptr(),
            Some(wake_trampoline),
            user_data,
            Some(free_boxed::<Arc<SharedCompletion>>),
        ))?;
        Ok(future)
    }

    /// True once the request is done (succeeded or failed).
    pub fn is_ready(&self) -> bool {
        unsafe { sys::mrt_future_is_ready(self.raw.as_ptr()) }
    }

    /// Waits for the request at most `timeout` (None: no limit); true if it
    /// is done.
    pub fn wait_timeout(&self, timeout: Option<Duration>) -> bool {
        unsafe { sys::mrt_future_wait(self.raw.as_ptr(), timeout_ns(timeout)) };
        self.is_ready()
    }

    /// Waits for the request and returns its outputs, or its error (status,
    /// the future's own message and recovery action: asynchronous failures
    /// never go through the per-thread message).
    pub fn wait(mut self) -> Result<O> {
        unsafe { sys::mrt_future_wait(self.raw.as_ptr(), timeout_ns(None)) };
        self.take_result()
    }

    /// The outcome of a finished request; its outputs can be taken once.
    fn take_result(&mut self) -> Result<O> {
        let mut code = 0;
        check(unsafe { sys::mrt_future_status(self.raw.as_ptr(), &mut code) })?;
        if let Some(status) = Status::from_code(code) {
            let message = unsafe { string_from_c(sys::mrt_future_error_message(self.raw.as_ptr())) };
            let recovery = RecoveryAction::from_raw(unsafe { sys::mrt_future_recovery_action(self.raw.as_ptr()) });
            return Err(Error::new(status, message).with_recovery(recovery));
        }
        self.outputs
            .take()
            .ok_or_else(|| Error::new(Status::FailedPrecondition, "the request's outputs were already taken"))
    }

    /// Calls `callback` once with the request's outcome when it is done: at
    /// once on this thread if it already is, otherwise on a library thread
    /// (hence Send). It must not block for long: it holds up the replica. A
    /// panic in it is caught at the C boundary (see caught_callback_panics).
    pub fn on_ready<F>(&self, callback: F) -> Result<()>
    where
        F: FnOnce(std::result::Result<(), Status>) + Send + 'static,
    {
        let user_data = closure_user_data::<ReadyCallback<F>>(Some(callback));
        // If registration fails the library frees user_data itself.
        check(unsafe {
            sys::mrt_future_on_ready(
                self.raw.as_ptr(),
                Some(ready_trampoline::<F>),
                user_data,
                Some(free_boxed::<Mutex<ReadyCallback<F>>>),
            )
        })
    }
}

unsafe extern "C" fn wake_trampoline(_status: sys::mrt_status, user_data: *mut c_void) {
    let completion = user_data_ref::<Arc<SharedCompletion>>(user_data);
    call_guarded("waking a task", (), || {
        let waker = {
            let mut state = completion.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            state.done = true;
            state.waker.take()
        };
        // Outside the lock: the woken task may poll at once.
        if let Some(waker) = waker {
            waker.wake();
        }
    });
}

unsafe extern "C" fn ready_trampoline<F>(status: sys::mrt_status, user_data: *mut c_void)
where
    F: FnOnce(std::result::Result<(), Status>) + Send + 'static,
{
    with_closure::<ReadyCallback<F>, ()>(user_data, "a future's on_ready callback", (), |slot| {
        if let Some(callback) = slot.take() {
            callback(match Status::from_code(status) {
                None => Ok(()),
                Some(failure) => Err(failure),
            })
        }
    });
}

// Nothing in a Future is pinned: the library knows only its handle.
impl<O> Unpin for Future<O> {}

impl<O> std::future::Future for Future<O> {
    type Output = Result<O>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        {
            let mut state = self.completion.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            if !state.done {
                // Stored under the lock the completion callback takes: a
                // completion after this check finds the waker.
                state.waker = Some(cx.waker().clone());
                return Poll::Pending;
            }
        }
        Poll::Ready(self.take_result())
    }
}

impl<O> Drop for Future<O> {
    fn drop(&mut self) {
        // The request reads self._inputs until it is done: wait before they go.
        if !self.is_ready() {
            unsafe { sys::mrt_future_wait(self.raw.as_ptr(), timeout_ns(None)) };
        }
        unsafe { sys::mrt_future_destroy(self.raw.as_ptr()) }
    }
}

impl<O> std::fmt::Debug for Future<O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Future({:p})", self.raw)
    }
}
