//! Session: one model on one device, its streams bound to callbacks, the
//! model's data or queues, and its Load / Main / Save programs run on the
//! calling thread (docs/session.md).
use std::cell::Cell;
use std::marker::PhantomData;
use std::os::raw::c_void;
use std::path::Path;
use std::ptr::{self, NonNull};
use std::sync::Arc;

use crate::callback::{call_guarded, closure_user_data, free_boxed, with_closure};
use crate::device::{Device, DeviceWait};
use crate::error::{check, Result};
use crate::ffi::{defaults, name_to_c, CStrings, SizedStruct};
use crate::model::{AnchorInfo, Model};
use crate::predicate::AnchorPredicate;
use crate::queue::{QueueManager, QueueManagerConfig};
use crate::runner::SimulatedError;
use crate::sys;

/// A stream callback: writes an input's bytes into the buffer, or reads an
/// output's from it. Called on the thread running the session's programs.
pub type AnchorCallback = Box<dyn FnMut(&mut [u8]) + Send + 'static>;

/// When a session gets its device (mrt_launch_policy).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Launch {
    /// Gets a device for the model when created.
    Immediate,
    /// The caller binds one: Session::bind_to_device.
    Deferred,
}

/// Which anchors Session::anchors lists (mrt_session_anchor_set).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnchorSet {
    Inputs = 0,
    UserInputs = 1,
    UserOutputs = 2,
}

/// Session options.
pub struct SessionConfig<'a> {
    pub launch: Launch,
    /// Which inputs use the model's TensorData / FeedData (a DataUsage
    /// predicate); None: all that have it.
    pub tensor_data_predicate: Option<&'a AnchorPredicate>,
    pub check_package_hash: bool,
    /// How an Immediate session waits for its device.
    pub device_wait: DeviceWait,
    /// Host syncs prepared ahead; None: unlimited.
    pub max_look_ahead_syncs: Option<u64>,
}

impl Default for SessionConfig<'_> {
    fn default() -> Self {
        SessionConfig {
            launch: Launch::Deferred,
            tensor_data_predicate: None,
            check_package_hash: true,
            device_wait: DeviceWait::NoWait,
            max_look_ahead_syncs: None,
        }
    }
}

/// A replica's modelled device time (mrt_session_device_cycles):
/// (cycles after - cycles before) / clock_hz is the modelled time of the
/// runs in between.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DeviceCycles {
    /// Cycles run since the executable was last loaded (0 before): Load
    /// and Main runs, host transfers, exchange and syncs.
    pub cycles: u64,
    /// The device's clock.
    pub clock_hz: f64,
}

/// The handle itself, shared with SessionStopper: destroyed when the last
/// of them goes, so mrt_session_destroy never overlaps mrt_session_stop.
struct RawSession(NonNull<sys::mrt_session>);

// Only stop and is_stopped reach it from other threads (SessionStopper),
// which the header allows "from any thread at any time".
unsafe impl Send for RawSession {}
unsafe impl Sync for RawSession {}

impl Drop for RawSession {
    fn drop(&mut self) {
        unsafe { sys::mrt_session_destroy(self.0.as_ptr()) }
    }
}

/// A session. Calls on it must not overlap: it is Send but not Sync, and
/// callbacks given to it are 'static and Send, so they cannot reach it
/// either. Stopping from another thread goes through `stopper()`; serving
/// the replicas of a replicated model on threads of their own through
/// `replicas()`.
pub struct Session {
    raw: Arc<RawSession>,
    _not_sync: PhantomData<Cell<()>>,
}

/// Stops a session from any thread (mrt_session_stop), e.g. from a watchdog
/// while another thread runs its programs. Keeps the handle alive.
#[derive(Clone)]
pub struct SessionStopper {
    raw: Arc<RawSession>,
}

impl SessionStopper {
    /// Stops running programs at their next host sync (the run fails with
    /// Status::Cancelled) and every later run until Session::reload.
    pub fn stop(&self) -> Result<()> {
        check(unsafe { sys::mrt_session_stop(self.raw.0.as_ptr()) })
    }

