//! The one place where Rust closures are called from C: a panic must never
//! unwind into the library (that is undefined behaviour), so every call runs
//! under catch_unwind and a caught panic is counted and reported instead.
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};

static CAUGHT_PANICS: AtomicUsize = AtomicUsize::new(0);

/// How many panics of user callbacks (and of dropping them) this process
/// has caught at the C boundary.
pub fn caught_callback_panics() -> usize {
    CAUGHT_PANICS.load(Ordering::SeqCst)
}

/// Runs `body` (a user callback, or the drop of one) so that a panic stops
/// here. The default panic hook has already printed the panic's message.
pub(crate) fn call_guarded<F: FnOnce()>(what: &str, body: F) {
    if panic::catch_unwind(AssertUnwindSafe(body)).is_err() {
        CAUGHT_PANICS.fetch_add(1, Ordering::SeqCst);
        eprintln!("mrt: a panic in {what} was caught before it could reach libmrt");
    }
}
