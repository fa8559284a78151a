"""ctypes mirrors of the structs and callback types of mrt_c.h.

Field order and types follow the header exactly. Sized structs (those that
start with struct_size) are filled through the library's mrt_X_init_sized
or with struct_size = sizeof, so a library of another version never reads
or writes beyond what this module declares (mrt_c.h, "Sized structs").
"""
from __future__ import annotations

import ctypes

c_size = ctypes.c_size_t
c_ptr = ctypes.c_void_p
c_str = ctypes.c_char_p
c_bool = ctypes.c_bool
c_i32 = ctypes.c_int32
c_u32 = ctypes.c_uint32
c_i64 = ctypes.c_int64
c_u64 = ctypes.c_uint64
c_double = ctypes.c_double
P = ctypes.POINTER

# ---- callback types ----
LOG_FN = ctypes.CFUNCTYPE(None, ctypes.c_int, c_str, c_ptr)
FREE_FN = ctypes.CFUNCTYPE(None, c_ptr)
READY_FN = ctypes.CFUNCTYPE(None, c_i32, c_ptr)
PROGRESS_FN = ctypes.CFUNCTYPE(None, c_i32, c_i32, c_ptr)
STREAM_FN = ctypes.CFUNCTYPE(None, c_ptr, c_u64, c_u32, c_ptr)
PRINT_FN = ctypes.CFUNCTYPE(None, c_str, c_ptr)
FLUSH_FN = ctypes.CFUNCTYPE(None, c_str, c_ptr)
# (tensor_id, mrt_flush_selection *, user_data)
FLUSH_SELECT_FN = ctypes.CFUNCTYPE(None, c_str, c_ptr, c_ptr)
ANCHOR_CALLBACK_FN = ctypes.CFUNCTYPE(None, c_ptr, c_u64, c_ptr)
QUEUE_TIMEOUT_FN = ctypes.CFUNCTYPE(None, c_str, c_i32, c_i64, c_ptr)
QUEUE_DATA_FN = ctypes.CFUNCTYPE(None, c_ptr)


class TensorView(ctypes.Structure):
    _fields_ = [("name", c_str), ("data", c_ptr), ("size_bytes", c_u64)]


class DataDesc(ctypes.Structure):
    _fields_ = [("name", c_str), ("size_in_bytes", c_i64), ("shape", P(c_i64)), ("rank", c_size),
                ("data_type", c_i32), ("popef_contains_tensor_data", c_bool)]


class ModelInfo(ctypes.Structure):
    _fields_ = [("struct_size", c_size), ("executable", c_str), ("replication_factor", c_u64),
                ("num_ipus", c_u64), ("ipu_version", c_u32), ("is_inference", c_bool),
                ("seed_handle", c_str), ("package_hash", c_str), ("num_anchors", c_size),
                ("num_programs", c_size), ("num_engine_options", c_size),
                ("num_device_options", c_size), ("num_tensor_data", c_size),
                ("num_feed_data", c_size),
                # Appended after V1:
                ("shared_executable", c_str)]


class AnchorInfo(ctypes.Structure):
    _fields_ = [("struct_size", c_size), ("name", c_str), ("handle", c_str), ("data_type", c_i32),
                ("shape", P(c_i64)), ("rank", c_size), ("size_in_bytes", c_i64),
                ("programs", P(c_u64)), ("num_programs", c_size), ("is_per_replica", c_bool),
                ("tensor_type", c_i32), ("data_source", c_i32), ("remote_buffer", c_str),
                ("remote_buffer_repeats", c_i64),
                # Appended after V1:
                ("replica", c_u32)]


# ---- devices ----
class DeviceWaitConfig(ctypes.Structure):
    _fields_ = [("struct_size", c_size), ("strategy", c_i32), ("timeout_ns", c_i64),
                ("sleep_time_ns", c_i64)]


class DeviceInfo(ctypes.Structure):
    _fields_ = [("struct_size", c_size), ("id", c_i64), ("num_ipus", c_i64),
                ("ipu_version", c_i64), ("tiles_per_ipu", c_i64), ("is_free", c_bool),
                ("target_name", c_str)]


# ---- sessions ----
class AnchorCallback(ctypes.Structure):
    _fields_ = [("fn", ANCHOR_CALLBACK_FN), ("user_data", c_ptr), ("user_data_free", FREE_FN)]


