//! DeviceManager and devices of the simulated system (MRT_HWSIM_IPUS unset:
//! 4 IPUs of version 2).
mod common;

use common::device_wait;
use mrt::*;

#[test]
fn the_default_system_lists_its_devices() {
    let manager = DeviceManager::new().unwrap();
    assert_eq!(manager.ipu_hardware_version().unwrap(), 2);
    let devices = manager.devices().unwrap();
    let sizes: Vec<i64> = devices.iter().map(|d| d.num_ipus).collect();
    assert_eq!(sizes, vec![1, 1, 1, 1, 2, 2, 4]);
    assert!(devices.iter().enumerate().all(|(i, d)| d.id == i as i64 && !d.target_name.is_empty()));

    let device = manager.device(DeviceRequest::Ipus(2), &[("ipuLinkDomainSize", "4")], device_wait()).unwrap();
    assert_eq!((device.num_ipus().unwrap(), device.ipu_version().unwrap()), (2, 2));
    assert!(device.id().unwrap() == 4 || device.id().unwrap() == 5);
}

#[test]
fn ipu_model_devices_are_outside_the_pool() {
    let manager = DeviceManager::new().unwrap();
    let device = manager.ipu_model_device(2, 21, 0).unwrap();
    assert_eq!((device.id().unwrap(), device.num_ipus().unwrap(), device.ipu_version().unwrap()), (-1, 2, 21));
    let small = manager.small_ipu_model_device(1, 2).unwrap();
    assert_eq!(small.id().unwrap(), -1);
}

#[test]
fn bad_requests_name_the_bad_value() {
    let manager = DeviceManager::new().unwrap();
    let err = manager.device(DeviceRequest::Ipus(3), &[], DeviceWait::NoWait).expect_err("3 IPUs must fail");
    assert_eq!(err.status(), Status::InvalidArgument);
    assert!(err.message().contains('3'), "{err}");
    let err = manager.try_device(DeviceRequest::Id(99), &[], DeviceWait::NoWait).expect_err("id 99 must fail");
    assert_eq!(err.status(), Status::NotFound);
    let err = manager
        .device(DeviceRequest::Ipus(1), &[("noSuchOption", "1")], DeviceWait::NoWait)
        .expect_err("an unknown option must fail");
    assert_eq!(err.status(), Status::InvalidArgument);
    assert!(err.message().contains("noSuchOption"), "{err}");
    let err = manager.ipu_model_device(1, 3, 0).expect_err("IPU version 3 must fail");
    assert_eq!(err.status(), Status::InvalidArgument);
}
