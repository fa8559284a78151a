package mrt

/*
#include "mrt_c.h"
*/
import "C"

import (
	"context"
	"runtime"
	"sync"
	"time"
	"unsafe"
)

// DeviceManager is a view of the simulated IPU system (MRT_HWSIM_IPUS);
// any goroutine may use it. Devices do not need it: it may be closed first.
type DeviceManager struct {
	mu  sync.RWMutex
	ptr *C.mrt_device_manager
}

// NewDeviceManager reads the system from the environment.
func NewDeviceManager() (*DeviceManager, error) {
	var ptr *C.mrt_device_manager
	if err := call(func() C.mrt_status { return C.mrt_device_manager_create(&ptr) }); err != nil {
		return nil, err
	}
	m := &DeviceManager{ptr: ptr}
	runtime.SetFinalizer(m, (*DeviceManager).Close)
	return m, nil
}

// Close releases the manager. Idempotent.
func (m *DeviceManager) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ptr != nil {
		C.mrt_device_manager_destroy(m.ptr)
		m.ptr = nil
		runtime.SetFinalizer(m, nil)
	}
	return nil
}

func (m *DeviceManager) use(f func(*C.mrt_device_manager) error) error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.ptr == nil {
		return closedError("DeviceManager")
	}
	return f(m.ptr)
}

// IPUVersion is the system's IPU architecture version: 2, 21, or 0 without IPUs.
func (m *DeviceManager) IPUVersion() (version int64, err error) {
	err = m.use(func(p *C.mrt_device_manager) error {
		var v C.int64_t
		err := call(func() C.mrt_status { return C.mrt_device_manager_ipu_hardware_version(p, &v) })
		version = int64(v)
		return err
	})
	return version, err
}

// DeviceInfo describes one device of the system.
type DeviceInfo struct {
	ID          int64
	NumIPUs     int64
	IPUVersion  int64
	TilesPerIPU int64
	IsFree      bool // a snapshot: another process may attach it right after
	TargetName  string
}

// Devices lists every device of the system (index = id).
func (m *DeviceManager) Devices() (devices []DeviceInfo, err error) {
	err = m.use(func(p *C.mrt_device_manager) error {
		var count C.size_t
		if err := call(func() C.mrt_status { return C.mrt_device_manager_device_count(p, &count) }); err != nil {
			return err
		}
		for i := C.size_t(0); i < count; i++ {
			var c C.mrt_device_info
			c.struct_size = C.size_t(unsafe.Sizeof(c))
			if err := call(func() C.mrt_status { return C.mrt_device_manager_device_info(p, i, &c) }); err != nil {
				return err
			}
			devices = append(devices, DeviceInfo{int64(c.id), int64(c.num_ipus), int64(c.ipu_version),
				int64(c.tiles_per_ipu), bool(c.is_free), C.GoString(c.target_name)})
		}
		return nil
	})
	return devices, err
}

// DeviceRequest says which device to attach: the first free one of NumIPUs
// IPUs, device ID (when HasID), or one for Model (its IPUs, version and
// options). Options are device options ("ipuLinkDomainSize": "4").
type DeviceRequest struct {
	NumIPUs               int64
	ID                    int64
	HasID                 bool
	Model                 *Model
	Options               map[string]string
	RequiresRemoteBuffers bool
}

// devicePollInterval is how often GetDevice retries while ctx lets it wait.
const devicePollInterval = 5 * time.Millisecond

// GetDevice attaches the device the request names, retrying while every
// matching one is busy until ctx ends (context.Background: until one is
// free). A request the system can never satisfy fails at once with
// Unavailable; ctx ending with the error of the last attempt wrapping
// ctx.Err().
func (m *DeviceManager) GetDevice(ctx context.Context, request DeviceRequest) (*Device, error) {
	for {
		device, err := m.TryGetDevice(request)
		if device != nil || err != nil {
			return device, err
		}
		select {
		case <-ctx.Done():
			return nil, contextError(ctx, "no device of the request became free")
		case <-time.After(devicePollInterval):
		}
	}
}

