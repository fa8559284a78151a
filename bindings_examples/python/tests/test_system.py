"""The package itself: finding libmrt.so, versions, status codes and the
exception hierarchy, logging, the host memory limit."""
import importlib.metadata
import os
import subprocess
import sys
import unittest

import libmrt
from support import CallbackErrors, MrtTestCase


def run_python(code, **environment):
    """Runs code in a fresh interpreter with environment changes (a value of
    None removes the variable); returns the CompletedProcess."""
    env = dict(os.environ)
    for key, value in environment.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return subprocess.run([sys.executable, "-B", "-c", code], env=env, capture_output=True,
                          text=True, timeout=60)


class LibraryLoadingTest(unittest.TestCase):
    def test_mrt_library_names_the_library(self):
        path = libmrt._native.library._name
        done = run_python("import libmrt; print(libmrt._native.library._name)", MRT_LIBRARY=path)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout.strip(), path)

    def test_a_bad_mrt_library_is_a_clear_error(self):
        done = run_python("import libmrt", MRT_LIBRARY="/nonexistent/libmrt.so.0")
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("LibraryNotFoundError: libmrt: MRT_LIBRARY='/nonexistent/libmrt.so.0' "
                      "could not be loaded", done.stderr)

    def test_without_hints_the_install_prefix_or_a_clear_error(self):
        code = "import libmrt; print(libmrt._native.library._name)"
        done = run_python(code, MRT_LIBRARY=None, LD_LIBRARY_PATH=None)
        if libmrt._native._install_prefix_library() is not None:  # installed by cmake
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertEqual(done.stdout.strip(), libmrt._native._install_prefix_library())
        elif done.returncode != 0:  # unless the ld.so cache has a libmrt
            self.assertIn("libmrt.so not found. Set MRT_LIBRARY to its path", done.stderr)
            self.assertIn("MRT_LIBRARY: not set", done.stderr)
            self.assertIn("dynamic loader:", done.stderr)

    def test_the_package_under_test(self):
        # In ctest, the package pip installed, not the source tree's.
        expected = os.environ.get("LIBMRT_TEST_PACKAGE_UNDER")
        if expected:
            self.assertTrue(os.path.realpath(libmrt.__file__).startswith(os.path.realpath(expected)),
                            libmrt.__file__)

    def test_pip_sees_the_installed_package(self):
        # pip install and cmake --install both write the distribution's
        # metadata: importlib.metadata and `pip show` find it beside the package.
        expected = os.environ.get("LIBMRT_TEST_PACKAGE_UNDER")
        if not expected:
            self.skipTest("the package is not installed (the source tree's)")
        distribution = importlib.metadata.distribution("libmrt")
        self.assertEqual(distribution.version, libmrt.__version__)
        self.assertEqual(distribution.metadata["Name"], "libmrt")
        self.assertIn("numpy", distribution.requires)
        recorded = {str(path) for path in distribution.files}
        self.assertIn("libmrt/__init__.py", recorded)
        package_dir = os.path.dirname(os.path.realpath(libmrt.__file__))
        self.assertEqual(os.path.realpath(distribution.locate_file("libmrt/__init__.py")),
                         os.path.join(package_dir, "__init__.py"))
        shown = subprocess.run([sys.executable, "-m", "pip", "show", "libmrt"],
                               capture_output=True, text=True, check=False)
        self.assertEqual(shown.returncode, 0, shown.stderr)
        self.assertIn(f"Version: {libmrt.__version__}", shown.stdout)
        location = shown.stdout.split("Location: ", 1)[1].splitlines()[0]
        self.assertEqual(os.path.realpath(location), os.path.dirname(package_dir))


class StatusAndErrorsTest(MrtTestCase):
    def test_versions(self):
        self.assertRegex(libmrt.version(), r"^0\.\d+\.\d+$")
        self.assertEqual(".".join(map(str, libmrt.version_tuple())), libmrt.version())
        libmrt.check_version(0, 0)
        error = self.assert_error(libmrt.VersionMismatchError, "", lambda: libmrt.check_version(1, 0))
        self.assertEqual(error.code, libmrt.Status.VERSION_MISMATCH)

    def test_one_subclass_per_status(self):
        for status in libmrt.Status:
            if status == libmrt.Status.OK:
                continue
            error = libmrt.MrtError(status, "why")
            self.assertIsInstance(error, libmrt.MrtError)
            self.assertIsNot(type(error), libmrt.MrtError)
            self.assertEqual((error.code, error.status, error.message), (status, status, "why"))
            self.assertEqual(str(error), f"MRT_{status.name}: why")
            self.assertIs(type(libmrt.MrtError(int(status))), type(error))
            self.assertTrue(libmrt.status_string(status).startswith(f"MRT_{status.name}: "))
        self.assertIsInstance(libmrt.MrtError(2, "x"), libmrt.NotFoundError)
        self.assertIsInstance(libmrt.DeviceError(8, "x", 3), libmrt.MrtError)
        self.assertEqual(libmrt.MrtError(8, "x", 3).recovery_action, libmrt.RecoveryAction.FULL_RESET)
        unknown = libmrt.MrtError(99, "later")
        self.assertIs(type(unknown), libmrt.MrtError)
        self.assertEqual(str(unknown), "MRT_99: later")

    def test_errors_pickle_with_their_class(self):
        import pickle
        error = pickle.loads(pickle.dumps(libmrt.MrtError(8, "boom", 1)))
        self.assertIsInstance(error, libmrt.DeviceError)
        self.assertEqual((error.message, error.recovery_action), ("boom", libmrt.RecoveryAction.IPU_RESET))


class LoggingAndMemoryTest(MrtTestCase):
    def test_log_level_and_messages(self):
        saved = libmrt.get_log_level()
        messages = []
        try:
            libmrt.set_log_level(libmrt.LogLevel.ERR)
            self.assertEqual(libmrt.get_log_level(), libmrt.LogLevel.ERR)
            libmrt.set_log_callback(lambda level, message: messages.append((level, message)))
            libmrt.log_message(libmrt.LogLevel.WARN, "filtered out")
            libmrt.log_message(libmrt.LogLevel.ERR, "kept")
        finally:
            libmrt.set_log_callback(None)
            libmrt.set_log_level(saved)
        self.assertEqual([(level, "kept" in text) for level, text in messages],
                         [(libmrt.LogLevel.ERR, True)])
        self.assert_error(libmrt.InvalidArgumentError, "", lambda: libmrt.set_log_level(17))
        self.assert_error(libmrt.InvalidArgumentError, "",
                          lambda: libmrt.log_message(libmrt.LogLevel.OFF, "x"))

    def test_callback_error_hook_can_be_replaced_and_restored(self):
        with CallbackErrors() as collected:
            self.assertEqual(libmrt.get_callback_error_hook(), collected.record)
        self.assertNotEqual(libmrt.get_callback_error_hook(), collected.record)
        libmrt.set_callback_error_hook(None)  # the default
        self.assertEqual(libmrt.get_callback_error_hook().__name__, "_default_callback_error_hook")

    def test_host_memory_limit(self):
        saved = libmrt.host_memory_limit()
        try:
            libmrt.set_host_memory_limit(1 << 30)
            self.assertEqual(libmrt.host_memory_limit(), 1 << 30)
            self.assertGreaterEqual(libmrt.host_memory_reserved(), 0)
        finally:
            libmrt.set_host_memory_limit(0)
        self.assertEqual(libmrt.host_memory_limit(), saved)


if __name__ == "__main__":
    unittest.main()