CALLBACK_FACTORY_FN = ctypes.CFUNCTYPE(c_bool, P(AnchorInfo), P(AnchorCallback), c_ptr)
ANCHOR_PREDICATE_FN = ctypes.CFUNCTYPE(c_i32, P(AnchorInfo), c_ptr)
UNBOUND_ANCHOR_FN = ctypes.CFUNCTYPE(None, c_u64, P(AnchorInfo), c_ptr)


class ProgramsWithPolicy(ctypes.Structure):
    _fields_ = [("programs", P(c_u64)), ("num_programs", c_size), ("policy", c_i32)]


class AnchorWithPolicy(ctypes.Structure):
    _fields_ = [("handle", c_str), ("policy", c_i32)]


class SessionConfig(ctypes.Structure):
    _fields_ = [("struct_size", c_size), ("policy", c_i32), ("pred_tensor_data", c_ptr),
                ("check_package_hash", c_bool), ("wait_config", P(DeviceWaitConfig)),
                ("max_look_ahead", c_str),
                # Appended after the first version:
                ("max_look_ahead_syncs", c_i64), ("model_name", c_str)]


# ---- queues ----
class RingSizeOverride(ctypes.Structure):
    _fields_ = [("anchor_name", c_str), ("multiplier", c_i64)]


class QueueManagerConfig(ctypes.Structure):
    _fields_ = [("struct_size", c_size), ("ring_size_multiplier", c_i64),
                ("load_save_ring_size_multiplier", c_i64), ("timeout_ns", c_i64),
                ("timeout_fn", QUEUE_TIMEOUT_FN), ("timeout_user_data", c_ptr),
                ("timeout_user_data_free", FREE_FN),
                # Appended after the first version:
                ("ring_size_overrides", P(RingSizeOverride)), ("num_ring_size_overrides", c_size)]


class QueueInfo(ctypes.Structure):
    _fields_ = [("struct_size", c_size), ("name", c_str), ("data_type", c_i32),
                ("shape", P(c_i64)), ("rank", c_size), ("size_in_bytes", c_i64),
                ("sample_size_bytes", c_i64), ("num_buffers", c_i64), ("connected", c_bool)]


class InputQueueEntry(ctypes.Structure):
    """mrt_input_queue_entry: one ring slot, filled in place (two-phase enqueue)."""
    _fields_ = [("data", c_ptr), ("size_bytes", c_i64), ("read_start_fn", QUEUE_DATA_FN),
                ("read_complete_fn", QUEUE_DATA_FN), ("user_data", c_ptr),
                ("user_data_free", FREE_FN), ("slot", c_i64)]


class OutputQueueEntry(ctypes.Structure):
    """mrt_output_queue_entry."""
    _fields_ = [("data", c_ptr), ("size_bytes", c_i64), ("write_complete_fn", QUEUE_DATA_FN),
                ("user_data", c_ptr), ("user_data_free", FREE_FN), ("slot", c_i64)]


# ---- PopEF listings ----
class BlobInfo(ctypes.Structure):
    _fields_ = [("struct_size", c_size), ("file", c_size), ("index", c_size), ("type", c_i32),
                ("executable", c_str), ("name", c_str), ("offset", c_u64),
                ("payload_size", c_u64), ("stored_checksum", c_u64),
                ("computed_checksum", c_u64), ("problem", c_str), ("data_type", c_i32),
                ("shape", P(c_i64)), ("rank", c_size), ("num_tensors", c_u64),
                ("data_size", c_u64)]


# ---- model runner ----
class ReplicaOutputs(ctypes.Structure):
    _fields_ = [("replica_id", c_u32), ("outputs", P(TensorView)), ("num_outputs", c_size)]


class RunnerConfig(ctypes.Structure):
    _fields_ = [("struct_size", c_size), ("replication_factor", c_u32),
                ("run_save_programs", c_bool), ("thread_safe", c_bool),
                ("frozen_inputs", P(TensorView)), ("num_frozen_inputs", c_size),
                ("save_programs_outputs", P(ReplicaOutputs)), ("num_save_programs_outputs", c_size),
                ("replica_devices", P(c_ptr)), ("num_replica_devices", c_size),
                ("device_wait_config", P(DeviceWaitConfig)), ("check_package_hash", c_bool),
                ("timeout_ns", c_i64), ("validate_io_params", c_bool), ("batching_dim", c_u32),
                ("auto_reset", c_bool), ("max_look_ahead", c_i64),
                ("ring_buffer_size_multiplier", c_u32), ("flush_on_waiting_outputs", c_bool),
                ("batch_size_timeout_ns", c_i64), ("data_parallel_timeout_ns", c_i64),
                ("is_batch_size_timeout_enabled", c_bool),
                ("request_tracepoints_buffer_size", c_size), ("flush_callback", FLUSH_FN),
                ("flush_user_data", c_ptr), ("flush_user_data_free", FREE_FN),
                # Appended after the first version:
                ("flush_select_callback", FLUSH_SELECT_FN), ("model_name", c_str)]


