"""Loading libmrt.so and declaring the C functions (mrt_c.h).

The library is looked for, in this order:
1. the path in the environment variable MRT_LIBRARY;
2. the install prefix this package was installed into by `cmake --install`
   (the generated _install_location.py names the library directory
   relative to the package);
3. libmrt.so.0 through the dynamic loader (LD_LIBRARY_PATH, the ld.so cache);
4. ctypes.util.find_library("mrt").
The first that loads wins; if none does, importing libmrt raises
LibraryNotFoundError listing what was tried and why each failed.

`C` holds every function of the header with its argument and result
types, except the V1 mrt_X_init (init_sized is used), the message copy
(ctypes copies the message) and mrt_future_wait (see Futures). Functions
returning mrt_status raise the status's MrtError on failure, with the
thread's mrt_last_error_message() and recovery action, read right after
the call on the same thread.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import types

from . import _structs as s
from .errors import LibraryNotFoundError, MrtError

_SONAME = "libmrt.so.0"


def _install_prefix_library() -> str | None:
    try:
        from ._install_location import LIBRARY_DIR_FROM_PACKAGE
    except ImportError:  # not installed by cmake (pip, or the source tree)
        return None
    package_dir = os.path.dirname(os.path.abspath(__file__))
    return os.path.normpath(os.path.join(package_dir, LIBRARY_DIR_FROM_PACKAGE, _SONAME))


def _candidates() -> list[tuple[str, str | None]]:
    found = ctypes.util.find_library("mrt")
    return [("MRT_LIBRARY", os.environ.get("MRT_LIBRARY") or None),
            ("install prefix", _install_prefix_library()),
            ("dynamic loader", _SONAME),
            ("ctypes.util.find_library", found)]


def load_library() -> ctypes.CDLL:
    """The first candidate that loads (see the module docstring)."""
    tried = []
    for where, path in _candidates():
        if path is None:
            tried.append(f"{where}: not set" if where == "MRT_LIBRARY" else f"{where}: none")
            continue
        if where == "install prefix" and not os.path.exists(path):
            tried.append(f"{where}: {path} does not exist")
            continue
        try:
            return ctypes.CDLL(path)
        except OSError as error:
            if where == "MRT_LIBRARY":
                # An explicit choice that fails is an error, not a fallback.
                raise LibraryNotFoundError(
                    f"libmrt: MRT_LIBRARY={path!r} could not be loaded: {error}") from None
            tried.append(f"{where}: {error}")
    raise LibraryNotFoundError(
        "libmrt: libmrt.so not found. Set MRT_LIBRARY to its path, or add its directory to "
        "LD_LIBRARY_PATH. Tried: " + "; ".join(tried))


library = load_library()


def _raise_on_error(status, function, arguments):
    # errcheck runs right after the call on the same thread, so the
    # thread-local message and recovery action are this call's.
    if status != 0:
        message = library.mrt_last_error_message().decode("utf-8", "replace")
        raise MrtError(status, message, library.mrt_last_error_recovery_action())
    return status


CHECKED = object()  # marks functions whose mrt_status result is raised on failure

P = s.P
OPTS = P(s.c_str)          # NULL-terminated key/value string arrays
U64S = P(s.c_u64)
I64S = P(s.c_i64)
ptr, size, u32, i32, u64, i64, boolean = s.c_ptr, s.c_size, s.c_u32, s.c_i32, s.c_u64, s.c_i64, s.c_bool
text = s.c_str
DESCS = P(P(s.DataDesc))

_DECLARATIONS = [
    # Status, versions, host memory, logging.
    ("mrt_status_string", text, [i32]),
    ("mrt_last_error_message", text, []),
    ("mrt_last_error_recovery_action", i32, []),
    ("mrt_version_string", text, []),
    ("mrt_version", None, [P(ctypes.c_int), P(ctypes.c_int), P(ctypes.c_int)]),
    ("mrt_check_version", CHECKED, [ctypes.c_int, ctypes.c_int]),
    ("mrt_set_host_memory_limit", None, [u64]),
    ("mrt_host_memory_limit", u64, []),
    ("mrt_host_memory_reserved", u64, []),
    ("mrt_set_log_level", CHECKED, [i32]),
    ("mrt_get_log_level", ctypes.c_int, []),
    ("mrt_set_log_callback", CHECKED, [s.LOG_FN, ptr, s.FREE_FN]),
    ("mrt_log_message", CHECKED, [i32, text]),
    # Models.
    ("mrt_model_load", CHECKED, [P(text), size, P(ptr)]),
    ("mrt_model_load_named", CHECKED, [P(text), size, text, P(ptr)]),
    ("mrt_model_with_engine_options", CHECKED, [ptr, OPTS, P(ptr)]),
    ("mrt_model_destroy", None, [ptr]),
    ("mrt_model_tensor_data", CHECKED, [ptr, text, P(ptr), P(u64)]),
    ("mrt_model_feed_data", CHECKED, [ptr, text, P(ptr), P(u64), P(u64)]),
    ("mrt_model_executable", CHECKED, [ptr, P(ptr), P(u64)]),
    ("mrt_model_get_info", CHECKED, [ptr, P(s.ModelInfo)]),
    ("mrt_model_option", CHECKED, [ptr, i32, size, P(text), P(text)]),
    ("mrt_model_anchor", CHECKED, [ptr, size, P(s.AnchorInfo)]),
    ("mrt_model_anchor_by_name", CHECKED, [ptr, text, P(s.AnchorInfo)]),
    ("mrt_model_anchor_by_handle", CHECKED, [ptr, text, P(s.AnchorInfo)]),
    ("mrt_model_program_flow", CHECKED, [ptr, i32, P(U64S), P(size)]),
    ("mrt_model_program", CHECKED, [ptr, size, P(u64), P(text)]),
    ("mrt_model_batching_dim", CHECKED, [ptr, P(u32)]),
    # Inspecting PopEF files.
    ("mrt_popef_listing_create", CHECKED, [P(text), size, text, P(ptr)]),
    ("mrt_popef_listing_destroy", None, [ptr]),
    ("mrt_popef_listing_error", CHECKED, [ptr, P(i32), P(text)]),
    ("mrt_popef_listing_file", CHECKED, [ptr, size, P(text), P(u64), P(size)]),
    ("mrt_popef_listing_blob", CHECKED, [ptr, size, size, P(s.BlobInfo)]),
    ("mrt_popef_listing_num_models", CHECKED, [ptr, P(size)]),
    ("mrt_popef_listing_model", CHECKED, [ptr, size, P(ptr)]),
    ("mrt_blob_type_name", text, [i32]),
    # Devices.
    ("mrt_device_wait_config_init_sized", CHECKED, [P(s.DeviceWaitConfig), size]),
    ("mrt_device_manager_create", CHECKED, [P(ptr)]),
    ("mrt_device_manager_destroy", None, [ptr]),
    ("mrt_device_manager_ipu_hardware_version", CHECKED, [ptr, P(i64)]),
    ("mrt_device_manager_device_count", CHECKED, [ptr, P(size)]),
    ("mrt_device_manager_device_info", CHECKED, [ptr, size, P(s.DeviceInfo)]),
    ("mrt_device_manager_get_device", CHECKED,
     [ptr, i64, OPTS, P(s.DeviceWaitConfig), boolean, P(ptr)]),
    ("mrt_device_manager_try_get_device", CHECKED,
     [ptr, i64, OPTS, P(s.DeviceWaitConfig), boolean, P(ptr)]),
    ("mrt_device_manager_get_device_for_model", CHECKED, [ptr, ptr, P(s.DeviceWaitConfig), P(ptr)]),
    ("mrt_device_manager_try_get_device_for_model", CHECKED,
     [ptr, ptr, P(s.DeviceWaitConfig), P(ptr)]),
    ("mrt_device_manager_get_specific_device", CHECKED,
     [ptr, i64, OPTS, P(s.DeviceWaitConfig), P(ptr)]),
    ("mrt_device_manager_try_get_specific_device", CHECKED,
     [ptr, i64, OPTS, P(s.DeviceWaitConfig), P(ptr)]),
    ("mrt_device_manager_get_specific_device_for_model", CHECKED,
     [ptr, i64, ptr, P(s.DeviceWaitConfig), P(ptr)]),
    ("mrt_device_manager_try_get_specific_device_for_model", CHECKED,
     [ptr, i64, ptr, P(s.DeviceWaitConfig), P(ptr)]),
    ("mrt_device_manager_create_ipu_model_device", CHECKED, [ptr, i64, i64, i64, P(ptr)]),
    ("mrt_device_manager_create_ipu_model_device_for_model", CHECKED, [ptr, ptr, i64, P(ptr)]),
    ("mrt_device_manager_create_small_ipu_model_device", CHECKED, [ptr, i64, i64, P(ptr)]),
    ("mrt_device_manager_create_small_ipu_model_device_for_model", CHECKED, [ptr, ptr, P(ptr)]),
    ("mrt_device_destroy", None, [ptr]),
    ("mrt_device_ipu_version", CHECKED, [ptr, P(i64)]),
    ("mrt_device_id", CHECKED, [ptr, P(i64)]),
    ("mrt_device_num_ipus", CHECKED, [ptr, P(i64)]),
    # Sessions and anchor predicates.
    ("mrt_anchor_predicate_create", CHECKED, [i32, i32, ptr, U64S, size, i32, i32, P(ptr)]),
    ("mrt_anchor_predicate_create_program_policies", CHECKED,
     [i32, P(s.ProgramsWithPolicy), size, i32, P(ptr)]),
    ("mrt_anchor_predicate_create_anchor_policies", CHECKED,
     [i32, P(s.AnchorWithPolicy), size, i32, P(ptr)]),
    ("mrt_anchor_predicate_create_user", CHECKED, [i32, s.ANCHOR_PREDICATE_FN, ptr, s.FREE_FN, P(ptr)]),
    ("mrt_anchor_predicate_and", CHECKED, [i32, i32, i32, P(ptr), size, P(ptr)]),
    ("mrt_anchor_predicate_or", CHECKED, [i32, i32, i32, P(ptr), size, P(ptr)]),
    ("mrt_anchor_predicate_evaluate", CHECKED, [ptr, ptr, text, P(i32)]),
    ("mrt_anchor_predicate_destroy", None, [ptr]),
    ("mrt_session_config_init_sized", CHECKED, [P(s.SessionConfig), size]),
    ("mrt_session_create", CHECKED, [ptr, P(s.SessionConfig), P(ptr)]),
    ("mrt_session_create_from_files", CHECKED, [P(text), size, P(s.SessionConfig), P(ptr)]),
    ("mrt_session_destroy", None, [ptr]),
    ("mrt_session_model", CHECKED, [ptr, P(ptr)]),
    ("mrt_session_bind_to_device", CHECKED, [ptr, ptr]),
    ("mrt_session_unload_from_device", CHECKED, [ptr]),
    ("mrt_session_reload", CHECKED, [ptr]),
    ("mrt_session_run_load_programs", CHECKED, [ptr]),
    ("mrt_session_run_main_programs", CHECKED, [ptr]),
    ("mrt_session_run_save_programs", CHECKED, [ptr]),
    ("mrt_session_run_programs", CHECKED, [ptr, U64S, size]),
    ("mrt_session_set_callback_for_anchor", CHECKED, [ptr, text, s.ANCHOR_CALLBACK_FN, ptr, s.FREE_FN]),
    ("mrt_session_set_replica_callback_for_anchor", CHECKED,
     [ptr, text, u32, s.ANCHOR_CALLBACK_FN, ptr, s.FREE_FN]),
    ("mrt_session_num_replicas", CHECKED, [ptr, P(u32)]),
    ("mrt_session_run_main_programs_for_replica", CHECKED, [ptr, u32]),
    ("mrt_session_set_remote_buffer_data", CHECKED, [ptr, text, ptr, u64]),
    ("mrt_session_set_user_input_handler", CHECKED,
     [ptr, s.CALLBACK_FACTORY_FN, ptr, s.FREE_FN, ptr, boolean]),
    ("mrt_session_set_user_output_handler", CHECKED,
     [ptr, s.CALLBACK_FACTORY_FN, ptr, s.FREE_FN, ptr, boolean]),
    ("mrt_session_anchor_count", CHECKED, [ptr, i32, P(size)]),
    ("mrt_session_anchor", CHECKED, [ptr, i32, size, P(s.AnchorInfo)]),
    ("mrt_session_anchors_not_connected", CHECKED,
     [ptr, U64S, size, s.UNBOUND_ANCHOR_FN, ptr, P(size)]),
    ("mrt_session_error_if_anchors_not_connected", CHECKED, [ptr, U64S, size]),
    ("mrt_session_stop", CHECKED, [ptr]),
    ("mrt_session_is_stopped", CHECKED, [ptr, P(boolean)]),
    ("mrt_session_insert_simulated_error", CHECKED, [ptr, i32, u32, u32]),
    ("mrt_session_erase_simulated_error", CHECKED, [ptr, u32, u32]),
    ("mrt_session_clear_simulated_errors", CHECKED, [ptr]),
    ("mrt_session_device_cycles", CHECKED, [ptr, u32, P(u64), P(ctypes.c_double)]),
    # Queues.
    ("mrt_queue_manager_config_init_sized", CHECKED, [P(s.QueueManagerConfig), size]),
    ("mrt_queue_manager_create", CHECKED, [ptr, P(s.QueueManagerConfig), P(ptr)]),
    ("mrt_session_create_queue_manager", CHECKED, [ptr, P(s.QueueManagerConfig), P(ptr)]),
    ("mrt_session_create_queue_manager_for_replica", CHECKED,
     [ptr, u32, P(s.QueueManagerConfig), P(ptr)]),
    ("mrt_queue_manager_destroy", None, [ptr]),
    ("mrt_queue_manager_input_queue", CHECKED, [ptr, text, P(ptr)]),
    ("mrt_queue_manager_output_queue", CHECKED, [ptr, text, P(ptr)]),
    ("mrt_queue_manager_num_inputs", CHECKED, [ptr, P(size)]),
    ("mrt_queue_manager_num_outputs", CHECKED, [ptr, P(size)]),
    ("mrt_queue_manager_input_name", CHECKED, [ptr, size, P(text)]),
    ("mrt_queue_manager_output_name", CHECKED, [ptr, size, P(text)]),
    ("mrt_queue_manager_flush_all", CHECKED, [ptr]),
    ("mrt_queue_manager_disconnect_all", CHECKED, [ptr]),
    ("mrt_queue_manager_reset_all", CHECKED, [ptr]),
    ("mrt_queue_manager_transfer", CHECKED, [ptr, text, ptr]),
    ("mrt_input_queue_enqueue", CHECKED,
     [ptr, ptr, i64, s.QUEUE_DATA_FN, s.QUEUE_DATA_FN, ptr, s.FREE_FN]),
    ("mrt_input_queue_flush", CHECKED, [ptr]),
    ("mrt_input_queue_reset", CHECKED, [ptr]),
    ("mrt_input_queue_disconnect", CHECKED, [ptr]),
    ("mrt_output_queue_enqueue", CHECKED, [ptr, ptr, i64, s.QUEUE_DATA_FN, ptr, s.FREE_FN]),
    ("mrt_output_queue_flush", CHECKED, [ptr]),
    ("mrt_output_queue_reset", CHECKED, [ptr]),
    ("mrt_output_queue_disconnect", CHECKED, [ptr]),
    ("mrt_input_queue_enqueue_lock", CHECKED, [ptr, P(P(s.InputQueueEntry))]),
    ("mrt_input_queue_enqueue_complete", CHECKED, [ptr]),
    ("mrt_output_queue_enqueue_lock", CHECKED, [ptr, P(P(s.OutputQueueEntry))]),
    ("mrt_output_queue_enqueue_complete", CHECKED, [ptr]),
    ("mrt_queue_info_init_sized", CHECKED, [P(s.QueueInfo), size]),
    ("mrt_input_queue_info", CHECKED, [ptr, P(s.QueueInfo)]),
    ("mrt_output_queue_info", CHECKED, [ptr, P(s.QueueInfo)]),
    # Futures.
    # Futures complete through mrt_future_on_ready (a concurrent.futures
    # Future), which makes mrt_future_wait redundant; _is_ready and _status
    # give the library's own view (Future.is_ready, Future.status).
    ("mrt_future_is_ready", boolean, [ptr]),
    ("mrt_future_status", CHECKED, [ptr, P(i32)]),
    ("mrt_future_error_message", text, [ptr]),
    ("mrt_future_recovery_action", i32, [ptr]),
    ("mrt_future_on_ready", CHECKED, [ptr, s.READY_FN, ptr, s.FREE_FN]),
    ("mrt_future_destroy", None, [ptr]),
    # Model runner.
    ("mrt_model_runner_config_init_sized", CHECKED, [P(s.RunnerConfig), size]),
    ("mrt_model_runner_create", CHECKED, [ptr, P(s.RunnerConfig), P(ptr)]),
    ("mrt_model_runner_create_from_files", CHECKED, [P(text), size, P(s.RunnerConfig), P(ptr)]),
    ("mrt_model_runner_destroy", None, [ptr]),
    ("mrt_flush_selection_add", CHECKED, [ptr, i32, text]),
    ("mrt_model_runner_execute_inputs", CHECKED, [ptr, DESCS, P(size)]),
    ("mrt_model_runner_execute_outputs", CHECKED, [ptr, DESCS, P(size)]),
    ("mrt_model_runner_model_inputs", CHECKED, [ptr, DESCS, P(size)]),
    ("mrt_model_runner_model_outputs", CHECKED, [ptr, DESCS, P(size)]),
    ("mrt_model_runner_execute", CHECKED, [ptr, P(s.TensorView), size, P(s.TensorView), size, u32]),
    ("mrt_model_runner_execute_async", CHECKED,
     [ptr, P(s.TensorView), size, P(s.TensorView), size, u32, P(ptr)]),
    ("mrt_model_runner_execute_alloc", CHECKED, [ptr, P(s.TensorView), size, u32, P(ptr)]),
    ("mrt_model_runner_execute_async_alloc", CHECKED,
     [ptr, P(s.TensorView), size, u32, P(ptr), P(ptr)]),
    ("mrt_tensor_memory_count", CHECKED, [ptr, P(size)]),
    ("mrt_tensor_memory_get", CHECKED, [ptr, size, P(s.TensorView)]),
    ("mrt_tensor_memory_find", CHECKED, [ptr, text, P(s.TensorView)]),
    ("mrt_tensor_memory_destroy", None, [ptr]),
    ("mrt_model_runner_time_trace", CHECKED, [ptr, u32, i32, P(s.RequestTimes)]),
    ("mrt_model_runner_statistics_percentile", CHECKED, [ptr, ctypes.c_double, u32, P(s.RequestTimes)]),
    ("mrt_model_runner_statistics_mean", CHECKED, [ptr, u32, P(s.RequestTimes)]),
    ("mrt_model_runner_statistics_count", CHECKED, [ptr, u32, P(s.RequestTimes)]),
    ("mrt_model_runner_model", CHECKED, [ptr, P(ptr)]),
    ("mrt_model_runner_device_cycles", CHECKED, [ptr, u32, P(u64), P(ctypes.c_double)]),
    ("mrt_model_runner_num_replicas", CHECKED, [ptr, P(u32)]),
    ("mrt_model_runner_get_config", CHECKED, [ptr, P(s.RunnerConfig)]),
    ("mrt_model_runner_insert_simulated_error", CHECKED, [ptr, i32, text, u32]),
    # Targets and graphs.
    ("mrt_target_init_sized", CHECKED, [text, u32, P(s.Target), size]),
    ("mrt_graph_create", CHECKED, [P(s.Target), u32, P(ptr)]),
    ("mrt_graph_destroy", None, [ptr]),
    ("mrt_graph_get_target", CHECKED, [ptr, P(s.Target)]),
    ("mrt_graph_replication_factor", CHECKED, [ptr, P(u32)]),
    ("mrt_graph_add_variable", CHECKED, [ptr, i32, U64S, size, text, P(u64)]),
    ("mrt_graph_add_constant", CHECKED, [ptr, i32, U64S, size, ptr, u64, text, P(u64)]),
    ("mrt_graph_add_constant_filled", CHECKED, [ptr, i32, U64S, size, ctypes.c_double, text, P(u64)]),
    ("mrt_graph_tensor_info", CHECKED, [ptr, u64, P(s.TensorInfo)]),
    ("mrt_graph_slice", CHECKED, [ptr, u64, u64, u64, u32, P(u64)]),
    ("mrt_graph_index", CHECKED, [ptr, u64, u64, P(u64)]),
    ("mrt_graph_reshape", CHECKED, [ptr, u64, U64S, size, P(u64)]),
    ("mrt_graph_flatten", CHECKED, [ptr, u64, P(u64)]),
    ("mrt_graph_transpose", CHECKED, [ptr, u64, P(u64)]),
    ("mrt_graph_concat", CHECKED, [ptr, U64S, size, u32, P(u64)]),
    ("mrt_graph_set_tile_mapping", CHECKED, [ptr, u64, u32]),
    ("mrt_graph_map_linearly", CHECKED, [ptr, u64, u64, u32, u32]),
    ("mrt_graph_tile_mapping", CHECKED, [ptr, u64, P(s.TileInterval), size, P(size)]),
    ("mrt_graph_add_compute_set", CHECKED, [ptr, text, P(u64)]),
    ("mrt_graph_add_vertex", CHECKED, [ptr, u64, text, u32, P(u64)]),
    ("mrt_graph_connect", CHECKED, [ptr, u64, text, u64]),
    ("mrt_graph_set_vertex_attribute", CHECKED, [ptr, u64, text, P(ctypes.c_double), size]),
    ("mrt_codelet_count", size, []),
    ("mrt_codelet_get_info", CHECKED, [size, P(s.CodeletInfo)]),
    ("mrt_codelet_field", CHECKED, [size, size, P(text), P(i32)]),
    ("mrt_codelet_attribute", CHECKED, [size, size, P(text), P(P(ctypes.c_double)), P(size)]),
    ("mrt_graph_add_host_to_device_fifo", CHECKED, [ptr, text, i32, u64, P(u64)]),
    ("mrt_graph_add_device_to_host_fifo", CHECKED, [ptr, text, i32, u64, P(u64)]),
    ("mrt_graph_create_host_write", CHECKED, [ptr, text, u64]),
    ("mrt_graph_create_host_read", CHECKED, [ptr, text, u64]),
    ("mrt_graph_add_remote_buffer", CHECKED, [ptr, text, i32, u64, u64, P(u64)]),
    ("mrt_graph_add_function", CHECKED, [ptr, u64, P(u64)]),
    # Programs.
    ("mrt_program_sequence", CHECKED, [ptr, U64S, size, text, P(u64)]),
    ("mrt_program_sequence_add", CHECKED, [ptr, u64, u64]),
    ("mrt_program_execute", CHECKED, [ptr, u64, text, P(u64)]),
    ("mrt_program_copy", CHECKED, [ptr, u64, u64, text, P(u64)]),
    ("mrt_program_copy_from_stream", CHECKED, [ptr, u64, u64, text, P(u64)]),
    ("mrt_program_copy_to_stream", CHECKED, [ptr, u64, u64, text, P(u64)]),
    ("mrt_program_copy_from_remote_buffer", CHECKED, [ptr, u64, u64, u64, u64, text, P(u64)]),
    ("mrt_program_copy_to_remote_buffer", CHECKED, [ptr, u64, u64, u64, u64, text, P(u64)]),
    ("mrt_program_repeat", CHECKED, [ptr, u64, u64, text, P(u64)]),
    ("mrt_program_repeat_while", CHECKED, [ptr, u64, u64, u64, boolean, text, P(u64)]),
    ("mrt_program_if", CHECKED, [ptr, u64, u64, u64, text, P(u64)]),
    ("mrt_program_switch", CHECKED, [ptr, u64, u64, text, P(u64)]),
    ("mrt_program_switch_add_case", CHECKED, [ptr, u64, i32, u64]),
    ("mrt_program_sync", CHECKED, [ptr, i32, text, P(u64)]),
    ("mrt_program_call", CHECKED, [ptr, u64, text, P(u64)]),
    ("mrt_program_write_undef", CHECKED, [ptr, u64, text, P(u64)]),
    ("mrt_program_print_tensor", CHECKED, [ptr, text, u64, P(u64)]),
    # Ops.
    ("mrt_ops_create_tensor", CHECKED, [ptr, i32, U64S, size, text, u32, u32, P(u64)]),
    ("mrt_ops_unary", CHECKED, [ptr, u64, text, u64, i32, text, P(u64)]),
    ("mrt_ops_binary", CHECKED, [ptr, u64, text, u64, u64, text, P(u64)]),
    ("mrt_ops_binary_in_place", CHECKED, [ptr, u64, text, u64, u64]),
    ("mrt_ops_fill", CHECKED, [ptr, u64, u64, ctypes.c_double]),
    ("mrt_ops_matmul", CHECKED, [ptr, u64, u64, u64, i32, text, u32, u32, P(u64)]),
    ("mrt_ops_matmul_preloaded_rhs", CHECKED, [ptr, u64, u64, u64, u64, i32, text, u32, u32, P(u64)]),
    ("mrt_ops_create_matmul_input", CHECKED, [ptr, i32, i32, U64S, U64S, text, u32, u32, P(u64)]),
    ("mrt_ops_reduce", CHECKED, [ptr, u64, text, u64, U64S, size, text, u32, u32, P(u64)]),
    ("mrt_ops_softmax", CHECKED, [ptr, u64, u64, text, u32, u32, P(u64)]),
    ("mrt_ops_argmax", CHECKED, [ptr, u64, u64, text, u32, u32, P(u64)]),
    # Compiling, executables.
    ("mrt_graph_compile", CHECKED, [ptr, U64S, size, OPTS, s.PROGRESS_FN, ptr, s.FREE_FN, P(ptr)]),
    ("mrt_executable_destroy", None, [ptr]),
    ("mrt_executable_serialize", CHECKED, [ptr, P(ptr), P(u64)]),
    ("mrt_executable_deserialize", CHECKED, [ptr, u64, P(ptr)]),
    ("mrt_model_get_executable", CHECKED, [ptr, P(ptr)]),
    ("mrt_executable_get_info", CHECKED, [ptr, P(s.ExecutableInfo)]),
    ("mrt_executable_get_target", CHECKED, [ptr, P(s.Target)]),
    ("mrt_executable_memory_per_tile", CHECKED, [ptr, P(U64S), P(size)]),
    ("mrt_executable_step", CHECKED, [ptr, size, P(s.StepInfo)]),
    ("mrt_executable_program_name", CHECKED, [ptr, u32, P(text)]),
    ("mrt_executable_pipeline", CHECKED, [ptr, u32, P(s.PipelineInfo)]),
    ("mrt_executable_handle", CHECKED, [ptr, i32, size, P(s.HandleInfo)]),
    # Engines.
    ("mrt_engine_create", CHECKED, [ptr, OPTS, P(ptr)]),
    ("mrt_engine_destroy", None, [ptr]),
    ("mrt_engine_load", CHECKED, [ptr, ptr]),
    ("mrt_engine_run", CHECKED, [ptr, u32]),
    ("mrt_engine_run_replica", CHECKED, [ptr, u32, u32]),
    ("mrt_engine_stop", CHECKED, [ptr]),
    ("mrt_engine_connect_stream", CHECKED, [ptr, text, u32, s.STREAM_FN, ptr, s.FREE_FN]),
    ("mrt_engine_connect_stream_to_buffer", CHECKED, [ptr, text, u32, ptr, u64]),
    ("mrt_engine_write_tensor", CHECKED, [ptr, text, ptr, u64, u32]),
    ("mrt_engine_read_tensor", CHECKED, [ptr, text, ptr, u64, u32]),
    ("mrt_engine_copy_to_remote_buffer", CHECKED, [ptr, text, ptr, u64, u64, u32]),
    ("mrt_engine_copy_from_remote_buffer", CHECKED, [ptr, text, ptr, u64, u64, u32]),
    ("mrt_engine_set_print_callback", CHECKED, [ptr, s.PRINT_FN, ptr, s.FREE_FN]),
    ("mrt_engine_device_cycles", CHECKED, [ptr, u32, P(u64)]),
    ("mrt_engine_insert_simulated_error", CHECKED, [ptr, i32, u32, u32]),
    ("mrt_engine_erase_simulated_error", CHECKED, [ptr, u32, u32]),
    ("mrt_engine_clear_simulated_errors", CHECKED, [ptr]),
    ("mrt_engine_set_profiling", CHECKED, [ptr, boolean]),
    ("mrt_engine_write_profile", CHECKED, [ptr, i32, text]),
    ("mrt_engine_profile_text", CHECKED, [ptr, i32, ctypes.c_char_p, size, P(size)]),
    # Writing models.
    ("mrt_model_builder_create", CHECKED, [text, ptr, P(ptr)]),
    ("mrt_model_builder_destroy", None, [ptr]),
    ("mrt_model_builder_set_inference", CHECKED, [ptr, boolean]),
    ("mrt_model_builder_set_option", CHECKED, [ptr, i32, text, text]),
    ("mrt_model_builder_set_seed_handle", CHECKED, [ptr, text]),
    ("mrt_model_builder_set_program_name", CHECKED, [ptr, u64, text]),
    ("mrt_model_builder_set_program_flow", CHECKED, [ptr, i32, U64S, size]),
    ("mrt_anchor_config_init_sized", CHECKED, [P(s.AnchorConfig), size]),
    ("mrt_model_builder_add_anchor", CHECKED, [ptr, P(s.AnchorConfig)]),
    ("mrt_model_builder_add_tensor_data", CHECKED, [ptr, text, i32, I64S, size, ptr, u64]),
    ("mrt_model_builder_add_feed_data", CHECKED, [ptr, text, i32, I64S, size, ptr, u64, u64]),
    ("mrt_model_builder_build", CHECKED, [ptr, P(ptr)]),
    ("mrt_model_write", CHECKED, [ptr, text]),
    ("mrt_model_write_split", CHECKED, [ptr, text, text]),
    ("mrt_model_write_to_memory", CHECKED, [ptr, ptr, size, P(size)]),
    ("mrt_model_load_from_memory", CHECKED, [ptr, size, P(ptr)]),
    ("mrt_model_fuse", CHECKED, [P(ptr), size, text]),
    # Importing ONNX models.
    ("mrt_onnx_options_init_sized", CHECKED, [P(s.OnnxOptions), size]),
    ("mrt_onnx_compile_file", CHECKED, [text, P(s.OnnxOptions), P(ptr)]),
    ("mrt_onnx_compile_memory", CHECKED, [ptr, size, P(s.OnnxOptions), P(ptr)]),
    ("mrt_onnx_read_tensor_file", CHECKED, [text, i32, ptr, u64]),
]


def _declare(name, restype, argtypes):
    function = getattr(library, name)
    function.argtypes = argtypes
    if restype is CHECKED:
        function.restype = i32
        function.errcheck = _raise_on_error
    else:
        function.restype = restype
    return function


C = types.SimpleNamespace(**{name: _declare(name, restype, argtypes)
                             for name, restype, argtypes in _DECLARATIONS})

# This package is written against mrt_c.h 0.1.
C.mrt_check_version(0, 1)


def out_value(function, *arguments, out_type=ptr):
    """Calls function(*arguments, &out) and returns out's value (for the
    many calls whose last parameter is an `out` pointer or id)."""
    out = out_type()
    function(*arguments, ctypes.byref(out))
    return out.value
