//! DeviceManager and Device: the simulated IPU system and attached devices.
use std::ptr::{self, NonNull};
use std::time::Duration;

use crate::error::{check, string_from_c, Result};
use crate::ffi::{defaults, duration_ns, CStrings, SizedStruct};
use crate::model::Model;
use crate::sys;

/// How to wait for a busy device (mrt_device_wait_config).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DeviceWait {
    /// Fail at once (the default).
    #[default]
    NoWait,
    /// Retry every `retry_every` until `timeout` has passed.
    Timeout { timeout: Duration, retry_every: Duration },
    /// Retry every `retry_every` until a device is free.
    Forever { retry_every: Duration },
}

impl DeviceWait {
    pub(crate) fn to_raw(self) -> sys::mrt_device_wait_config {
        let mut raw = defaults(sys::mrt_device_wait_config_init_sized);
        match self {
            DeviceWait::NoWait => raw.strategy = sys::MRT_DEVICE_NO_WAIT as i32,
            DeviceWait::Timeout { timeout, retry_every } => {
                raw.strategy = sys::MRT_DEVICE_WAIT_WITH_TIMEOUT as i32;
                raw.timeout_ns = duration_ns(timeout);
                raw.sleep_time_ns = duration_ns(retry_every);
            }
            DeviceWait::Forever { retry_every } => {
                raw.strategy = sys::MRT_DEVICE_WAIT_FOREVER as i32;
                raw.sleep_time_ns = duration_ns(retry_every);
            }
        }
        raw
    }
}

/// One device of the system (mrt_device_info), copied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    pub id: i64,
    pub num_ipus: i64,
    pub ipu_version: i64,
    pub tiles_per_ipu: i64,
    /// A snapshot: another process may attach it right after.
    pub is_free: bool,
    pub target_name: String,
}

/// A view of the simulated system (MRT_HWSIM_IPUS, MRT_HWSIM_LOCK_DIR).
/// Immutable: Send and Sync. Devices do not need it: drop it any time.
pub struct DeviceManager {
    raw: NonNull<sys::mrt_device_manager>,
}

// mrt_c.h: "every function may be called on the same manager from any number
// of threads at once".
unsafe impl Send for DeviceManager {}
unsafe impl Sync for DeviceManager {}

/// An attached device: its IPUs are held (across processes too) until it
/// is dropped and no session or runner still uses it. The accessors may be
/// called from any thread: Send and Sync.
pub struct Device {
    raw: NonNull<sys::mrt_device>,
}

// mrt_c.h: "The accessors may be called from any thread at once." Destroy
// needs the handle by value (Drop), so it cannot overlap them.
unsafe impl Send for Device {}
unsafe impl Sync for Device {}