    pub fn is_stopped(&self) -> Result<bool> {
        let mut stopped = false;
        check(unsafe { sys::mrt_session_is_stopped(self.raw.0.as_ptr(), &mut stopped) })?;
        Ok(stopped)
    }
}

/// One replica of a replicated session, to serve on a thread of its own
/// (Session::replicas): it runs that replica's Main programs, whose
/// callbacks and queue transfers then run on its thread. While any exists
/// the session is borrowed, so no other call on it can overlap the runs.
pub struct SessionReplica<'s> {
    raw: NonNull<sys::mrt_session>,
    replica: u32,
    _session: PhantomData<&'s mut Session>,
}

// The header allows runs of distinct replicas at once, each on its own
// thread; each SessionReplica is the only one of its replica, and runs take
// &mut self.
unsafe impl Send for SessionReplica<'_> {}

impl SessionReplica<'_> {
    /// The replica this runs.
    pub fn replica(&self) -> u32 {
        self.replica
    }

    /// Runs the replica's Main programs (its Load programs first if they
    /// have not run on it since the executable was loaded).
    pub fn run_main_programs(&mut self) -> Result<()> {
        check(unsafe { sys::mrt_session_run_main_programs_for_replica(self.raw.as_ptr(), self.replica) })
    }
}

impl std::fmt::Debug for SessionReplica<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SessionReplica({:p}, {})", self.raw, self.replica)
    }
}

impl Session {
    /// A session of `model`, which it keeps alive.
    pub fn new(model: &Model, config: &SessionConfig<'_>) -> Result<Session> {
        Session::create(config, |raw_config, out| unsafe { sys::mrt_session_create(model.as_ptr(), raw_config, out) })
    }

    /// A session of the model held by PopEF files.
    pub fn from_files<P: AsRef<Path>>(paths: &[P], config: &SessionConfig<'_>) -> Result<Session> {
        let paths = CStrings::paths(paths)?;
        Session::create(config, |raw_config, out| unsafe {
            sys::mrt_session_create_from_files(paths.as_ptr(), paths.len(), raw_config, out)
        })
    }

    fn create(
        config: &SessionConfig<'_>,
        create: impl FnOnce(*const sys::mrt_session_config, *mut *mut sys::mrt_session) -> i32,
    ) -> Result<Session> {
        let wait = config.device_wait.to_raw();
        let mut raw_config = defaults(sys::mrt_session_config_init_sized);
        raw_config.policy = match config.launch {
            Launch::Immediate => sys::MRT_LAUNCH_IMMEDIATE as i32,
            Launch::Deferred => sys::MRT_LAUNCH_DEFERRED as i32,
        };
        raw_config.pred_tensor_data = config.tensor_data_predicate.map(|p| p.as_ptr()).unwrap_or(ptr::null());
        raw_config.check_package_hash = config.check_package_hash;
        raw_config.wait_config = &wait;
        raw_config.max_look_ahead_syncs = match config.max_look_ahead_syncs {
            None => -1,
            Some(syncs) => i64::try_from(syncs).unwrap_or(i64::MAX),
        };
        let mut out = ptr::null_mut();
        check(create(&raw_config, &mut out))?;
        Ok(Session {
            raw: Arc::new(RawSession(NonNull::new(out).expect("MRT_OK and a NULL session"))),
            _not_sync: PhantomData,
        })
    }

    fn as_ptr(&self) -> *mut sys::mrt_session {
        self.raw.0.as_ptr()
    }

    /// A handle that stops this session from any thread.
    pub fn stopper(&self) -> SessionStopper {
        SessionStopper { raw: Arc::clone(&self.raw) }
    }

    /// The session's model.
    pub fn model(&self) -> Result<Model> {
        let mut out = ptr::null_mut();
        check(unsafe { sys::mrt_session_model(self.as_ptr(), &mut out) })?;
        Ok(unsafe { Model::from_raw(out) })
    }

    /// Binds to `device` (the session keeps its own reference) and loads
    /// the executable on it.
    pub fn bind_to_device(&self, device: &Device) -> Result<()> {
        check(unsafe { sys::mrt_session_bind_to_device(self.as_ptr(), device.as_ptr()) })
    }

