//! Choosing the queues a runner's timeout flush pads (flush_select_callback,
//! mrt_flush_selection): the seeds' flush_callback with its inputs and outputs.
use std::marker::PhantomData;
use std::os::raw::{c_char, c_void};

use crate::callback::with_closure;
use crate::error::{check, string_from_c, Result};
use crate::ffi::name_to_c;
use crate::sys;

/// Called on a replica's device thread when it timed out waiting for an
/// input (its name), choosing which queues the runner pads. Nothing added
/// pads every queue; once anything is added, only the added queues are
/// padded. A name that is no queue of the runner is logged by the library
/// and every queue padded instead.
pub type FlushSelectCallback = Box<dyn for<'s> FnMut(&str, &mut FlushSelection<'s>) + Send + 'static>;

/// The queues one timeout flush pads; exists only during the
/// FlushSelectCallback call it is given to (its lifetime ties it there).
pub struct FlushSelection<'s> {
    raw: *mut sys::mrt_flush_selection,
    _call: PhantomData<&'s mut sys::mrt_flush_selection>,
}

impl FlushSelection<'_> {
    /// Pads the input queue of anchor `name`.
    pub fn add_input(&mut self, name: &str) -> Result<()> {
        self.add(sys::MRT_TENSOR_INPUT, name)
    }

    /// Pads the output queue of anchor `name`.
    pub fn add_output(&mut self, name: &str) -> Result<()> {
        self.add(sys::MRT_TENSOR_OUTPUT, name)
    }

    fn add(&mut self, direction: sys::mrt_tensor_type, name: &str) -> Result<()> {
        let name = name_to_c(name)?;
        // SAFETY: raw is the library's selection, valid during this call.
        check(unsafe { sys::mrt_flush_selection_add(self.raw, direction as i32, name.as_ptr()) })
    }
}

pub(crate) unsafe extern "C" fn flush_select_trampoline(
    tensor_id: *const c_char,
    selection: *mut sys::mrt_flush_selection,
    user_data: *mut c_void,
) {
    let name = string_from_c(tensor_id);
    let mut selection = FlushSelection { raw: selection, _call: PhantomData };
    with_closure::<FlushSelectCallback, ()>(user_data, "a runner flush_select callback", (), |callback| {
        callback(&name, &mut selection)
    });
}