// TryGetDevice attaches the device the request names if one is free now;
// nil, nil if none is.
func (m *DeviceManager) TryGetDevice(request DeviceRequest) (device *Device, err error) {
	options := newOptions(request.Options)
	defer options.free()
	err = m.use(func(p *C.mrt_device_manager) error {
		var ptr *C.mrt_device
		get := func() C.mrt_status {
			id := C.int64_t(request.ID)
			switch {
			case request.Model != nil && request.HasID:
				return C.mrt_device_manager_try_get_specific_device_for_model(p, id, request.Model.ptr, nil, &ptr)
			case request.Model != nil:
				return C.mrt_device_manager_try_get_device_for_model(p, request.Model.ptr, nil, &ptr)
			case request.HasID:
				return C.mrt_device_manager_try_get_specific_device(p, id, options.array, nil, &ptr)
			default:
				return C.mrt_device_manager_try_get_device(p, C.int64_t(request.NumIPUs), options.array, nil,
					C.bool(request.RequiresRemoteBuffers), &ptr)
			}
		}
		if request.Model != nil {
			return request.Model.use(func(*C.mrt_model) error {
				if err := call(get); err != nil {
					return err
				}
				device = newDevice(ptr)
				return nil
			})
		}
		if err := call(get); err != nil {
			return err
		}
		device = newDevice(ptr)
		return nil
	})
	return device, err
}

// IPUModelDevice is an IPU Model device: simulated IPUs outside the
// system's pool, never busy. tilesPerIPU 0 is the architecture's 1472;
// small selects the 4-tile device for small programs.
func (m *DeviceManager) IPUModelDevice(numIPUs, ipuVersion, tilesPerIPU int64, small bool) (device *Device, err error) {
	err = m.use(func(p *C.mrt_device_manager) error {
		var ptr *C.mrt_device
		err := call(func() C.mrt_status {
			if small {
				return C.mrt_device_manager_create_small_ipu_model_device(p, C.int64_t(numIPUs), C.int64_t(ipuVersion), &ptr)
			}
			return C.mrt_device_manager_create_ipu_model_device(p, C.int64_t(numIPUs), C.int64_t(ipuVersion),
				C.int64_t(tilesPerIPU), &ptr)
		})
		device = newDevice(ptr)
		return err
	})
	return device, err
}

// IPUModelDeviceForModel is an IPU Model device with the model's IPUs and
// version (small: 4 tiles per IPU).
func (m *DeviceManager) IPUModelDeviceForModel(model *Model, tilesPerIPU int64, small bool) (device *Device, err error) {
	err = m.use(func(p *C.mrt_device_manager) error {
		return model.use(func(mp *C.mrt_model) error {
			var ptr *C.mrt_device
			err := call(func() C.mrt_status {
				if small {
					return C.mrt_device_manager_create_small_ipu_model_device_for_model(p, mp, &ptr)
				}
				return C.mrt_device_manager_create_ipu_model_device_for_model(p, mp, C.int64_t(tilesPerIPU), &ptr)
			})
			device = newDevice(ptr)
			return err
		})
	})
	return device, err
}

// Device is one attached device: its IPUs are held until it is closed and
// nothing else (a session, an engine) uses it.
type Device struct {
	mu  sync.RWMutex
	ptr *C.mrt_device
}

func newDevice(ptr *C.mrt_device) *Device {
	if ptr == nil {
		return nil
	}
	d := &Device{ptr: ptr}
	runtime.SetFinalizer(d, (*Device).Close)
	return d
}

// Close releases the caller's reference. Idempotent.
func (d *Device) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ptr != nil {
		C.mrt_device_destroy(d.ptr)
		d.ptr = nil
		runtime.SetFinalizer(d, nil)
	}
	return nil
}

func (d *Device) use(f func(*C.mrt_device) error) error {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.ptr == nil {
		return closedError("Device")
	}
	return f(d.ptr)
}

func (d *Device) int64Field(get func(*C.mrt_device, *C.int64_t) C.mrt_status) (value int64, err error) {
	err = d.use(func(p *C.mrt_device) error {
		var v C.int64_t
		err := call(func() C.mrt_status { return get(p, &v) })
		value = int64(v)
		return err
	})
	return value, err
}

// ID is the device's id in the system, -1 for an IPU Model device.
func (d *Device) ID() (int64, error) {
	return d.int64Field(func(p *C.mrt_device, v *C.int64_t) C.mrt_status { return C.mrt_device_id(p, v) })
}

// NumIPUs is the device's number of IPUs.
func (d *Device) NumIPUs() (int64, error) {
	return d.int64Field(func(p *C.mrt_device, v *C.int64_t) C.mrt_status { return C.mrt_device_num_ipus(p, v) })
}

// IPUVersion is the device's IPU architecture version: 2 or 21.
func (d *Device) IPUVersion() (int64, error) {
	return d.int64Field(func(p *C.mrt_device, v *C.int64_t) C.mrt_status { return C.mrt_device_ipu_version(p, v) })
}