    /// Runs Save if Load has run, and leaves the device.
    pub fn unload_from_device(&self) -> Result<()> {
        check(unsafe { sys::mrt_session_unload_from_device(self.as_ptr()) })
    }

    /// Loads the executable again on the last device (after a stop or a
    /// device error).
    pub fn reload(&self) -> Result<()> {
        check(unsafe { sys::mrt_session_reload(self.as_ptr()) })
    }

    pub fn run_load_programs(&self) -> Result<()> {
        check(unsafe { sys::mrt_session_run_load_programs(self.as_ptr()) })
    }

    /// Runs Load first if it has not run since the executable was loaded.
    /// A replicated model runs every replica, each on a thread of its own.
    pub fn run_main_programs(&self) -> Result<()> {
        check(unsafe { sys::mrt_session_run_main_programs(self.as_ptr()) })
    }

    /// The Main programs of replica `replica` (0 .. num_replicas()) only,
    /// on this thread. To run replicas at once, use replicas().
    pub fn run_main_programs_for_replica(&self, replica: u32) -> Result<()> {
        check(unsafe { sys::mrt_session_run_main_programs_for_replica(self.as_ptr(), replica) })
    }

    /// The model's replication factor R: replicas 0 .. R (1 for a model
    /// that is not replicated).
    pub fn num_replicas(&self) -> Result<u32> {
        let mut count = 0;
        check(unsafe { sys::mrt_session_num_replicas(self.as_ptr(), &mut count) })?;
        Ok(count)
    }

    /// The modelled cycles replica `replica` (0 .. num_replicas(); 0 for a
    /// model that is not replicated) of the session's device has run, and
    /// its clock. Status::InvalidArgument naming the replica and R if it is
    /// out of range.
    pub fn device_cycles(&self, replica: u32) -> Result<DeviceCycles> {
        let (mut cycles, mut clock_hz) = (0u64, 0f64);
        check(unsafe { sys::mrt_session_device_cycles(self.as_ptr(), replica, &mut cycles, &mut clock_hz) })?;
        Ok(DeviceCycles { cycles, clock_hz })
    }

