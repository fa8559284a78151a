"""DeviceManager and Device: listing, attaching, waiting, IPU Model devices."""
import threading
import time
import unittest

import libmrt
from support import MODEL, MrtTestCase, needs_model


class DeviceManagerTest(MrtTestCase):
    def setUp(self):
        self.manager = libmrt.DeviceManager()

    def tearDown(self):
        self.manager.close()

    def test_system_listing(self):
        devices = self.manager.devices()
        self.assertEqual(len(devices), self.manager.device_count())
        self.assertEqual(self.manager.ipu_hardware_version(), 2)
        self.assertEqual([d.id for d in devices], list(range(len(devices))))
        self.assertEqual((devices[0].num_ipus, devices[0].tiles_per_ipu, devices[0].target_name),
                         (1, 1472, "GC200"))

    def test_attaching_is_exclusive_until_closed(self):
        first = self.manager.get_specific_device(0)
        self.assertEqual((first.id, first.num_ipus, first.ipu_version), (0, 1, 2))
        self.assertFalse(self.manager.devices()[0].is_free)
        self.assertIsNone(self.manager.try_get_specific_device(0))
        error = self.assert_error(libmrt.UnavailableError, "",
                                  lambda: self.manager.get_specific_device(0))
        self.assertEqual(error.code, libmrt.Status.UNAVAILABLE)
        # Waiting: released by another thread while this one waits.
        threading.Timer(0.2, first.close).start()
        started = time.monotonic()
        again = self.manager.get_specific_device(0, wait=30, poll_interval=0.01)
        self.assertGreater(time.monotonic() - started, 0.1)
        self.assertEqual(again.id, 0)
        again.close()
        self.assert_error(libmrt.FailedPreconditionError, "Device is closed", lambda: again.id)

    def test_get_device_and_options(self):
        with self.manager.get_device(2, options={"ipuLinkDomainSize": 4}) as device:
            self.assertEqual(device.num_ipus, 2)
        with self.manager.try_get_device(1, wait=None, poll_interval=0.01) as device:
            self.assertEqual(device.num_ipus, 1)
        self.assert_error(libmrt.InvalidArgumentError, "nope",
                          lambda: self.manager.get_device(1, options={"nope": 1}))
        self.assert_error(libmrt.InvalidArgumentError, "",
                          lambda: self.manager.get_device(3))
        self.assert_error(libmrt.InvalidArgumentError, "wait: expected seconds >= 0 or None",
                          lambda: self.manager.get_device(1, wait=-1))
        self.assert_error(libmrt.NotFoundError, "", lambda: self.manager.get_specific_device(999))

    def test_ipu_model_devices(self):
        with self.manager.create_ipu_model_device(2, 21, 8) as device:
            self.assertEqual((device.id, device.num_ipus, device.ipu_version), (-1, 2, 21))
        with self.manager.create_small_ipu_model_device() as device:
            self.assertEqual(device.num_ipus, 1)
        self.assert_error(libmrt.InvalidArgumentError, "",
                          lambda: self.manager.create_ipu_model_device(1, 3))

    @needs_model
    def test_devices_for_a_model(self):
        with libmrt.Model(MODEL) as model:
            with self.manager.get_device_for_model(model) as device:
                self.assertEqual(device.num_ipus, 1)
                with self.manager.try_get_device_for_model(model) as other:
                    self.assertNotEqual(other.id, device.id)
            with self.manager.get_specific_device_for_model(1, model) as device:
                self.assertEqual(device.id, 1)
            with self.manager.try_get_specific_device_for_model(1, model) as device:
                self.assertEqual(device.id, 1)
            with self.manager.create_ipu_model_device_for_model(model) as device:
                self.assertEqual(device.id, -1)
            with self.manager.create_small_ipu_model_device_for_model(model) as device:
                self.assertEqual(device.ipu_version, 2)


if __name__ == "__main__":
    unittest.main()