class RequestTimes(ctypes.Structure):
    _fields_ = [("struct_size", c_size), ("request_us", c_double),
                ("read_preparation_us", c_double), ("read_queue_us", c_double),
                ("computation_us", c_double)]


# ---- building models ----
class Target(ctypes.Structure):
    _fields_ = [("struct_size", c_size), ("name", c_str), ("ipu_version", c_u32),
                ("num_ipus", c_u32), ("tiles_per_ipu", c_u32), ("worker_contexts_per_tile", c_u32),
                ("bytes_per_tile", c_u64)] + [
        (field, c_double) for field in (
            "clock_hz", "f32_matmul_flops_per_cycle", "f16_matmul_flops_per_cycle",
            "f32_vector_width", "f16_vector_width", "int_vector_width",
            "transcendental_cycles_per_element", "vertex_overhead_cycles",
            "exchange_bytes_per_cycle", "host_link_bytes_per_second", "ipu_link_bytes_per_second",
            "internal_sync_cycles", "external_sync_cycles", "host_sync_cycles")]


class TensorInfo(ctypes.Structure):
    _fields_ = [("struct_size", c_size), ("data_type", c_i32), ("rank", c_size),
                ("shape", P(c_u64)), ("num_elements", c_u64), ("num_bytes", c_u64),
                ("is_contiguous", c_bool), ("is_constant", c_bool)]


class TileInterval(ctypes.Structure):
    _fields_ = [("begin", c_u64), ("end", c_u64), ("tile", c_u32)]


class CodeletInfo(ctypes.Structure):
    _fields_ = [("struct_size", c_size), ("name", c_str), ("description", c_str),
                ("num_fields", c_size), ("num_attributes", c_size)]


class ExecutableInfo(ctypes.Structure):
    _fields_ = [("struct_size", c_size), ("hash", c_u64), ("replication_factor", c_u32),
                ("num_ipus", c_u32), ("num_programs", c_u32), ("num_tiles", c_u32),
                ("num_streams", c_size), ("num_remote_buffers", c_size),
                ("num_host_reads", c_size), ("num_host_writes", c_size), ("num_steps", c_size),
                ("total_memory_bytes", c_u64), ("max_tile_memory_bytes", c_u64),
                ("max_memory_tile", c_u32), ("bytes_per_tile", c_u64)]


class StepInfo(ctypes.Structure):
    _fields_ = [("struct_size", c_size), ("kind", c_str), ("name", c_str),
                ("modelled_cycles", c_u64)]


class PipelineInfo(ctypes.Structure):
    _fields_ = [("struct_size", c_size), ("num_stages", c_u32), ("latency_cycles", c_u64),
                ("interval_cycles", c_u64)]


class HandleInfo(ctypes.Structure):
    _fields_ = [("struct_size", c_size), ("handle", c_str), ("kind", c_i32),
                ("data_type", c_i32), ("num_elements", c_u64), ("repeats", c_u64)]


class AnchorConfig(ctypes.Structure):
    _fields_ = [("struct_size", c_size), ("name", c_str), ("handle", c_str),
                ("shape", P(c_i64)), ("rank", c_size), ("programs", P(c_u64)),
                ("num_programs", c_size), ("is_per_replica", c_bool), ("data_source", c_i32)]


class OnnxInputShape(ctypes.Structure):
    _fields_ = [("name", c_str), ("dims", P(c_i64)), ("rank", c_size)]


class OnnxOptions(ctypes.Structure):
    _fields_ = [("struct_size", c_size), ("target", c_str), ("custom_target", P(Target)),
                ("num_ipus", c_u32), ("replication_factor", c_u32), ("batch_size", c_i64),
                ("model_name", c_str), ("progress", PROGRESS_FN), ("user_data", c_ptr),
                ("user_data_free", FREE_FN), ("input_shapes", P(OnnxInputShape)),
                ("num_input_shapes", c_size), ("precision", c_i32), ("batching_dim", c_u32),
                ("num_io_tiles", c_u32)]


def sized(struct_type):
    """A zeroed struct of struct_type with struct_size set to its size (for
    info structs the library fills)."""
    return struct_type(struct_size=ctypes.sizeof(struct_type))