    /// One SessionReplica per replica, in replica order, each to move to a
    /// thread of its own (e.g. std::thread::scope): the replicas then run
    /// at once. They borrow the session until dropped.
    pub fn replicas(&mut self) -> Result<Vec<SessionReplica<'_>>> {
        let raw = self.raw.0;
        Ok((0..self.num_replicas()?).map(|replica| SessionReplica { raw, replica, _session: PhantomData }).collect())
    }

    pub fn run_save_programs(&self) -> Result<()> {
        check(unsafe { sys::mrt_session_run_save_programs(self.as_ptr()) })
    }

    /// Each program once, in order; no implicit Load.
    pub fn run_programs(&self, programs: &[u64]) -> Result<()> {
        check(unsafe { sys::mrt_session_run_programs(self.as_ptr(), programs.as_ptr(), programs.len()) })
    }

    /// Binds `callback` (None: an empty one) to the stream of the anchor
    /// whose handle is `handle`, replacing the previous binding. A
    /// replicated model's every replica: the callback is then called from
    /// each replica's thread (one at a time: it is behind a mutex).
    pub fn set_callback(&self, handle: &str, callback: Option<AnchorCallback>) -> Result<()> {
        self.bind_callback(handle, None, callback)
    }

    /// As set_callback, for replica `replica` (0 .. num_replicas()) only.
    pub fn set_replica_callback(&self, handle: &str, replica: u32, callback: Option<AnchorCallback>) -> Result<()> {
        self.bind_callback(handle, Some(replica), callback)
    }

    fn bind_callback(&self, handle: &str, replica: Option<u32>, callback: Option<AnchorCallback>) -> Result<()> {
        let handle = name_to_c(handle)?;
        let (fn_, user_data, free) = match callback {
            None => (None, ptr::null_mut(), None),
            Some(callback) => raw_anchor_callback(callback),
        };
        // The library frees user_data itself if this fails.
        check(unsafe {
            match replica {
                None => sys::mrt_session_set_callback_for_anchor(self.as_ptr(), handle.as_ptr(), fn_, user_data, free),
                Some(replica) => sys::mrt_session_set_replica_callback_for_anchor(
                    self.as_ptr(),
                    handle.as_ptr(),
                    replica,
                    fn_,
                    user_data,
                    free,
                ),
            }
        })
    }

    /// Fills the remote buffer of anchor `handle` (all its slots) from
    /// `data` (copied), now and at every later load.
    pub fn set_remote_buffer_data(&self, handle: &str, data: &[u8]) -> Result<()> {
        let handle = name_to_c(handle)?;
        check(unsafe {
            sys::mrt_session_set_remote_buffer_data(
                self.as_ptr(),
                handle.as_ptr(),
                data.as_ptr() as *const c_void,
                data.len() as u64,
            )
        })
    }

    /// For each input anchor with a stream, the predicate's policy (None:
    /// BindUserCallback for all); for BindUserCallback `factory` is asked
    /// (unless skip_connected and the anchor has a binding) and a callback
    /// it returns replaces the binding. The factory runs on this thread,
    /// before this returns.
    pub fn set_user_input_handler<F>(
        &self,
        factory: F,
        predicate: Option<&AnchorPredicate>,
        skip_connected: bool,
    ) -> Result<()>
    where
        F: FnMut(&AnchorInfo) -> Option<AnchorCallback>,
    {
        self.set_handler(sys::mrt_session_set_user_input_handler, factory, predicate, skip_connected)
    }

    /// As set_user_input_handler, for the output anchors.
    pub fn set_user_output_handler<F>(
        &self,
        factory: F,
        predicate: Option<&AnchorPredicate>,
        skip_connected: bool,
    ) -> Result<()>
    where
        F: FnMut(&AnchorInfo) -> Option<AnchorCallback>,
    {
        self.set_handler(sys::mrt_session_set_user_output_handler, factory, predicate, skip_connected)
    }

    fn set_handler<F>(
        &self,
        set: unsafe extern "C" fn(
            *mut sys::mrt_session,
            sys::mrt_callback_factory_fn,
            *mut c_void,
            Option<unsafe extern "C" fn(*mut c_void)>,
            *const sys::mrt_anchor_predicate,
            bool,
        ) -> i32,
        mut factory: F,
        predicate: Option<&AnchorPredicate>,
        skip_connected: bool,
    ) -> Result<()>
    where
        F: FnMut(&AnchorInfo) -> Option<AnchorCallback>,
    {
        // The factory is not kept: it lives on this stack frame for the call.
        let user_data = &mut factory as *mut F as *mut c_void;
        check(unsafe {
            set(
                self.as_ptr(),
                Some(factory_trampoline::<F>),
                user_data,
                None,
                predicate.map(|p| p.as_ptr()).unwrap_or(ptr::null()),
                skip_connected,
            )
        })
    }

    /// The anchors of one set, in model order.
    pub fn anchors(&self, set: AnchorSet) -> Result<Vec<AnchorInfo>> {
        let mut count = 0;
        check(unsafe { sys::mrt_session_anchor_count(self.as_ptr(), set as i32, &mut count) })?;
        (0..count)
            .map(|index| {
                let mut raw = sys::mrt_anchor_info::sized();
                check(unsafe { sys::mrt_session_anchor(self.as_ptr(), set as i32, index, &mut raw) })?;
                Ok(unsafe { AnchorInfo::from_raw(&raw) })
            })
            .collect()
    }

    /// Every (program, anchor) of the programs whose stream has no binding.
    pub fn anchors_not_connected(&self, programs: &[u64]) -> Result<Vec<(u64, AnchorInfo)>> {
        let mut found: Vec<(u64, AnchorInfo)> = Vec::new();
        check(unsafe {
            sys::mrt_session_anchors_not_connected(
                self.as_ptr(),
                programs.as_ptr(),
                programs.len(),
                Some(collect_unbound),
                &mut found as *mut Vec<(u64, AnchorInfo)> as *mut c_void,
                ptr::null_mut(),
            )
        })?;
        Ok(found)
    }

    /// Status::FailedPrecondition listing the unbound anchors, if any.
    pub fn error_if_anchors_not_connected(&self, programs: &[u64]) -> Result<()> {
        check(unsafe {
            sys::mrt_session_error_if_anchors_not_connected(self.as_ptr(), programs.as_ptr(), programs.len())
        })
    }

    /// As SessionStopper::stop, from the session's own thread.
    pub fn stop(&self) -> Result<()> {
        self.stopper().stop()
    }

    pub fn is_stopped(&self) -> Result<bool> {
        self.stopper().is_stopped()
    }

    /// A queue manager whose queues replace the callbacks of the anchors
    /// needing user data; the session moves the data when it runs programs.
    /// The manager may outlive the session (it is then detached).
    /// A replicated model has one per replica: see create_queue_manager_for_replica.
    pub fn create_queue_manager(&self, config: QueueManagerConfig) -> Result<QueueManager> {
        QueueManager::create(config, |raw_config, out| unsafe {
            sys::mrt_session_create_queue_manager(self.as_ptr(), raw_config, out)
        })
    }

    /// Replica `replica`'s queue manager (0 .. num_replicas()), fed whenever
    /// that replica runs its programs. A second call for the same replica
    /// replaces that replica's manager only.
    pub fn create_queue_manager_for_replica(&self, replica: u32, config: QueueManagerConfig) -> Result<QueueManager> {
        QueueManager::create(config, |raw_config, out| unsafe {
            sys::mrt_session_create_queue_manager_for_replica(self.as_ptr(), replica, raw_config, out)
        })
    }

    /// A simulated fault whenever program step `step` runs on `tile`.
    pub fn insert_simulated_error(&self, error: SimulatedError, step: u32, tile: u32) -> Result<()> {
        check(unsafe { sys::mrt_session_insert_simulated_error(self.as_ptr(), error as i32, step, tile) })
    }

    pub fn erase_simulated_error(&self, step: u32, tile: u32) -> Result<()> {
        check(unsafe { sys::mrt_session_erase_simulated_error(self.as_ptr(), step, tile) })
    }

    pub fn clear_simulated_errors(&self) -> Result<()> {
        check(unsafe { sys::mrt_session_clear_simulated_errors(self.as_ptr()) })
    }
}