/// What to ask for in DeviceManager::device / try_device.
#[derive(Clone, Copy, Debug)]
pub enum DeviceRequest<'a> {
    /// The first free device of this many IPUs (1, 2, 4, ...).
    Ipus(i64),
    /// The device with this id.
    Id(i64),
    /// A device for the model (IPUs, IPU version, options).
    ForModel(&'a Model),
    /// The device with this id, for the model.
    IdForModel(i64, &'a Model),
}

impl DeviceManager {
    /// The system described by the environment.
    pub fn new() -> Result<DeviceManager> {
        let mut raw = ptr::null_mut();
        check(unsafe { sys::mrt_device_manager_create(&mut raw) })?;
        Ok(DeviceManager { raw: NonNull::new(raw).expect("MRT_OK and a NULL device manager") })
    }

    fn as_ptr(&self) -> *const sys::mrt_device_manager {
        self.raw.as_ptr()
    }

    /// 2 (Mk2) or 21 (C600); 0 for a system without IPUs.
    pub fn ipu_hardware_version(&self) -> Result<i64> {
        let mut version = 0;
        check(unsafe { sys::mrt_device_manager_ipu_hardware_version(self.as_ptr(), &mut version) })?;
        Ok(version)
    }

    /// Every device of the system, by id.
    pub fn devices(&self) -> Result<Vec<DeviceInfo>> {
        let mut count = 0;
        check(unsafe { sys::mrt_device_manager_device_count(self.as_ptr(), &mut count) })?;
        (0..count)
            .map(|index| {
                let mut raw = sys::mrt_device_info::sized();
                check(unsafe { sys::mrt_device_manager_device_info(self.as_ptr(), index, &mut raw) })?;
                Ok(DeviceInfo {
                    id: raw.id,
                    num_ipus: raw.num_ipus,
                    ipu_version: raw.ipu_version,
                    tiles_per_ipu: raw.tiles_per_ipu,
                    is_free: raw.is_free,
                    target_name: unsafe { string_from_c(raw.target_name) },
                })
            })
            .collect()
    }

    /// Attaches a device, waiting as `wait` says; Status::Unavailable if
    /// none could be had. `options` are device options (key, value); models
    /// bring their own.
    pub fn device(&self, request: DeviceRequest<'_>, options: &[(&str, &str)], wait: DeviceWait) -> Result<Device> {
        let raw = self.attach(request, options, wait, false)?;
        Ok(Device { raw: NonNull::new(raw).expect("MRT_OK and a NULL device") })
    }

    /// As device(), but Ok(None) when no device could be attached.
    pub fn try_device(
        &self,
        request: DeviceRequest<'_>,
        options: &[(&str, &str)],
        wait: DeviceWait,
    ) -> Result<Option<Device>> {
        let raw = self.attach(request, options, wait, true)?;
        Ok(NonNull::new(raw).map(|raw| Device { raw }))
    }

    fn attach(
        &self,
        request: DeviceRequest<'_>,
        options: &[(&str, &str)],
        wait: DeviceWait,
        try_only: bool,
    ) -> Result<*mut sys::mrt_device> {
        let options = CStrings::options(options)?;
        let wait = wait.to_raw();
        let mut out = ptr::null_mut();
        let m = self.as_ptr();
        let code = unsafe {
            match (request, try_only) {
                (DeviceRequest::Ipus(n), false) => {
                    sys::mrt_device_manager_get_device(m, n, options.as_ptr(), &wait, false, &mut out)
                }
                (DeviceRequest::Ipus(n), true) => {
                    sys::mrt_device_manager_try_get_device(m, n, options.as_ptr(), &wait, false, &mut out)
                }
                (DeviceRequest::Id(id), false) => {
                    sys::mrt_device_manager_get_specific_device(m, id, options.as_ptr(), &wait, &mut out)
                }
                (DeviceRequest::Id(id), true) => {
                    sys::mrt_device_manager_try_get_specific_device(m, id, options.as_ptr(), &wait, &mut out)
                }
                (DeviceRequest::ForModel(model), false) => {
                    sys::mrt_device_manager_get_device_for_model(m, model.as_ptr(), &wait, &mut out)
                }
                (DeviceRequest::ForModel(model), true) => {
                    sys::mrt_device_manager_try_get_device_for_model(m, model.as_ptr(), &wait, &mut out)
                }
                (DeviceRequest::IdForModel(id, model), false) => {
                    sys::mrt_device_manager_get_specific_device_for_model(m, id, model.as_ptr(), &wait, &mut out)
                }
                (DeviceRequest::IdForModel(id, model), true) => {
                    sys::mrt_device_manager_try_get_specific_device_for_model(m, id, model.as_ptr(), &wait, &mut out)
                }
            }
        };
        check(code)?;
        Ok(out)
    }

    /// An IPU Model device outside the system's pool (never busy); tiles 0
    /// means the architecture's 1472.
    pub fn ipu_model_device(&self, num_ipus: i64, ipu_version: i64, tiles_per_ipu: i64) -> Result<Device> {
        let mut out = ptr::null_mut();
        check(unsafe {
            sys::mrt_device_manager_create_ipu_model_device(
                self.as_ptr(),
                num_ipus,
                ipu_version,
                tiles_per_ipu,
                &mut out,
            )
        })?;
        Ok(Device { raw: NonNull::new(out).expect("MRT_OK and a NULL device") })
    }

    /// An IPU Model device with the model's IPUs and IPU version.
    pub fn ipu_model_device_for_model(&self, model: &Model, tiles_per_ipu: i64) -> Result<Device> {
        let mut out = ptr::null_mut();
        check(unsafe {
            sys::mrt_device_manager_create_ipu_model_device_for_model(
                self.as_ptr(),
                model.as_ptr(),
                tiles_per_ipu,
                &mut out,
            )
        })?;
        Ok(Device { raw: NonNull::new(out).expect("MRT_OK and a NULL device") })
    }

    /// A small IPU Model device (4 tiles per IPU).
    pub fn small_ipu_model_device(&self, num_ipus: i64, ipu_version: i64) -> Result<Device> {
        let mut out = ptr::null_mut();
        check(unsafe {
            sys::mrt_device_manager_create_small_ipu_model_device(self.as_ptr(), num_ipus, ipu_version, &mut out)
        })?;
        Ok(Device { raw: NonNull::new(out).expect("MRT_OK and a NULL device") })
    }

    /// A small IPU Model device for the model.
    pub fn small_ipu_model_device_for_model(&self, model: &Model) -> Result<Device> {
        let mut out = ptr::null_mut();
        check(unsafe {
            sys::mrt_device_manager_create_small_ipu_model_device_for_model(self.as_ptr(), model.as_ptr(), &mut out)
        })?;
        Ok(Device { raw: NonNull::new(out).expect("MRT_OK and a NULL device") })
    }
}

impl Device {
    pub fn as_ptr(&self) -> *mut sys::mrt_device {
        self.raw.as_ptr()
    }

    pub fn ipu_version(&self) -> Result<i64> {
        let mut value = 0;
        check(unsafe { sys::mrt_device_ipu_version(self.as_ptr(), &mut value) })?;
        Ok(value)
    }

    /// The id in the system; -1 for an IPU Model device.
    pub fn id(&self) -> Result<i64> {
        let mut value = 0;
        check(unsafe { sys::mrt_device_id(self.as_ptr(), &mut value) })?;
        Ok(value)
    }

    pub fn num_ipus(&self) -> Result<i64> {
        let mut value = 0;
        check(unsafe { sys::mrt_device_num_ipus(self.as_ptr(), &mut value) })?;
        Ok(value)
    }
}

impl Drop for DeviceManager {
    fn drop(&mut self) {
        unsafe { sys::mrt_device_manager_destroy(self.raw.as_ptr()) }
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        unsafe { sys::mrt_device_destroy(self.raw.as_ptr()) }
    }
}

crate::ffi::debug_handle!(DeviceManager, Device);
