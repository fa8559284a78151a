//! The one place where Rust closures are called from C: a panic must never
//! unwind into the library (that is undefined behaviour), so every call runs
//! under catch_unwind and a caught panic is counted and reported instead.
//! Also the plumbing every callback shares: a closure boxed into user_data
//! and dropped by the matching user_data_free.
use std::os::raw::c_void;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};

static CAUGHT_PANICS: AtomicUsize = AtomicUsize::new(0);

/// How many panics of user callbacks (and of dropping them) this process
/// has caught at the C boundary.
pub fn caught_callback_panics() -> usize {
    CAUGHT_PANICS.load(Ordering::SeqCst)
}

/// Runs `body` (a user callback, or the drop of one) so that a panic stops
/// here; then `fallback` is what the C caller gets. The default panic hook
/// has already printed the panic's message.
pub(crate) fn call_guarded<R, F: FnOnce() -> R>(what: &str, fallback: R, body: F) -> R {
    match panic::catch_unwind(AssertUnwindSafe(body)) {
        Ok(value) => value,
        Err(_) => {
            CAUGHT_PANICS.fetch_add(1, Ordering::SeqCst);
            eprintln!("mrt: a panic in {what} was caught before it could reach libmrt");
            fallback
        }
    }
}

/// `value` boxed as a callback's user_data; free it with free_boxed::<T>.
pub(crate) fn into_user_data<T>(value: T) -> *mut c_void {
    Box::into_raw(Box::new(value)) as *mut c_void
}

/// The user_data_free of into_user_data::<T>: drops the value, panic-safe.
pub(crate) unsafe extern "C" fn free_boxed<T>(user_data: *mut c_void) {
    let value = Box::from_raw(user_data as *mut T);
    call_guarded("dropping a callback", (), move || drop(value));
}

/// The user_data of into_user_data::<T>, borrowed during a call.
pub(crate) unsafe fn user_data_ref<'a, T>(user_data: *mut c_void) -> &'a T {
    &*(user_data as *const T)
}

/// `closure` as user_data for a callback that may be called from another
/// thread than the caller's, never overlapping itself for one registration:
/// the Mutex makes FnMut sound even where the library gives no such promise.
pub(crate) fn closure_user_data<F: Send + 'static>(closure: F) -> *mut c_void {
    into_user_data(std::sync::Mutex::new(closure))
}

/// Calls the closure of closure_user_data::<F>, panic-safe: a panic is
/// caught and `fallback` returned (the mutex is recovered after a panic).
pub(crate) unsafe fn with_closure<F, R>(
    user_data: *mut c_void,
    what: &str,
    fallback: R,
    call: impl FnOnce(&mut F) -> R,
) -> R {
    let mutex = user_data_ref::<std::sync::Mutex<F>>(user_data);
    call_guarded(what, fallback, || {
        let mut closure = mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        call(&mut closure)
    })
}