/// The C triple of an anchor callback; user_data is freed by the library.
fn raw_anchor_callback(
    callback: AnchorCallback,
) -> (sys::mrt_anchor_callback_fn, *mut c_void, Option<unsafe extern "C" fn(*mut c_void)>) {
    (Some(anchor_trampoline), closure_user_data(callback), Some(free_boxed::<std::sync::Mutex<AnchorCallback>>))
}

unsafe extern "C" fn anchor_trampoline(buffer: *mut c_void, size: u64, user_data: *mut c_void) {
    let bytes: &mut [u8] =
        if size == 0 { &mut [] } else { std::slice::from_raw_parts_mut(buffer as *mut u8, size as usize) };
    with_closure::<AnchorCallback, ()>(user_data, "an anchor callback", (), |callback| callback(bytes));
}

unsafe extern "C" fn factory_trampoline<F>(
    anchor: *const sys::mrt_anchor_info,
    out_callback: *mut sys::mrt_anchor_callback,
    user_data: *mut c_void,
) -> bool
where
    F: FnMut(&AnchorInfo) -> Option<AnchorCallback>,
{
    let factory = &mut *(user_data as *mut F);
    let anchor = AnchorInfo::from_raw(&*anchor);
    match call_guarded("a callback factory", None, || factory(&anchor)) {
        None => false,
        Some(callback) => {
            let (fn_, user_data, user_data_free) = raw_anchor_callback(callback);
            *out_callback = sys::mrt_anchor_callback { fn_, user_data, user_data_free };
            true
        }
    }
}

unsafe extern "C" fn collect_unbound(program: u64, anchor: *const sys::mrt_anchor_info, user_data: *mut c_void) {
    let found = &mut *(user_data as *mut Vec<(u64, AnchorInfo)>);
    let anchor = AnchorInfo::from_raw(&*anchor);
    call_guarded("collecting unbound anchors", (), || found.push((program, anchor)));
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Session({:p})", self.raw.0)
    }
}

impl std::fmt::Debug for SessionStopper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SessionStopper({:p})", self.raw.0)
    }
}
