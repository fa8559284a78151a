/*
 * mrt_c.h - the C API of libmrt, an open Model Runtime for IPU-style
 * accelerators. This header is the library's only public ABI.
 *
 * Conventions (apply to every function unless its comment says otherwise):
 *
 * - Errors. Every fallible function returns an mrt_status. MRT_OK is 0; the
 *   other codes are explicitly numbered and never renumbered. After a failure,
 *   mrt_last_error_message() gives a message naming the bad value. Messages are
 *   per thread; asynchronous failures are reported in their mrt_future, never
 *   through the per-thread message.
 * - Exceptions. No C++ exception ever leaves the library, and exceptions
 *   thrown by user callbacks (from C++ callers) are caught inside it.
 * - Ownership. An object returned through an `mrt_X **out` parameter belongs to
 *   the caller, who frees it with mrt_X_destroy(). destroy functions accept
 *   NULL and cannot fail. `const` pointers returned directly are borrowed from
 *   their parent and valid for the parent's lifetime unless said otherwise.
 *   A child keeps what it needs of its parent alive, so handles may be
 *   destroyed in any order.
 * - Sized structs (config structs the caller fills, info structs the
 *   library fills) start with `size_t struct_size`. Fields are only ever
 *   appended, and each struct's first published size is frozen as
 *   MRT_<STRUCT>_V1_SIZE: a caller built against an older header sends its
 *   smaller struct_size (at least V1) and the library reads or writes no byte
 *   beyond it, taking defaults for the config fields it lacks; a caller built
 *   against a newer header sends a larger one, read or written as far as this
 *   library knows the struct. Config structs are filled with defaults by their
 *   mrt_X_init() function; set fields after calling it. mrt_X_init(p) is a
 *   macro for mrt_X_init_sized(p, sizeof *(p)): the library writes the
 *   defaults into the first `size` bytes only (struct_size = size), so a
 *   program built against this header never gets a byte written beyond its
 *   struct by a newer library, and fields a newer header appended stay as
 *   they were with an older library. init_sized returns MRT_INVALID_ARGUMENT
 *   for NULL or a size below MRT_<STRUCT>_V1_SIZE. The exported function
 *   mrt_X_init(p) (what programs built before the macro call) writes exactly
 *   the V1 fields; call it as (mrt_X_init)(p) to bypass the macro.
 * - Callbacks come as (fn, user_data, user_data_free). user_data is passed as
 *   the last argument of fn. user_data_free (may be NULL) is called exactly
 *   once when the library no longer needs user_data, also when registration
 *   fails. Each callback documents its calling thread and whether calls can
 *   overlap. Pointer arguments of callbacks are valid only during the call.
 * - Output parameters come last and are named out...; on failure they are not
 *   written.
 * - Durations are int64_t nanoseconds, in fields and parameters named ..._ns,
 *   with one meaning everywhere: a negative value (spelled MRT_FOREVER) means
 *   no limit (wait forever, never time out), 0 means no wait at all, and a
 *   positive value is the limit. Where a zero wait would make no sense (a
 *   timeout callback called continuously), 0 is refused with
 *   MRT_INVALID_ARGUMENT. Pauses (sleep_time_ns) are not limits and must not
 *   be negative.
 *
 * The header is valid C99 and C++ and includes only <stddef.h>, <stdint.h>
 * and <stdbool.h>.
 */
#ifndef MRT_C_H
#define MRT_C_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* MRT_API marks the functions libmrt.so exports; everything else is hidden. */
#if defined(MRT_BUILDING_LIBRARY)
#define MRT_API __attribute__((visibility("default")))
#else
#define MRT_API
#endif

/* The size of a sized struct version ending at last_field: what a caller
 * built against that version sends as struct_size, whatever fields (and
 * padding) later versions append. */
#define MRT_STRUCT_SIZE(type, last_field) (offsetof(type, last_field) + sizeof(((type *)0)->last_field))

/* "No limit" for every duration (see "Durations" at the top). */
#define MRT_FOREVER INT64_C(-1)

/* MRT_NOEXCEPT documents, and lets C++ callers rely on, the no-throw promise. */
#ifdef __cplusplus
#define MRT_NOEXCEPT noexcept
extern "C" {
#else
#define MRT_NOEXCEPT
#endif

/* ------------------------------------------------------------------------ */
/* ---- Status codes and error messages ---- */

typedef int32_t mrt_status;

enum {
  MRT_OK = 0,
  MRT_INVALID_ARGUMENT = 1,     /* a NULL, out of range or malformed argument */
  MRT_NOT_FOUND = 2,            /* an unknown name, file or id */
  MRT_FAILED_PRECONDITION = 3,  /* the object is in the wrong state for the call */
  MRT_RESOURCE_EXHAUSTED = 4,   /* out of memory, queue full, too many handles */
  MRT_DEADLINE_EXCEEDED = 5,    /* a timeout expired */
  MRT_CANCELLED = 6,            /* the operation was stopped */
  MRT_UNAVAILABLE = 7,          /* no device could be had */
  MRT_DEVICE_ERROR = 8,         /* the (simulated) hardware reported a fault */
  MRT_CORRUPT_MODEL = 9,        /* a model file is malformed */
  MRT_VERSION_MISMATCH = 10,    /* incompatible library, model or package version */
  MRT_UNIMPLEMENTED = 11,       /* a valid request this build does not support */
  MRT_INTERNAL = 12             /* a bug in libmrt: please report it */
};

/* The name and meaning of a status code, e.g. "MRT_NOT_FOUND: not found".
 * Static storage; never NULL (unknown codes give "unknown status code"). */
MRT_API const char *mrt_status_string(mrt_status code) MRT_NOEXCEPT;

/* The detailed message of the last failed mrt_* call on this thread, or ""
 * if none failed yet. Successful calls leave it as it is. The pointer is
 * valid until the next mrt_* call on this thread; copy the text to keep it. */
MRT_API const char *mrt_last_error_message(void) MRT_NOEXCEPT;

/* Copies the last error message of this thread (as above) into buffer,
 * truncated to buffer_size - 1 bytes and always NUL terminated when
 * buffer_size > 0. *out_length (if not NULL) receives the full length of the
 * message without the NUL, so a caller can retry with a buffer of
 * *out_length + 1 bytes. buffer may be NULL when buffer_size is 0.
 * Returns MRT_INVALID_ARGUMENT if buffer is NULL and buffer_size > 0. It does
 * not change the stored message, even when it fails. */
MRT_API mrt_status mrt_last_error_message_copy(char *buffer, size_t buffer_size,
                                               size_t *out_length) MRT_NOEXCEPT;

/* What a device needs after an MRT_DEVICE_ERROR before it runs again (the
 * seed's, i.e. Poplar's, RecoveryAction), so that a program acts on it
 * without reading messages. A ModelRunner with auto_reset recovers from
 * IPU_RESET itself; for the others (or without auto_reset) destroy the
 * runner and create a new one, which resets the device when it loads. A
 * Session recovers with mrt_session_reload(), an engine with
 * mrt_engine_load(). */
typedef enum mrt_recovery_action {
  MRT_RECOVERY_NONE = 0,            /* not a device error */
  MRT_RECOVERY_IPU_RESET = 1,       /* reset the IPU(s) of the device */
  MRT_RECOVERY_PARTITION_RESET = 2, /* reset every IPU of the partition */
  MRT_RECOVERY_FULL_RESET = 3       /* power-cycle the system */
} mrt_recovery_action;

/* The mrt_recovery_action of the last failed mrt_* call on this thread:
 * the device's for MRT_DEVICE_ERROR (also "out of service" refusals of a
 * ModelRunner replica), MRT_RECOVERY_NONE for any other failure or if none
 * failed yet. Like the message, successful calls leave it as it is. */
MRT_API int32_t mrt_last_error_recovery_action(void) MRT_NOEXCEPT;

/* ------------------------------------------------------------------------ */
/* ---- Versions ---- */

/* The version of this header. The library's soname carries the major:
 * libmrt.so.<MRT_VERSION_MAJOR>. CMakeLists.txt reads these three lines. */
#define MRT_VERSION_MAJOR 0
#define MRT_VERSION_MINOR 1
#define MRT_VERSION_PATCH 0

/* The version of the loaded library as "MAJOR.MINOR.PATCH" (static storage). */
MRT_API const char *mrt_version_string(void) MRT_NOEXCEPT;

/* The version of the loaded library, each part through a pointer; any may be
 * NULL. */
MRT_API void mrt_version(int *out_major, int *out_minor, int *out_patch) MRT_NOEXCEPT;

/* MRT_OK if the loaded library can serve a caller built against version
 * major.minor: same major and a library minor >= minor. Otherwise
 * MRT_VERSION_MISMATCH with a message naming both versions. Call it as
 * mrt_check_version(MRT_VERSION_MAJOR, MRT_VERSION_MINOR). */
MRT_API mrt_status mrt_check_version(int major, int minor) MRT_NOEXCEPT;

/* ------------------------------------------------------------------------ */
/* ---- Host memory limit ---- */

/* The simulated device lives in host memory: a Session or ModelRunner
 * allocates each replica's tile memory, remote buffers and stream buffers, and
 * queues allocate their rings, all sized from the model. Before allocating,
 * the library reserves those bytes against one process-wide limit, so a model
 * file that asks for more fails with MRT_RESOURCE_EXHAUSTED (naming the bytes
 * and the limit) instead of exhausting the machine. The limit starts as
 * MRT_HOST_MEMORY_LIMIT from the environment (bytes, or with a K, M, G or T
 * suffix: "4G") or else half the machine's physical memory.
 * Any thread; takes effect for later reservations. 0 restores the default. */
MRT_API void mrt_set_host_memory_limit(uint64_t bytes) MRT_NOEXCEPT;

/* The limit in force, and the bytes reserved now by live objects. */
MRT_API uint64_t mrt_host_memory_limit(void) MRT_NOEXCEPT;
MRT_API uint64_t mrt_host_memory_reserved(void) MRT_NOEXCEPT;

/* ------------------------------------------------------------------------ */
/* ---- Logging ---- */

/* Verbosity, from silent to everything. The environment variable
 * MRT_LOG_LEVEL sets the starting level by name (OFF, ERR, WARN, INFO, DEBUG,
 * TRACE; default WARN) and MRT_LOG_DEST the destination (stdout, stderr - the
 * default - or a file path, appended to; a path in a missing directory is
 * logged as an error and stderr is used, no directory is created). INFO tells
 * the lifecycle: model loaded, device attached and released, session loaded. */
typedef enum mrt_log_level {
  MRT_LOG_OFF = 0,
  MRT_LOG_ERR = 1,
  MRT_LOG_WARN = 2,
  MRT_LOG_INFO = 3,
  MRT_LOG_DEBUG = 4,
  MRT_LOG_TRACE = 5
} mrt_log_level;

/* Messages at `level` (an mrt_log_level) and more severe are emitted;
 * MRT_LOG_OFF silences all. MRT_INVALID_ARGUMENT for a value outside the
 * enum. Levels cross the ABI as int32_t so that any value a foreign caller
 * passes is well defined and can be rejected. Thread safe. */
MRT_API mrt_status mrt_set_log_level(int32_t level) MRT_NOEXCEPT;

/* The current level. Thread safe. */
MRT_API mrt_log_level mrt_get_log_level(void) MRT_NOEXCEPT;

/* Receives one formatted log message (without a trailing newline). Called on
 * the thread that logs, which may be any thread of the library or the
 * caller's; calls never overlap (they are serialized by the library).
 * message is valid only during the call. The callback may call other mrt_*
 * functions; what they log on this thread while it runs (e.g. a failed
 * call's DEBUG message, or mrt_log_message()) is dropped, not delivered
 * again. It must not call mrt_set_log_callback() (that call fails with
 * MRT_FAILED_PRECONDITION). */
typedef void (*mrt_log_fn)(mrt_log_level level, const char *message, void *user_data);

/* Sends log messages to fn instead of the MRT_LOG_DEST destination; fn NULL
 * restores that destination. The previous callback's user_data_free runs once
 * here, after its last call has returned; the last callback's runs when the
 * library is unloaded (at process exit or dlclose), so user_data must stay
 * valid until then. user_data_free may be NULL. Thread safe. */
MRT_API mrt_status mrt_set_log_callback(mrt_log_fn fn, void *user_data,
                                        void (*user_data_free)(void *user_data)) MRT_NOEXCEPT;

/* Emits message through libmrt's logger at level (an mrt_log_level from
 * MRT_LOG_ERR to MRT_LOG_TRACE), so an application or a binding can put its
 * messages in the same stream. message must not be NULL. */
MRT_API mrt_status mrt_log_message(int32_t level, const char *message) MRT_NOEXCEPT;

/* ------------------------------------------------------------------------ */
/* ---- Models (PopEF) ---- */

/* A model loaded from PopEF files (docs/popef.md): its metadata, anchors,
 * program flow, executable and tensor data. Immutable once loaded, so every
 * function below may be called from any number of threads at once on the
 * same model. Everything a model function returns by pointer (strings,
 * arrays, tensor bytes) is borrowed from the model and stays valid until
 * mrt_model_destroy(); objects created from a model (runners, sessions) keep
 * what they need of it alive, so the model may be destroyed before them. */
typedef struct mrt_model mrt_model;

/* Element types. The values are stable (they are also PopEF's). */
typedef enum mrt_data_type {
  MRT_BOOL = 0,
  MRT_U8 = 1,
  MRT_S8 = 2,
  MRT_U16 = 3,
  MRT_S16 = 4,
  MRT_S32 = 5,
  MRT_U32 = 6,
  MRT_S64 = 7,
  MRT_U64 = 8,
  MRT_F16 = 9,
  MRT_F32 = 10,
  MRT_F64 = 11
} mrt_data_type;

/* Direction of an anchor, seen from the device. */
typedef enum mrt_tensor_type {
  MRT_TENSOR_INPUT = 0,
  MRT_TENSOR_OUTPUT = 1,
  MRT_TENSOR_UNKNOWN = 2
} mrt_tensor_type;

/* Where an input anchor's bytes come from when the user provides none. */
typedef enum mrt_data_source {
  MRT_DATA_SOURCE_NONE = 0,         /* the user must provide them */
  MRT_DATA_SOURCE_TENSOR_DATA = 1,  /* a TensorData blob of the anchor's name */
  MRT_DATA_SOURCE_FEED_DATA = 2     /* a FeedData blob of the anchor's name */
} mrt_data_source;

/* The phases of a model's program flow. */
typedef enum mrt_program_phase {
  MRT_PHASE_LOAD = 0,  /* run once after the executable is on the device */
  MRT_PHASE_MAIN = 1,  /* run once per inference round */
  MRT_PHASE_SAVE = 2   /* run when the model leaves the device */
} mrt_program_phase;

/* Which of a model's option sets. */
typedef enum mrt_model_options {
  MRT_MODEL_ENGINE_OPTIONS = 0,
  MRT_MODEL_DEVICE_OPTIONS = 1
} mrt_model_options;

/* Loads the model held by the num_paths PopEF files (>= 1; a model may be
 * split over several files, given in any order). The files must hold exactly
 * one model; use mrt_model_load_named() to pick one of several. The files
 * are read into memory (up to 4 MiB) or memory-mapped read-only (larger
 * ones), and every blob is checked (checksums, the
 * FlatBuffers verifier, the consistency of the model) before this returns.
 * Errors: MRT_NOT_FOUND for a file that does not exist, MRT_CORRUPT_MODEL for
 * anything wrong in a file (the message names the file, the blob and the
 * byte offset; also for one model's Metadata given twice), MRT_INVALID_ARGUMENT
 * for NULL arguments, num_paths 0, files holding several models or a path
 * that is not a regular file (a directory, FIFO, device or socket: refused
 * without waiting for a writer). *out belongs to the caller:
 * mrt_model_destroy(). */
MRT_API mrt_status mrt_model_load(const char *const *paths, size_t num_paths,
                                  mrt_model **out) MRT_NOEXCEPT;

/* As mrt_model_load(), for the model whose executable is named `executable`
 * (not NULL, not empty): MRT_NOT_FOUND if none of the files has its
 * metadata. Use it when one file holds several models. */
MRT_API mrt_status mrt_model_load_named(const char *const *paths, size_t num_paths,
                                        const char *executable, mrt_model **out) MRT_NOEXCEPT;

/* Releases the caller's reference. NULL is accepted. */
MRT_API void mrt_model_destroy(mrt_model *model) MRT_NOEXCEPT;

/* A new model: `model` with engine options (NULL-terminated key/value
 * pairs, as mrt_engine_create() takes them) set over its own, replacing the
 * values of the same keys; blobs are shared, not copied. For overrides of
 * one run, such as profiling ("autoReport.all" "true",
 * "autoReport.directory" DIR) in every engine a runner or session makes.
 * MRT_INVALID_ARGUMENT naming the option for an unknown name, a malformed
 * value, a key without a value or a key given twice; `model` is unchanged.
 * *out belongs to the caller: mrt_model_destroy(). Any thread. */
MRT_API mrt_status mrt_model_with_engine_options(const mrt_model *model, const char *const *options,
                                                 mrt_model **out) MRT_NOEXCEPT;

/* The bytes of the model's TensorData blob `name`: *out_data points into the
 * model's image of its file (a file over 4 MiB is memory-mapped, not
 * copied; 64-byte aligned, read-only) and
 * *out_size is its size in bytes. Borrowed: valid until the model is
 * destroyed. MRT_NOT_FOUND if the model has no TensorData of that name. */
MRT_API mrt_status mrt_model_tensor_data(const mrt_model *model, const char *name,
                                         const void **out_data, uint64_t *out_size) MRT_NOEXCEPT;

/* The bytes of FeedData blob `name`: *out_num_tensors tensors of
 * *out_size / *out_num_tensors bytes each, back to back. Borrowed like
 * mrt_model_tensor_data(). out_num_tensors may be NULL. MRT_NOT_FOUND if
 * there is no FeedData of that name. */
MRT_API mrt_status mrt_model_feed_data(const mrt_model *model, const char *name,
                                       const void **out_data, uint64_t *out_size,
                                       uint64_t *out_num_tensors) MRT_NOEXCEPT;

/* The serialized executable (opaque bytes for the simulated IPU). Borrowed. */
MRT_API mrt_status mrt_model_executable(const mrt_model *model, const void **out_data,
                                        uint64_t *out_size) MRT_NOEXCEPT;

/* The model's metadata. Set struct_size = sizeof(mrt_model_info) before the
 * call; the library fills the fields that fit in struct_size (fields are
 * only appended) and MRT_INVALID_ARGUMENT if struct_size is smaller than the
 * first version of the struct. Strings are borrowed from the model. */
typedef struct mrt_model_info {
  size_t struct_size;
  const char *executable;       /* executable name, also the model's name */
  uint64_t replication_factor;  /* replicas the executable was compiled for */
  uint64_t num_ipus;            /* IPUs it runs on, all replicas together */
  uint32_t ipu_version;         /* 2 (Mk2) or 21 (C600) */
  bool is_inference;
  const char *seed_handle;      /* handle of the random seed anchor, "" if none */
  const char *package_hash;     /* runtime package the model was built for */
  size_t num_anchors;
  size_t num_programs;          /* entries of the programs map */
  size_t num_engine_options;
  size_t num_device_options;
  size_t num_tensor_data;       /* TensorData blobs */
  size_t num_feed_data;         /* FeedData blobs */
  /* ---- appended after V1 ---- */
  /* For a model fused with others (mrt_model_fuse()): the name of the
   * executable they share; "" for a model with an executable of its own. */
  const char *shared_executable;
} mrt_model_info;
#define MRT_MODEL_INFO_V1_SIZE MRT_STRUCT_SIZE(mrt_model_info, num_feed_data)

/* Fills *out_info (see mrt_model_info). Any thread. */
MRT_API mrt_status mrt_model_get_info(const mrt_model *model,
                                      mrt_model_info *out_info) MRT_NOEXCEPT;

/* Option `index` (0 <= index < num_engine_options / num_device_options, in
 * key order) of the set `options` (an mrt_model_options). Borrowed strings.
 * MRT_INVALID_ARGUMENT for an index out of range or an unknown set. */
MRT_API mrt_status mrt_model_option(const mrt_model *model, int32_t options, size_t index,
                                    const char **out_key, const char **out_value) MRT_NOEXCEPT;

/* One anchor: a tensor crossing the host/device boundary. Set struct_size as
 * for mrt_model_info. Pointers are borrowed from the model; `shape` and
 * `programs` may be NULL when rank / num_programs is 0. */
typedef struct mrt_anchor_info {
  size_t struct_size;
  const char *name;              /* TensorData / FeedData blobs match it */
  const char *handle;            /* stream handle, unique in the model */
  int32_t data_type;             /* an mrt_data_type */
  const int64_t *shape;
  size_t rank;
  int64_t size_in_bytes;
  const uint64_t *programs;      /* indices of the programs that transfer it */
  size_t num_programs;
  bool is_per_replica;
  int32_t tensor_type;           /* an mrt_tensor_type */
  int32_t data_source;           /* an mrt_data_source */
  const char *remote_buffer;     /* remote buffer name, NULL if none */
  int64_t remote_buffer_repeats; /* its number of slots, 0 if none */
  /* ---- appended after V1 ---- */
  /* For the anchor a callback factory (mrt_callback_factory_fn) is given:
   * the replica whose stream its callback will serve (a replicated model's
   * factory is called once per replica). 0 everywhere else. Present when
   * struct_size >= MRT_STRUCT_SIZE(mrt_anchor_info, replica). */
  uint32_t replica;
} mrt_anchor_info;
#define MRT_ANCHOR_INFO_V1_SIZE MRT_STRUCT_SIZE(mrt_anchor_info, remote_buffer_repeats)

/* Anchor `index`, 0 <= index < num_anchors (MRT_INVALID_ARGUMENT otherwise). */
MRT_API mrt_status mrt_model_anchor(const mrt_model *model, size_t index,
                                    mrt_anchor_info *out_anchor) MRT_NOEXCEPT;
/* The anchor named `name` (MRT_NOT_FOUND if none). */
MRT_API mrt_status mrt_model_anchor_by_name(const mrt_model *model, const char *name,
                                            mrt_anchor_info *out_anchor) MRT_NOEXCEPT;
/* The anchor whose handle is `handle` (MRT_NOT_FOUND if none). */
MRT_API mrt_status mrt_model_anchor_by_handle(const mrt_model *model, const char *handle,
                                              mrt_anchor_info *out_anchor) MRT_NOEXCEPT;

/* The program indices of phase `phase` (an mrt_program_phase), in the order
 * they run. *out_programs is borrowed and may be NULL when *out_count is 0. */
MRT_API mrt_status mrt_model_program_flow(const mrt_model *model, int32_t phase,
                                          const uint64_t **out_programs,
                                          size_t *out_count) MRT_NOEXCEPT;

/* Entry `index` of the programs map (0 <= index < num_programs, in order of
 * program index): a program index and its name (borrowed). */
MRT_API mrt_status mrt_model_program(const mrt_model *model, size_t index,
                                     uint64_t *out_program_index,
                                     const char **out_name) MRT_NOEXCEPT;

/* The dimension ModelRunner batches the model's requests along when its
 * config's batching_dim is MRT_BATCHING_DISABLED (recorded by
 * mrt_onnx_options.batching_dim), or MRT_BATCHING_DISABLED if the model
 * records none. Any thread. */
MRT_API mrt_status mrt_model_batching_dim(const mrt_model *model, uint32_t *out_dim) MRT_NOEXCEPT;

/* ------------------------------------------------------------------------ */
/* ---- Inspecting PopEF files ---- */

/* What a set of PopEF files holds, read as far as it can be (what mrt-info
 * shows): every blob whose framing could be followed, with its checksums and
 * descriptor even when they are bad, the models the files hold, and the
 * first problem found. Unlike mrt_model_load(), a damaged, truncated or
 * missing file does not fail the call: the blobs before the damage are
 * listed and mrt_popef_listing_error() says what is wrong and where.
 * Immutable once made: any number of threads may call the functions below
 * on one listing at once. Strings and arrays they return are borrowed from
 * the listing, valid until mrt_popef_listing_destroy(). */
typedef struct mrt_popef_listing mrt_popef_listing;

/* The kinds of blob (PopEF's numbering, docs/popef.md). */
typedef enum mrt_blob_type {
  MRT_BLOB_METADATA = 1,
  MRT_BLOB_EXECUTABLE = 2,
  MRT_BLOB_TENSOR_DATA = 3,
  MRT_BLOB_FEED_DATA = 4,
  MRT_BLOB_OPAQUE = 5
} mrt_blob_type;

/* The name of a blob type as PopEF and docs/popef.md spell it ("Metadata",
 * "Executable", "TensorData", "FeedData", "Opaque"), "Unknown" for a value
 * that is no mrt_blob_type (e.g. mrt_blob_info.type of a newer format).
 * Static storage; never NULL. Any thread. */
MRT_API const char *mrt_blob_type_name(int32_t type) MRT_NOEXCEPT;

/* One listed blob. Set struct_size (e.g. sizeof(mrt_blob_info)) before
 * mrt_popef_listing_blob(); the library fills the fields that fit. Strings
 * and shape are borrowed from the listing. */
typedef struct mrt_blob_info {
  size_t struct_size;
  size_t file;                /* index of its file in the paths given */
  size_t index;               /* its position in the file, from 0 */
  int32_t type;               /* an mrt_blob_type */
  const char *executable;     /* the model it belongs to; "" if its descriptor is unreadable */
  const char *name;           /* "" for Metadata and if its descriptor is unreadable */
  uint64_t offset;            /* byte offset of the blob's header in the file */
  uint64_t payload_size;      /* bytes after the header */
  uint64_t stored_checksum;   /* the payload's XXH3-64 as the header records it */
  uint64_t computed_checksum; /* ... and as computed: the payload is damaged if they differ */
  const char *problem;        /* why the descriptor could not be read; "" if it could */
  int32_t data_type;          /* TensorData, FeedData: an mrt_data_type; -1 for other blobs */
  const int64_t *shape;       /* TensorData, FeedData: rank dimensions; NULL when rank is 0 */
  size_t rank;
  uint64_t num_tensors;       /* FeedData: tensors of that shape; TensorData: 1; others: 0 */
  uint64_t data_size;         /* bytes of its data section (tensor, executable or opaque
                                 bytes; Metadata: 0); 0 if the descriptor is unreadable */
} mrt_blob_info;
#define MRT_BLOB_INFO_V1_SIZE MRT_STRUCT_SIZE(mrt_blob_info, data_size)

/* Lists the blobs of the num_paths (>= 1) files, in the order given. If
 * every file's framing is sound, then loads the model named model_name, or
 * every model the files hold if model_name is NULL, as mrt_model_load_named()
 * would (checksums, descriptors, consistency); models loaded before a
 * failure stay listed. Returns MRT_OK whatever the files hold; their
 * problems are in mrt_popef_listing_error(). MRT_INVALID_ARGUMENT for NULL
 * paths or out, num_paths 0, a NULL path or an empty model_name.
 * *out belongs to the caller: mrt_popef_listing_destroy(). Any thread. */
MRT_API mrt_status mrt_popef_listing_create(const char *const *paths, size_t num_paths,
                                            const char *model_name,
                                            mrt_popef_listing **out) MRT_NOEXCEPT;
/* NULL is accepted. Models taken from the listing stay valid. */
MRT_API void mrt_popef_listing_destroy(mrt_popef_listing *listing) MRT_NOEXCEPT;

/* The first problem found: *out_status is MRT_OK (and *out_message "") if
 * the files are sound and hold the models asked for; otherwise the status
 * mrt_model_load_named() would have returned (MRT_NOT_FOUND for a missing
 * file or model, MRT_INVALID_ARGUMENT for a path that is not a regular file,
 * MRT_CORRUPT_MODEL for damage) and a one-line message naming the file, the
 * blob and the byte offset where reading stopped. Either out may be NULL. */
MRT_API mrt_status mrt_popef_listing_error(const mrt_popef_listing *listing, mrt_status *out_status,
                                           const char **out_message) MRT_NOEXCEPT;

/* File `file` (0 <= file < num_paths, MRT_INVALID_ARGUMENT otherwise): its
 * path as given, its size in bytes (0 if it could not be opened) and how
 * many of its blobs are listed. Any out may be NULL. */
MRT_API mrt_status mrt_popef_listing_file(const mrt_popef_listing *listing, size_t file,
                                          const char **out_path, uint64_t *out_size,
                                          size_t *out_num_blobs) MRT_NOEXCEPT;

/* Blob `index` of file `file` (see mrt_blob_info). MRT_INVALID_ARGUMENT
 * naming the value for a file or index out of range, or a struct_size below
 * MRT_BLOB_INFO_V1_SIZE. */
MRT_API mrt_status mrt_popef_listing_blob(const mrt_popef_listing *listing, size_t file, size_t index,
                                          mrt_blob_info *out_blob) MRT_NOEXCEPT;

/* How many models were loaded, and model `index` of them (in the order
 * their Metadata blobs come in the files): a new reference for the caller
 * (mrt_model_destroy()). MRT_INVALID_ARGUMENT for an index out of range. */
MRT_API mrt_status mrt_popef_listing_num_models(const mrt_popef_listing *listing,
                                                size_t *out_count) MRT_NOEXCEPT;
MRT_API mrt_status mrt_popef_listing_model(const mrt_popef_listing *listing, size_t index,
                                           mrt_model **out) MRT_NOEXCEPT;

/* ------------------------------------------------------------------------ */
/* ---- Devices ---- */

/* The simulated IPU system and its devices (DESIGN.md 5). The system is read
 * from the environment when a manager is created: MRT_HWSIM_IPUS ("4" - the
 * default -, "8", "2x21" = 2 IPUs of version 21; "0" = a system without
 * IPUs) and MRT_HWSIM_LOCK_DIR (directory of the lock files that make
 * attaching exclusive across processes; default $XDG_RUNTIME_DIR/mrt-hwsim,
 * else /tmp/mrt-hwsim-<uid>). Device ids: 0..N-1 are the single IPUs, then
 * the groups of 2 IPUs, of 4, ... up to one group of all N.
 *
 * Device options are passed as a NULL-terminated array of key/value string
 * pairs, { "ipuLinkDomainSize", "4", NULL }, or NULL for none. Known keys:
 * ipuLinkDomainSize (a positive integer), ipuLinkConfiguration (default,
 * slidingWindow, barleyTwist), ipuLinkTopology (mesh, torus). They are
 * checked (MRT_INVALID_ARGUMENT naming an unknown key or bad value) but do
 * not change which simulated device is chosen: the simulated IPU-Link fabric
 * connects the IPUs of every device alike.
 *
 * Getting a device: mrt_device_manager_get_* fail with MRT_UNAVAILABLE when
 * no device could be attached (also when the lock directory cannot be used);
 * the message lists the candidate devices and which are busy, how long the
 * call waited and every device of the system.
 * mrt_device_manager_try_get_* return MRT_OK with *out = NULL instead, and
 * fail like the get_* calls for anything else (bad arguments, unknown ids). */

/* A view of the simulated system. Holds only its immutable description, so
 * every function may be called on the same manager from any number of
 * threads at once. Devices do not need their manager: it may be destroyed
 * first. */
typedef struct mrt_device_manager mrt_device_manager;

/* One attached device: its IPUs are held exclusively (across processes too)
 * until the device is destroyed and nothing else (a session) still uses it.
 * The accessors may be called from any thread at once. */
typedef struct mrt_device mrt_device;

/* What to do when no matching device is free. */
typedef enum mrt_device_wait_strategy {
  MRT_DEVICE_NO_WAIT = 0,            /* fail at once */
  MRT_DEVICE_WAIT_WITH_TIMEOUT = 1,  /* retry every sleep_time_ns until timeout_ns has passed */
  MRT_DEVICE_WAIT_FOREVER = 2        /* retry every sleep_time_ns until a device is free */
} mrt_device_wait_strategy;

/* How to wait for a device. Fill with mrt_device_wait_config_init() and then
 * set the fields. Functions taking one accept NULL for the defaults and
 * reject (MRT_INVALID_ARGUMENT) a struct_size smaller than the first
 * version of this struct, an unknown strategy or a negative sleep_time_ns. */
typedef struct mrt_device_wait_config {
  size_t struct_size;
  int32_t strategy;      /* an mrt_device_wait_strategy; default MRT_DEVICE_NO_WAIT */
  int64_t timeout_ns;    /* WAIT_WITH_TIMEOUT only: how long to keep trying (0: try once,
                            MRT_FOREVER: as MRT_DEVICE_WAIT_FOREVER); default 0 */
  int64_t sleep_time_ns; /* pause between attempts; default 15 s; pauses below 1 ms are
                            lengthened to 1 ms so that waiting never spins */
} mrt_device_wait_config;
#define MRT_DEVICE_WAIT_CONFIG_V1_SIZE MRT_STRUCT_SIZE(mrt_device_wait_config, sleep_time_ns)

/* Every field's default, as far as "Sized structs" at the top says. */
MRT_API void mrt_device_wait_config_init(mrt_device_wait_config *config) MRT_NOEXCEPT;
MRT_API mrt_status mrt_device_wait_config_init_sized(mrt_device_wait_config *config, size_t size) MRT_NOEXCEPT;
#define mrt_device_wait_config_init(config) mrt_device_wait_config_init_sized((config), sizeof *(config))

/* One device of the simulated system, as listed by
 * mrt_device_manager_device_info(). Set struct_size = sizeof(mrt_device_info)
 * before the call (as for mrt_model_info). */
typedef struct mrt_device_info {
  size_t struct_size;
  int64_t id;
  int64_t num_ipus;
  int64_t ipu_version;     /* 2 (Mk2) or 21 (C600) */
  int64_t tiles_per_ipu;
  bool is_free;            /* nobody, in any process, holds any of its IPUs right now */
  const char *target_name; /* "GC200", "C600", ...: static storage */
} mrt_device_info;
#define MRT_DEVICE_INFO_V1_SIZE MRT_STRUCT_SIZE(mrt_device_info, target_name)

/* Creates a manager of the system described by the environment (above).
 * MRT_INVALID_ARGUMENT, naming the variable, if MRT_HWSIM_IPUS is malformed.
 * *out belongs to the caller: mrt_device_manager_destroy(). */
MRT_API mrt_status mrt_device_manager_create(mrt_device_manager **out) MRT_NOEXCEPT;

/* NULL is accepted. Devices got from the manager stay valid. */
MRT_API void mrt_device_manager_destroy(mrt_device_manager *manager) MRT_NOEXCEPT;

/* The IPU architecture version of the system: 2 (Mk2: GC200, Bow) or 21
 * (C600); 0 if the system has no IPUs. */
MRT_API mrt_status mrt_device_manager_ipu_hardware_version(const mrt_device_manager *manager,
                                                           int64_t *out_version) MRT_NOEXCEPT;

/* The number of device ids of the system (0 if it has no IPUs). */
MRT_API mrt_status mrt_device_manager_device_count(const mrt_device_manager *manager,
                                                   size_t *out_count) MRT_NOEXCEPT;

/* Device `index` (= its id), 0 <= index < count (MRT_INVALID_ARGUMENT
 * otherwise). is_free is a snapshot: another process may attach the device
 * right after. */
MRT_API mrt_status mrt_device_manager_device_info(const mrt_device_manager *manager, size_t index,
                                                  mrt_device_info *out_info) MRT_NOEXCEPT;

/* Attaches the first free device of num_ipus IPUs (1, 2, 4, ...; other
 * counts are MRT_INVALID_ARGUMENT), waiting as wait_config says (NULL: do
 * not wait). requires_remote_buffers asks for a device that supports remote
 * buffers (every simulated device does). A count the system has no device
 * of fails at once with MRT_UNAVAILABLE, whatever the strategy.
 * *out belongs to the caller: mrt_device_destroy(). */
MRT_API mrt_status mrt_device_manager_get_device(const mrt_device_manager *manager, int64_t num_ipus,
                                                 const char *const *device_options,
                                                 const mrt_device_wait_config *wait_config,
                                                 bool requires_remote_buffers,
                                                 mrt_device **out) MRT_NOEXCEPT;
/* As mrt_device_manager_get_device(), but *out = NULL and MRT_OK when no
 * device could be attached. */
MRT_API mrt_status mrt_device_manager_try_get_device(const mrt_device_manager *manager, int64_t num_ipus,
                                                     const char *const *device_options,
                                                     const mrt_device_wait_config *wait_config,
                                                     bool requires_remote_buffers,
                                                     mrt_device **out) MRT_NOEXCEPT;

/* A device for `model`: its number of IPUs, IPU version and device options;
 * remote buffer support if the model uses remote buffers. A model compiled
 * for an IPU version the system does not have fails with MRT_UNAVAILABLE
 * saying so. The device does not keep the model. */
MRT_API mrt_status mrt_device_manager_get_device_for_model(const mrt_device_manager *manager,
                                                           const mrt_model *model,
                                                           const mrt_device_wait_config *wait_config,
                                                           mrt_device **out) MRT_NOEXCEPT;
MRT_API mrt_status mrt_device_manager_try_get_device_for_model(const mrt_device_manager *manager,
                                                               const mrt_model *model,
                                                               const mrt_device_wait_config *wait_config,
                                                               mrt_device **out) MRT_NOEXCEPT;

/* Attaches device `device_id` (MRT_NOT_FOUND if the system has no such id),
 * waiting as wait_config says (NULL: do not wait). */
MRT_API mrt_status mrt_device_manager_get_specific_device(const mrt_device_manager *manager,
                                                          int64_t device_id,
                                                          const char *const *device_options,
                                                          const mrt_device_wait_config *wait_config,
                                                          mrt_device **out) MRT_NOEXCEPT;
MRT_API mrt_status mrt_device_manager_try_get_specific_device(const mrt_device_manager *manager,
                                                              int64_t device_id,
                                                              const char *const *device_options,
                                                              const mrt_device_wait_config *wait_config,
                                                              mrt_device **out) MRT_NOEXCEPT;

/* As above with the model's device options. The device must have at least
 * the model's number of IPUs (MRT_INVALID_ARGUMENT otherwise) and its IPU
 * version (MRT_UNAVAILABLE otherwise). */
MRT_API mrt_status mrt_device_manager_get_specific_device_for_model(
    const mrt_device_manager *manager, int64_t device_id, const mrt_model *model,
    const mrt_device_wait_config *wait_config, mrt_device **out) MRT_NOEXCEPT;
MRT_API mrt_status mrt_device_manager_try_get_specific_device_for_model(
    const mrt_device_manager *manager, int64_t device_id, const mrt_model *model,
    const mrt_device_wait_config *wait_config, mrt_device **out) MRT_NOEXCEPT;

/* An IPU Model device: simulated IPUs outside the system's pool, never busy
 * and never seen by other callers. num_ipus from 1 to 256, ipu_version 2 or
 * 21, tiles_per_ipu 0 (the architecture's 1472) to 1472. Its id is -1.
 * *out belongs to the caller: mrt_device_destroy(). */
MRT_API mrt_status mrt_device_manager_create_ipu_model_device(const mrt_device_manager *manager,
                                                              int64_t num_ipus, int64_t ipu_version,
                                                              int64_t tiles_per_ipu,
                                                              mrt_device **out) MRT_NOEXCEPT;
/* With the model's number of IPUs and IPU version. */
MRT_API mrt_status mrt_device_manager_create_ipu_model_device_for_model(
    const mrt_device_manager *manager, const mrt_model *model, int64_t tiles_per_ipu,
    mrt_device **out) MRT_NOEXCEPT;

/* A small IPU Model device: 4 tiles per IPU, quick to create and run, for
 * small programs (models compiled for 4 tiles per IPU). */
MRT_API mrt_status mrt_device_manager_create_small_ipu_model_device(const mrt_device_manager *manager,
                                                                    int64_t num_ipus, int64_t ipu_version,
                                                                    mrt_device **out) MRT_NOEXCEPT;
MRT_API mrt_status mrt_device_manager_create_small_ipu_model_device_for_model(
    const mrt_device_manager *manager, const mrt_model *model, mrt_device **out) MRT_NOEXCEPT;

/* Releases the caller's reference; when nothing else uses the device, it is
 * detached and its IPUs are free for others. NULL is accepted. Must not run
 * at the same time as another call on the same handle. */
MRT_API void mrt_device_destroy(mrt_device *device) MRT_NOEXCEPT;

/* The IPU architecture version of the device: 2 or 21. */
MRT_API mrt_status mrt_device_ipu_version(const mrt_device *device, int64_t *out_version) MRT_NOEXCEPT;

/* The device's id in the system, -1 for an IPU Model device. */
MRT_API mrt_status mrt_device_id(const mrt_device *device, int64_t *out_id) MRT_NOEXCEPT;

/* The number of IPUs of the device. */
MRT_API mrt_status mrt_device_num_ipus(const mrt_device *device, int64_t *out_num_ipus) MRT_NOEXCEPT;

/* ------------------------------------------------------------------------ */
/* ---- Sessions ---- */

/* A session links one model to one device (docs/session.md): it loads the
 * model's executable on the device, binds every anchor's stream - the
 * model's TensorData/FeedData, user callbacks or empty callbacks - fills
 * remote buffers from TensorData, and runs the Load, Main and Save programs.
 *
 * Sessions sharing a device: the device has one active session. Running a
 * session that is not active reloads its executable; the active session is
 * displaced first, which runs its Save programs if its Load programs have
 * run. Load runs implicitly before the first Main after (re)loading.
 *
 * Errors: MRT_FAILED_PRECONDITION for a call in the wrong state (not bound,
 * stopped, after a device error: the message says what to call),
 * MRT_NOT_FOUND for an unknown anchor handle or program index,
 * MRT_INVALID_ARGUMENT for unsupported models (remote-buffer anchors without
 * TensorData) and for a replica index out of range, MRT_VERSION_MISMATCH
 * for a model built for another runtime package (unless check_package_hash
 * is false), MRT_DEVICE_ERROR for a simulated device failure (the message
 * names the recovery action, mrt_last_error_recovery_action() gives it;
 * mrt_session_reload() resets the device and recovers), MRT_CANCELLED when mrt_session_stop() interrupted the programs.
 * A failed call leaves the session usable.
 *
 * Thread safety: mrt_session_stop() and mrt_session_is_stopped() may be
 * called from any thread at any time, and so may mrt_session_num_replicas().
 * Every other call on a session must not overlap another call on it (but
 * mrt_session_run_main_programs_for_replica() for distinct replicas may),
 * and sessions sharing a device must be used one at a time. */
typedef struct mrt_session mrt_session;

/* An anchor predicate: for one anchor, a policy - an
 * mrt_anchor_callback_policy (kind MRT_PREDICATE_ANCHOR_CALLBACK) or an
 * mrt_popef_data_usage_policy (kind MRT_PREDICATE_POPEF_DATA_USAGE).
 * Immutable once made: may be used from any number of threads and by any
 * number of sessions; sessions keep their own reference, so it may be
 * destroyed right after use. */
typedef struct mrt_anchor_predicate mrt_anchor_predicate;

typedef enum mrt_launch_policy {
  MRT_LAUNCH_IMMEDIATE = 0, /* the session gets a device for the model when created */
  MRT_LAUNCH_DEFERRED = 1   /* the caller binds a device: mrt_session_bind_to_device() */
} mrt_launch_policy;

typedef enum mrt_predicate_kind {
  MRT_PREDICATE_ANCHOR_CALLBACK = 0,  /* results are mrt_anchor_callback_policy */
  MRT_PREDICATE_POPEF_DATA_USAGE = 1  /* results are mrt_popef_data_usage_policy */
} mrt_predicate_kind;

typedef enum mrt_anchor_callback_policy {
  MRT_BIND_USER_CB = 0,  /* bind the factory's callback */
  MRT_BIND_EMPTY_CB = 1, /* bind a callback that does nothing */
  MRT_SKIP_CB = 2        /* leave the anchor's binding as it is */
} mrt_anchor_callback_policy;

typedef enum mrt_popef_data_usage_policy {
  MRT_USE_POPEF_DATA_IF_ANY = 0, /* bind the anchor's TensorData / FeedData if the model has it */
  MRT_USE_USER_DATA = 1          /* do not: the user binds a callback */
} mrt_popef_data_usage_policy;

/* The prebuilt predicates (seed predicate_factory). Each returns
 * accept_policy for the anchors it selects and reject_policy otherwise. */
typedef enum mrt_prebuilt_predicate {
  MRT_PRED_PROGRAM_FLOW_LOAD = 0,    /* anchors moved by the model's Load programs */
  MRT_PRED_PROGRAM_FLOW_MAIN = 1,    /* ... Main programs */
  MRT_PRED_PROGRAM_FLOW_SAVE = 2,    /* ... Save programs */
  MRT_PRED_PROGRAM_NOT_ASSIGNED = 3, /* anchors no program moves */
  MRT_PRED_NON_SCALAR_TYPE = 4,      /* anchors of rank >= 1 (kind ANCHOR_CALLBACK only) */
  MRT_PRED_PROGRAM_INDEXES = 5       /* anchors moved by any of the given programs */
} mrt_prebuilt_predicate;

/* Which anchors mrt_session_anchor_count() / mrt_session_anchor() list. */
typedef enum mrt_session_anchor_set {
  MRT_SESSION_INPUT_ANCHORS = 0,      /* every input, PopEF-fed and remote-buffer ones too */
  MRT_SESSION_USER_INPUT_ANCHORS = 1, /* inputs that need a user callback */
  MRT_SESSION_USER_OUTPUT_ANCHORS = 2 /* outputs that need a user callback */
} mrt_session_anchor_set;

/* An anchor callback: called whenever the device reads (input anchor: write
 * `size` bytes to buffer) or wrote (output anchor: read them) the anchor's
 * stream. Called on the thread running the session's programs (the caller
 * of mrt_session_run_*), in program order; calls never overlap for one
 * session. buffer is valid only during the call. Must not call functions on
 * the same session other than mrt_session_stop() / mrt_session_is_stopped(). */
typedef void (*mrt_anchor_callback_fn)(void *buffer, uint64_t size, void *user_data);

/* A callback triple, as a factory hands it back. */
typedef struct mrt_anchor_callback {
  mrt_anchor_callback_fn fn;       /* NULL: none */
  void *user_data;
  void (*user_data_free)(void *);  /* may be NULL */
} mrt_anchor_callback;

/* A callback factory: given an anchor (borrowed, valid during the call),
 * fills *out_callback (zeroed before the call) and returns true, or returns
 * false for "no callback: keep the anchor's binding". If it returns false
 * but set user_data_free, that is called at once. Called on the thread that
 * called mrt_session_set_user_*_handler(), once per anchor (of a replicated
 * model: once per anchor and replica, anchor->replica saying which), never
 * overlapping. */
typedef bool (*mrt_callback_factory_fn)(const mrt_anchor_info *anchor, mrt_anchor_callback *out_callback,
                                        void *user_data);

/* A user predicate: returns the policy (of the predicate's kind) for an
 * anchor (borrowed, valid during the call). Called on the thread of the call
 * that uses the predicate (session creation, handlers, mrt_anchor_predicate_
 * evaluate), possibly from several threads at once if the predicate is used
 * so. A value outside the kind's enum makes that call fail with
 * MRT_INVALID_ARGUMENT. */
typedef int32_t (*mrt_anchor_predicate_fn)(const mrt_anchor_info *anchor, void *user_data);

/* One group of mrt_anchor_predicate_create_program_policies(). */
typedef struct mrt_programs_with_policy {
  const uint64_t *programs; /* program indices; may be NULL when num_programs is 0 */
  size_t num_programs;
  int32_t policy;
} mrt_programs_with_policy;

/* One entry of mrt_anchor_predicate_create_anchor_policies(). */
typedef struct mrt_anchor_with_policy {
  const char *handle; /* the anchor's handle */
  int32_t policy;
} mrt_anchor_with_policy;

/* A prebuilt predicate. `model` is needed by the PROGRAM_FLOW ones (its
 * program flow is copied; the predicate does not keep the model) and may be
 * NULL otherwise; `programs`/`num_programs` by PROGRAM_INDEXES (copied).
 * MRT_INVALID_ARGUMENT for an unknown kind, prebuilt value or policy, or a
 * missing argument. *out belongs to the caller: mrt_anchor_predicate_destroy(). */
MRT_API mrt_status mrt_anchor_predicate_create(int32_t kind, int32_t prebuilt, const mrt_model *model,
                                               const uint64_t *programs, size_t num_programs,
                                               int32_t accept_policy, int32_t reject_policy,
                                               mrt_anchor_predicate **out) MRT_NOEXCEPT;
/* predProgramIndexes with groups: the first group (in order) that moves an
 * anchor gives its policy; reject_policy if none does. Arrays are copied. */
MRT_API mrt_status mrt_anchor_predicate_create_program_policies(int32_t kind,
                                                                const mrt_programs_with_policy *groups,
                                                                size_t num_groups, int32_t reject_policy,
                                                                mrt_anchor_predicate **out) MRT_NOEXCEPT;
/* predAnchorsPolicies: the anchors named by handle get their policy,
 * others reject_policy. Handles are copied. */
MRT_API mrt_status mrt_anchor_predicate_create_anchor_policies(int32_t kind,
                                                               const mrt_anchor_with_policy *entries,
                                                               size_t num_entries, int32_t reject_policy,
                                                               mrt_anchor_predicate **out) MRT_NOEXCEPT;
/* A user function (see mrt_anchor_predicate_fn). user_data_free is called
 * when the last user of the predicate lets go (also if this call fails). */
MRT_API mrt_status mrt_anchor_predicate_create_user(int32_t kind, mrt_anchor_predicate_fn fn, void *user_data,
                                                    void (*user_data_free)(void *),
                                                    mrt_anchor_predicate **out) MRT_NOEXCEPT;
/* andBind / orBind: accept_policy when every (and) / any (or) of the
 * num_predicates (>= 1) predicates returns accept_policy, reject_policy
 * otherwise. All must be of `kind`; the result keeps its own references. */
MRT_API mrt_status mrt_anchor_predicate_and(int32_t kind, int32_t accept_policy, int32_t reject_policy,
                                            const mrt_anchor_predicate *const *predicates, size_t num_predicates,
                                            mrt_anchor_predicate **out) MRT_NOEXCEPT;
MRT_API mrt_status mrt_anchor_predicate_or(int32_t kind, int32_t accept_policy, int32_t reject_policy,
                                           const mrt_anchor_predicate *const *predicates, size_t num_predicates,
                                           mrt_anchor_predicate **out) MRT_NOEXCEPT;
/* The policy the predicate gives the anchor of `model` whose handle is
 * anchor_handle (MRT_NOT_FOUND if none). */
MRT_API mrt_status mrt_anchor_predicate_evaluate(const mrt_anchor_predicate *predicate, const mrt_model *model,
                                                 const char *anchor_handle, int32_t *out_policy) MRT_NOEXCEPT;
/* NULL is accepted. Sessions using the predicate keep it alive. */
MRT_API void mrt_anchor_predicate_destroy(mrt_anchor_predicate *predicate) MRT_NOEXCEPT;

/* Session options; fill with mrt_session_config_init(). Creation rejects
 * (MRT_INVALID_ARGUMENT) a struct_size smaller than the first version. */
typedef struct mrt_session_config {
  size_t struct_size;
  int32_t policy;             /* an mrt_launch_policy; default MRT_LAUNCH_DEFERRED */
  /* Which input anchors use the model's TensorData/FeedData: a predicate of
   * kind MRT_PREDICATE_POPEF_DATA_USAGE, or NULL (default) for all. The
   * session keeps its own reference. */
  const mrt_anchor_predicate *pred_tensor_data;
  bool check_package_hash;    /* default true */
  /* How an Immediate session waits for a device; NULL (default): NO_WAIT. Copied. */
  const mrt_device_wait_config *wait_config;
  /* Deprecated spelling of max_look_ahead_syncs (the first header's): "unlimited"
   * or an unsigned integer; NULL (default): use max_look_ahead_syncs. Copied. */
  const char *max_look_ahead;
  /* ---- appended after V1 ---- */
  /* Host syncs (input transfers of the session's queue manager) prepared
   * ahead through stream prefetch; < 0: unlimited (default). The same type
   * and meaning as mrt_model_runner_config.max_look_ahead.
   * MRT_INVALID_ARGUMENT if max_look_ahead is also set. */
  int64_t max_look_ahead_syncs;
  /* mrt_session_create_from_files() loads the model of this name (one of a
   * fused PopEF's models, see mrt_model_fuse()); MRT_NOT_FOUND listing the
   * models present if the files have none of that name. NULL (default): the
   * files' only model. mrt_session_create() requires NULL or the model's
   * own name (MRT_INVALID_ARGUMENT). Copied. */
  const char *model_name;
} mrt_session_config;
#define MRT_SESSION_CONFIG_V1_SIZE MRT_STRUCT_SIZE(mrt_session_config, max_look_ahead)

/* The defaults, struct_size and init_sized as in "Sized structs" at the top. */
MRT_API void mrt_session_config_init(mrt_session_config *config) MRT_NOEXCEPT;
MRT_API mrt_status mrt_session_config_init_sized(mrt_session_config *config, size_t size) MRT_NOEXCEPT;
#define mrt_session_config_init(config) mrt_session_config_init_sized((config), sizeof *(config))

/* A session of `model` (the session keeps the model alive); config NULL for
 * the defaults. An Immediate session gets a device for the model (as
 * mrt_device_manager_get_device_for_model() with config->wait_config) and
 * loads the executable, or fails (MRT_UNAVAILABLE if no device is free).
 * First the model's metadata is checked against its executable (docs/popef.md,
 * "Against the executable"): MRT_CORRUPT_MODEL names the anchor or program
 * and both values if they disagree; MRT_RESOURCE_EXHAUSTED if the simulated
 * device would take more host memory than mrt_host_memory_limit() leaves.
 * *out belongs to the caller: mrt_session_destroy(). */
MRT_API mrt_status mrt_session_create(const mrt_model *model, const mrt_session_config *config,
                                      mrt_session **out) MRT_NOEXCEPT;
/* As mrt_session_create() with the model held by the PopEF files (see mrt_model_load()). */
MRT_API mrt_status mrt_session_create_from_files(const char *const *paths, size_t num_paths,
                                                 const mrt_session_config *config,
                                                 mrt_session **out) MRT_NOEXCEPT;
/* Leaves the device (without running Save) and frees the session and its
 * callbacks (their user_data_free run here). Its queue manager, if its
 * handle is still alive, is detached (see mrt_session_create_queue_manager());
 * producers blocked in its queues may be on other threads. NULL is
 * accepted. Must not overlap any other call on the session,
 * mrt_session_stop() included. */
MRT_API void mrt_session_destroy(mrt_session *session) MRT_NOEXCEPT;

/* The session's model: a new reference for the caller (mrt_model_destroy()). */
MRT_API mrt_status mrt_session_model(const mrt_session *session, mrt_model **out) MRT_NOEXCEPT;

/* Binds to `device` (unbinding from the current device first, which runs
 * Save if Load has run) and loads the executable on it. The session keeps
 * its own reference to the device: the caller may destroy its handle. */
MRT_API mrt_status mrt_session_bind_to_device(mrt_session *session, const mrt_device *device) MRT_NOEXCEPT;
/* Runs Save if Load has run, and leaves the device (FAILED_PRECONDITION if not bound). */
MRT_API mrt_status mrt_session_unload_from_device(mrt_session *session) MRT_NOEXCEPT;
/* Loads the executable again on the last bound device, resetting it after a
 * device error; needed after mrt_session_stop(). FAILED_PRECONDITION if the
 * session was never bound. */
MRT_API mrt_status mrt_session_reload(mrt_session *session) MRT_NOEXCEPT;

/* Run the programs of one phase of the model's program flow, in order, on
 * the calling thread, which is the thread the anchor callbacks, the queues'
 * transfers and their timeout callbacks run on. Return when the programs are
 * done (MRT_CANCELLED if mrt_session_stop() interrupted them). */
MRT_API mrt_status mrt_session_run_load_programs(mrt_session *session) MRT_NOEXCEPT;
/* Runs the Load programs first if they have not run since the executable was loaded.
 *
 * With a queue manager, on CPUs the thread running the programs shares
 * with the producer threads (more threads than CPUs, a process pinned to
 * one CPU): put both under Linux's SCHED_BATCH policy
 * (sched_setscheduler(0, SCHED_BATCH, &param) on each thread, param's
 * priority 0; no privilege needed). Under the default policy a thread woken
 * by the other (the device by an enqueue, a producer by an entry freed in a
 * full ring) preempts it at once, so the CPU changes hands at every
 * transfer, and a context switch costs more than a small model's run; under
 * SCHED_BATCH neither preempts the other, the producer fills the rings, the
 * device drains them, and one switch carries as many runs as the rings hold
 * (ring_size_multiplier). On CPUs of their own it changes nothing. The
 * model runner's device threads use it already. */
MRT_API mrt_status mrt_session_run_main_programs(mrt_session *session) MRT_NOEXCEPT;
MRT_API mrt_status mrt_session_run_save_programs(mrt_session *session) MRT_NOEXCEPT;
/* Each program once, in the order given; no implicit Load. programs may be
 * NULL when num_programs is 0. */
MRT_API mrt_status mrt_session_run_programs(mrt_session *session, const uint64_t *programs,
                                            size_t num_programs) MRT_NOEXCEPT;

/* Binds a callback to the stream of the anchor whose handle is
 * anchor_handle (MRT_NOT_FOUND if none; MRT_INVALID_ARGUMENT for a
 * remote-buffer anchor, which the session fills itself). fn NULL binds an
 * empty callback. Replaces the previous binding; a replaced callback's
 * user_data_free runs when the session no longer needs it. May be called
 * before binding to a device. */
MRT_API mrt_status mrt_session_set_callback_for_anchor(mrt_session *session, const char *anchor_handle,
                                                       mrt_anchor_callback_fn fn, void *user_data,
                                                       void (*user_data_free)(void *)) MRT_NOEXCEPT;
/* A model compiled with replication factor R (mrt_model_info's
 * replication_factor) runs on a device of R x (IPUs per replica) IPUs and
 * has a stream per anchor per replica. mrt_session_set_callback_for_anchor
 * binds every replica (the callback is then called from each replica's
 * thread, concurrently); this binds replica `replica` (0 .. R - 1) only, as
 * mrt_session_set_callback_for_anchor does otherwise. MRT_INVALID_ARGUMENT
 * naming the replica if it is out of range (user_data_free runs then too).
 * Handler factories (mrt_session_set_user_input_handler) are called once per
 * replica, in replica order, each result binding that replica (the anchor
 * they are given says which: mrt_anchor_info's replica). */
MRT_API mrt_status mrt_session_set_replica_callback_for_anchor(mrt_session *session, const char *anchor_handle,
                                                               uint32_t replica, mrt_anchor_callback_fn fn,
                                                               void *user_data,
                                                               void (*user_data_free)(void *)) MRT_NOEXCEPT;
/* The replicas of the session's model: its replication factor R (1 for a
 * model that is not replicated); replica indices run 0 .. R - 1. Any thread. */
MRT_API mrt_status mrt_session_num_replicas(const mrt_session *session, uint32_t *out_count) MRT_NOEXCEPT;
/* mrt_session_run_main_programs() on replica `replica` (0 .. R - 1) only, on
 * the calling thread, which runs that replica's anchor callbacks and queue
 * transfers: one in-model replica served by its own thread. Runs the
 * replica's Load programs first if they have not run on it since the
 * executable was loaded. Runs for distinct replicas may overlap, each on
 * its own thread, once the executable is loaded (the session is bound and
 * no other session has run on its device since); nothing else may be called
 * on the session meanwhile but mrt_session_stop() and
 * mrt_session_is_stopped(). MRT_INVALID_ARGUMENT naming the replica if it is
 * out of range; other errors as mrt_session_run_main_programs(). */
MRT_API mrt_status mrt_session_run_main_programs_for_replica(mrt_session *session, uint32_t replica) MRT_NOEXCEPT;

/* Fills the remote buffer of the anchor whose handle is anchor_handle from
 * the `size` bytes at `data` (all its slots) instead of its TensorData: at
 * once if the executable is loaded, and at every later load (reload, a new
 * device). The bytes are copied before this returns, once size has been
 * checked. MRT_NOT_FOUND for an unknown handle; MRT_INVALID_ARGUMENT for an
 * anchor with a stream, NULL data or a size other than the anchor's (the
 * message names the anchor and both sizes). Not concurrent with other calls
 * on the session. (ModelRunner does this for frozen inputs.) */
MRT_API mrt_status mrt_session_set_remote_buffer_data(mrt_session *session, const char *anchor_handle,
                                                      const void *data, uint64_t size) MRT_NOEXCEPT;

/* For each input (output) anchor with a stream: the predicate's policy
 * (kind MRT_PREDICATE_ANCHOR_CALLBACK; NULL: BIND_USER_CB for all). For
 * BIND_USER_CB the factory is called - unless skip_connected and the anchor
 * already has a binding - and a callback it returns replaces the binding;
 * BIND_EMPTY_CB binds an empty callback; SKIP_CB leaves the anchor alone.
 * factory_user_data_free runs before this returns (the factory is not kept). */
MRT_API mrt_status mrt_session_set_user_input_handler(mrt_session *session, mrt_callback_factory_fn factory,
                                                      void *factory_user_data,
                                                      void (*factory_user_data_free)(void *),
                                                      const mrt_anchor_predicate *predicate,
                                                      bool skip_connected) MRT_NOEXCEPT;
MRT_API mrt_status mrt_session_set_user_output_handler(mrt_session *session, mrt_callback_factory_fn factory,
                                                       void *factory_user_data,
                                                       void (*factory_user_data_free)(void *),
                                                       const mrt_anchor_predicate *predicate,
                                                       bool skip_connected) MRT_NOEXCEPT;

/* The anchors of set `set` (an mrt_session_anchor_set), in model order. */
MRT_API mrt_status mrt_session_anchor_count(const mrt_session *session, int32_t set,
                                            size_t *out_count) MRT_NOEXCEPT;
/* Anchor `index` of the set (MRT_INVALID_ARGUMENT if out of range). Set
 * out_anchor->struct_size first (as for mrt_model_anchor()); pointers are
 * borrowed from the session's model, valid while the session lives. */
MRT_API mrt_status mrt_session_anchor(const mrt_session *session, int32_t set, size_t index,
                                      mrt_anchor_info *out_anchor) MRT_NOEXCEPT;

/* Called once per (program, unbound anchor) by
 * mrt_session_anchors_not_connected(), on the calling thread, in program
 * order; anchor is borrowed, valid during the call. */
typedef void (*mrt_unbound_anchor_fn)(uint64_t program, const mrt_anchor_info *anchor, void *user_data);
/* Reports every anchor with a stream and no binding moved by each of the
 * programs (MRT_NOT_FOUND for an unknown index); *out_count (may be NULL)
 * gets the number of reports. visit may be NULL to only count. */
MRT_API mrt_status mrt_session_anchors_not_connected(const mrt_session *session, const uint64_t *programs,
                                                     size_t num_programs, mrt_unbound_anchor_fn visit,
                                                     void *user_data, size_t *out_count) MRT_NOEXCEPT;
/* MRT_FAILED_PRECONDITION, listing each program and its unbound anchors, if any. */
MRT_API mrt_status mrt_session_error_if_anchors_not_connected(const mrt_session *session,
                                                              const uint64_t *programs,
                                                              size_t num_programs) MRT_NOEXCEPT;

/* Stops running programs at their next host sync (the run returns
 * MRT_CANCELLED) and every later run until mrt_session_reload(). Callbacks
 * waiting for data should give up when mrt_session_is_stopped() becomes
 * true. Does nothing if the executable is not loaded. Any thread. */
MRT_API mrt_status mrt_session_stop(mrt_session *session) MRT_NOEXCEPT;
MRT_API mrt_status mrt_session_is_stopped(const mrt_session *session, bool *out_stopped) MRT_NOEXCEPT;

/* The modelled time on the target: the cycles replica `replica` (0 .. R -
 * 1, R the model's replication factor; 0 for a model that is not
 * replicated) of the session's device has run since the executable was last
 * loaded (binding, reload: 0 before), Load and every Main run, host
 * transfers, exchange and syncs included, and the device's clock in Hz
 * (out_clock_hz may be NULL). (cycles after - cycles before) / clock_hz is
 * the modelled device time of the runs in between. MRT_INVALID_ARGUMENT
 * naming the replica and R if it is out of range. May be called from any
 * thread while another runs the session's programs (the counter is read
 * atomically), not during mrt_session_bind_to_device() or _reload(). */
MRT_API mrt_status mrt_session_device_cycles(const mrt_session *session, uint32_t replica,
                                             uint64_t *out_cycles, double *out_clock_hz) MRT_NOEXCEPT;

/* Simulated faults, as mrt_engine_insert_simulated_error() and the seed's
 * Engine: `error` (an mrt_simulated_error) fires whenever the session runs
 * program step `step` (an index of mrt_executable_step() on the model's
 * executable, mrt_model_get_executable()) on `tile`, until erased or
 * cleared. The run fails with MRT_DEVICE_ERROR and the error's recovery
 * action (mrt_last_error_recovery_action()); mrt_session_reload() resets the
 * device. MRT_INVALID_ARGUMENT for an unknown error, a step or tile out of
 * range or a location that already has one; MRT_NOT_FOUND when erasing a
 * location that has none. Not during a run of the session. */
MRT_API mrt_status mrt_session_insert_simulated_error(mrt_session *session, int32_t error, uint32_t step,
                                                      uint32_t tile) MRT_NOEXCEPT;
MRT_API mrt_status mrt_session_erase_simulated_error(mrt_session *session, uint32_t step,
                                                     uint32_t tile) MRT_NOEXCEPT;
MRT_API mrt_status mrt_session_clear_simulated_errors(mrt_session *session) MRT_NOEXCEPT;

/* ------------------------------------------------------------------------ */
/* ---- Queues ---- */

/* Queues of pointers between the caller and a device (the seeds' Queue
 * Manager). A queue manager holds one input queue per user input anchor of a
 * model (anchors without TensorData/FeedData) and one output queue per
 * output anchor. Queues carry POINTERS to the caller's memory, never tensor
 * bytes: the bytes are copied once, straight between the caller's buffer and
 * the device's, when the device transfers the anchor.
 *
 * Batches: if the model's tensor is [B, ...], one sample is its size / B
 * bytes, and any buffer of a positive whole number of samples may be
 * enqueued: small buffers are packed into one device transfer, large ones
 * split across several. Enqueue outputs in the same sample counts as the
 * inputs.
 *
 * Threads: each queue has ONE producer thread (enqueue, enqueue_lock and
 * enqueue_complete, flush) at a time, and the device thread on the other
 * side. disconnect may be called from any thread. reset only while no
 * other thread uses the queue. A manager's lookups may be called from any
 * thread.
 *
 * Lifetime: queue handles are borrowed from their manager and valid until
 * the manager is destroyed.
 *
 * A manager comes from a session (mrt_session_create_queue_manager(): the
 * session's device transfers the data while the session runs its programs)
 * or, without a session, from mrt_queue_manager_create(); then the caller
 * plays the device with mrt_queue_manager_transfer() (custom transports,
 * tests). */
typedef struct mrt_queue_manager mrt_queue_manager;
typedef struct mrt_input_queue mrt_input_queue;
typedef struct mrt_output_queue mrt_output_queue;

/* Called on the device thread when a transfer has waited timeout_ns for the
 * caller's data (input) or buffers (output), and again every timeout_ns it
 * keeps waiting. anchor_name is the queue's name, direction an
 * mrt_tensor_type, bytes_done how much of the transfer is already filled or
 * drained. Calls for different anchors may come from different device
 * threads; calls for one anchor never overlap. To let the device go on,
 * flush the queue; flushing is a producer call, so keep it from overlapping
 * with your producer thread's calls on that queue (e.g. one mutex). */
typedef void (*mrt_queue_timeout_fn)(const char *anchor_name, int32_t direction,
                                     int64_t bytes_done, void *user_data);

/* One anchor's ring size multiplier, in place of the group's (the seeds'
 * RingSizeMultiplierProdType giving anchors of one group different values). */
typedef struct mrt_ring_size_override {
  const char *anchor_name;  /* an anchor of the model (one without a queue is ignored) */
  int64_t multiplier;       /* at least 1 */
} mrt_ring_size_override;

/* Fill with mrt_queue_manager_config_init(), then set fields. */
typedef struct mrt_queue_manager_config {
  size_t struct_size;
  /* Ring entries per queue = multiplier x B (the model's batch): how many transfers of single
   * samples can be queued ahead. For anchors of the Main programs; default 64 (a runner's: 2; on a
   * shared CPU one context switch carries at most a ring's worth of transfers; an entry is 80
   * bytes, so 5 KiB per queue at batch 1 and 5 MiB at batch 1024), at least 1. */
  int64_t ring_size_multiplier;
  /* The same for anchors only of the Load or Save programs; default 1. */
  int64_t load_save_ring_size_multiplier;
  /* Call timeout_fn after a transfer has waited this long, and again every
   * timeout_ns it keeps waiting. MRT_FOREVER (default, any negative value):
   * wait forever and never call it; 0 is refused. */
  int64_t timeout_ns;
  mrt_queue_timeout_fn timeout_fn;       /* may be NULL */
  void *timeout_user_data;
  void (*timeout_user_data_free)(void *user_data);  /* called once, when the manager goes */
  /* Appended after the first version: */
  /* Anchors whose multiplier is not their group's (each named once): read
   * during the create call only. MRT_NOT_FOUND for a name that is no anchor
   * of the model, MRT_INVALID_ARGUMENT for NULL, a repeat or a multiplier
   * below 1. Default none. */
  const mrt_ring_size_override *ring_size_overrides;
  size_t num_ring_size_overrides;
} mrt_queue_manager_config;
#define MRT_QUEUE_MANAGER_CONFIG_V1_SIZE MRT_STRUCT_SIZE(mrt_queue_manager_config, timeout_user_data_free)

/* The defaults, as far as "Sized structs" at the top says. */
MRT_API void mrt_queue_manager_config_init(mrt_queue_manager_config *config) MRT_NOEXCEPT;
MRT_API mrt_status mrt_queue_manager_config_init_sized(mrt_queue_manager_config *config, size_t size) MRT_NOEXCEPT;
#define mrt_queue_manager_config_init(config) mrt_queue_manager_config_init_sized((config), sizeof *(config))

/* A manager over a model's anchors, not connected to any device: the caller
 * moves the data with mrt_queue_manager_transfer(). config may be NULL for
 * the defaults. The config's timeout_user_data_free runs exactly once, also
 * when this call fails. */
MRT_API mrt_status mrt_queue_manager_create(const mrt_model *model,
                                            const mrt_queue_manager_config *config,
                                            mrt_queue_manager **out) MRT_NOEXCEPT;
/* The seeds' Session::createQueueManager: a manager with one queue per
 * anchor of the session that needs user data (the inputs without PopEF data
 * and the outputs, remote-buffer anchors excepted), each queue's stream
 * connected to the session's device in place of earlier callbacks. The
 * session then transfers the data whenever it runs programs
 * (mrt_session_run_main_programs() on any one thread), while producer
 * threads enqueue. config may be NULL for the defaults; its ring size
 * multipliers apply to the anchors of the model's Main programs and to the
 * others (the seeds' ringSizeMultForMainProgs), its timeout callback is
 * called on the thread running the programs. The config's
 * timeout_user_data_free runs exactly once, also when this call fails.
 *
 * A model compiled with replication factor R > 1 has a manager per
 * replica: this refuses it (MRT_INVALID_ARGUMENT), see
 * mrt_session_create_queue_manager_for_replica().
 *
 * mrt_session_stop() disconnects the queues (blocked calls return) and
 * mrt_session_reload() resets them. A session has one manager at a time: a
 * second call replaces the first, whose handle stays valid but detached (as
 * below). Must not overlap mrt_session_stop() or other calls on the session.
 *
 * *out belongs to the caller: mrt_queue_manager_destroy(), before or after
 * the session, in either order:
 * - destroying the session first detaches the manager: its queues are
 *   disconnected (blocked enqueues return MRT_CANCELLED, the caller's
 *   memory is not touched again, user_data_free of pending entries runs when
 *   the manager is destroyed) and later calls on the manager or its queues
 *   fail with MRT_FAILED_PRECONDITION ("queue manager: its session was
 *   destroyed"); the info and name calls keep working;
 * - destroying the manager first disconnects its queues, so that the
 *   session's runs get zeros for its inputs and drop its outputs instead of
 *   waiting (mrt_session_reload() would reconnect them: bind new callbacks
 *   or make a new manager to feed the session again). */
MRT_API mrt_status mrt_session_create_queue_manager(mrt_session *session,
                                                    const mrt_queue_manager_config *config,
                                                    mrt_queue_manager **out) MRT_NOEXCEPT;
/* A replicated model (mrt_session_num_replicas() R > 1) has a manager per
 * replica, which mrt_session_create_queue_manager() refuses
 * (MRT_INVALID_ARGUMENT): this makes replica `replica`'s (0 .. R - 1), its
 * queues connected to that replica's streams, fed whenever the replica runs
 * its programs (mrt_session_run_main_programs_for_replica() on the
 * replica's thread, or mrt_session_run_main_programs() running every
 * replica, each on a thread of its own, which then calls the timeout
 * callback). Each replica has one manager at a time: a second call for the
 * same replica replaces that replica's manager only. Everything else
 * (ownership, destroy order, stop and reload, user_data_free) as
 * mrt_session_create_queue_manager(). Replica 0 of a model that is not
 * replicated is its only one. MRT_INVALID_ARGUMENT naming the replica if it
 * is out of range. */
MRT_API mrt_status mrt_session_create_queue_manager_for_replica(mrt_session *session, uint32_t replica,
                                                                const mrt_queue_manager_config *config,
                                                                mrt_queue_manager **out) MRT_NOEXCEPT;

/* Frees a manager from either function above (see there for a session's
 * manager). NULL is ignored. No thread may be inside a call on the manager
 * or its queues. */
MRT_API void mrt_queue_manager_destroy(mrt_queue_manager *manager) MRT_NOEXCEPT;

/* The queue of an anchor, by anchor name or stream handle (MRT_NOT_FOUND
 * listing the queues otherwise). Borrowed from the manager. */
MRT_API mrt_status mrt_queue_manager_input_queue(mrt_queue_manager *manager, const char *name,
                                                 mrt_input_queue **out) MRT_NOEXCEPT;
MRT_API mrt_status mrt_queue_manager_output_queue(mrt_queue_manager *manager, const char *name,
                                                  mrt_output_queue **out) MRT_NOEXCEPT;

/* How many queues, and the name of the index-th (names in sorted order;
 * borrowed from the manager). MRT_INVALID_ARGUMENT for an index out of range. */
MRT_API mrt_status mrt_queue_manager_num_inputs(const mrt_queue_manager *manager,
                                                size_t *out_count) MRT_NOEXCEPT;
MRT_API mrt_status mrt_queue_manager_num_outputs(const mrt_queue_manager *manager,
                                                 size_t *out_count) MRT_NOEXCEPT;
MRT_API mrt_status mrt_queue_manager_input_name(const mrt_queue_manager *manager, size_t index,
                                                const char **out_name) MRT_NOEXCEPT;
MRT_API mrt_status mrt_queue_manager_output_name(const mrt_queue_manager *manager, size_t index,
                                                 const char **out_name) MRT_NOEXCEPT;

/* flush / disconnect / reset every queue (see the queue calls below):
 * flush_all is a producer call on every queue, disconnect_all may be called
 * from any thread, reset_all only while no other thread is inside a call on
 * any of the queues. */
MRT_API mrt_status mrt_queue_manager_flush_all(mrt_queue_manager *manager) MRT_NOEXCEPT;
MRT_API mrt_status mrt_queue_manager_disconnect_all(mrt_queue_manager *manager) MRT_NOEXCEPT;
MRT_API mrt_status mrt_queue_manager_reset_all(mrt_queue_manager *manager) MRT_NOEXCEPT;

/* The device side of one anchor (by stream handle or name), what a session's
 * engine does for each transfer: for an input, copies the next enqueued
 * bytes into device_buffer; for an output, copies device_buffer into the
 * next enqueued buffers. device_buffer holds exactly the tensor's size in
 * bytes. Blocks until enough has been enqueued (or the queue is
 * disconnected: then inputs get zeros and outputs are dropped). Call it for
 * one anchor from one thread at a time. Runs the enqueued callbacks.
 * MRT_FAILED_PRECONDITION for a session's manager (its device transfers). */
MRT_API mrt_status mrt_queue_manager_transfer(mrt_queue_manager *manager, const char *handle,
                                              void *device_buffer) MRT_NOEXCEPT;

/* Called on the device thread with the user_data given at enqueue. */
typedef void (*mrt_queue_data_fn)(void *user_data);

/* Queues `size_bytes` bytes at `data` for the device. The bytes are NOT
 * copied now: `data` must stay valid and unchanged until read_complete_fn
 * runs (or the queue is disconnected). read_start_fn (may be NULL) runs just
 * before the first byte is copied, read_complete_fn (may be NULL) once the
 * last byte is. user_data_free (may be NULL) runs exactly once when the
 * library drops the entry (after read_complete_fn, at the latest when the
 * queue is reset or its manager destroyed), also when this call fails.
 * Blocks while the queue is full. MRT_INVALID_ARGUMENT if data is NULL or
 * size_bytes is not a positive multiple of the sample size;
 * MRT_CANCELLED if the queue is or gets disconnected. */
MRT_API mrt_status mrt_input_queue_enqueue(mrt_input_queue *queue, const void *data,
                                           int64_t size_bytes, mrt_queue_data_fn read_start_fn,
                                           mrt_queue_data_fn read_complete_fn, void *user_data,
                                           void (*user_data_free)(void *user_data)) MRT_NOEXCEPT;
/* Completes a partially enqueued transfer with zeros, or if none is pending
 * enqueues one whole transfer of zeros, so the device can run. Does nothing
 * on a disconnected queue. Producer thread. */
MRT_API mrt_status mrt_input_queue_flush(mrt_input_queue *queue) MRT_NOEXCEPT;
/* Empties the queue, forgets partial transfers and reconnects it. */
MRT_API mrt_status mrt_input_queue_reset(mrt_input_queue *queue) MRT_NOEXCEPT;
/* Wakes blocked calls; from now on the device gets zeros and enqueue fails
 * with MRT_CANCELLED until reset. The caller's memory is not touched again.
 * Any thread. */
MRT_API mrt_status mrt_input_queue_disconnect(mrt_input_queue *queue) MRT_NOEXCEPT;

/* Queues the buffer `data` of `size_bytes` bytes for the device's output;
 * it must stay valid until write_complete_fn runs (or the queue is
 * disconnected). Otherwise as mrt_input_queue_enqueue. */
MRT_API mrt_status mrt_output_queue_enqueue(mrt_output_queue *queue, void *data,
                                            int64_t size_bytes,
                                            mrt_queue_data_fn write_complete_fn, void *user_data,
                                            void (*user_data_free)(void *user_data)) MRT_NOEXCEPT;
/* Gives the dummy output of a flushed input a scratch buffer (completing a
 * partial transfer, or one whole transfer). Producer thread. */
MRT_API mrt_status mrt_output_queue_flush(mrt_output_queue *queue) MRT_NOEXCEPT;
/* As mrt_input_queue_reset(): empties the queue, forgets a partially
 * drained transfer and reconnects it. Only while no other thread uses it. */
MRT_API mrt_status mrt_output_queue_reset(mrt_output_queue *queue) MRT_NOEXCEPT;
/* As mrt_input_queue_disconnect(): wakes blocked calls; the device's
 * outputs are dropped and enqueue fails with MRT_CANCELLED until reset.
 * Any thread. */
MRT_API mrt_status mrt_output_queue_disconnect(mrt_output_queue *queue) MRT_NOEXCEPT;

/* Two-phase enqueue (the seeds' enqueueLock()/enqueueComplete()): the
 * producer locks the ring's next slot, fills that slot's entry in place and
 * publishes it. The library keeps one entry per ring slot, valid as long as
 * the manager (`slot` says which; fields may be appended in later
 * versions). Producer thread only, like enqueue: one entry is locked at a
 * time, and while it is, enqueue and flush (also flush_all) of that queue
 * fail with MRT_FAILED_PRECONDITION. */
typedef struct mrt_input_queue_entry {
  const void *data;                         /* as mrt_input_queue_enqueue()'s arguments */
  int64_t size_bytes;
  mrt_queue_data_fn read_start_fn;          /* may be NULL */
  mrt_queue_data_fn read_complete_fn;       /* may be NULL */
  void *user_data;
  void (*user_data_free)(void *user_data);  /* may be NULL; runs exactly once (see below) */
  int64_t slot;                             /* read-only: the ring slot, 0 .. num_buffers - 1 */
} mrt_input_queue_entry;

typedef struct mrt_output_queue_entry {
  void *data;                               /* as mrt_output_queue_enqueue()'s arguments */
  int64_t size_bytes;
  mrt_queue_data_fn write_complete_fn;      /* may be NULL */
  void *user_data;
  void (*user_data_free)(void *user_data);  /* may be NULL; runs exactly once (see below) */
  int64_t slot;                             /* read-only: the ring slot, 0 .. num_buffers - 1 */
} mrt_output_queue_entry;

/* Locks the ring's next slot and sets *out_entry to its entry, zeroed but
 * for `slot`; blocks while the ring is full, as enqueue does. While it stays
 * locked, locking again returns the same entry as the caller left it; after
 * complete, the next lock returns the next slot's. MRT_CANCELLED (and
 * *out_entry NULL) if the queue is or gets disconnected.
 *
 * The user_data and user_data_free a locked entry holds are the library's
 * from the lock on: user_data_free runs exactly once, whatever happens to
 * the entry, and never while the producer may be writing the entry:
 * - complete takes them over as mrt_input_queue_enqueue() would (it runs
 *   once the device is done with the entry, or at once if complete fails
 *   with MRT_CANCELLED);
 * - mrt_*_queue_reset() and mrt_queue_manager_reset_all() drop a locked
 *   entry and run it in that call;
 * - locking a disconnected queue drops it and runs it in that call;
 * - mrt_session_reload() drops it too; it runs in the producer's next
 *   lock, complete, enqueue, flush or reset of the queue, or at the latest
 *   in mrt_queue_manager_destroy();
 * - mrt_queue_manager_destroy() runs that of an entry still locked (also
 *   after its session was destroyed, when calls on the queue fail).
 * A complete refused with MRT_INVALID_ARGUMENT leaves both in the entry,
 * still locked. */
MRT_API mrt_status mrt_input_queue_enqueue_lock(mrt_input_queue *queue,
                                                mrt_input_queue_entry **out_entry) MRT_NOEXCEPT;
/* Publishes the locked entry, as mrt_input_queue_enqueue() with its fields
 * would (the same ownership of data and user_data from here on).
 * MRT_FAILED_PRECONDITION if no entry is locked (none was, it was completed
 * already, or the queue was reset since); MRT_INVALID_ARGUMENT if data is
 * NULL or size_bytes is not a positive multiple of the sample size: the
 * entry stays locked and user_data_free is not called, so fix it and
 * complete again; MRT_CANCELLED if the queue was disconnected since the
 * lock (user_data_free runs). Never blocks. */
MRT_API mrt_status mrt_input_queue_enqueue_complete(mrt_input_queue *queue) MRT_NOEXCEPT;
/* As the input calls, for output buffers (mrt_output_queue_enqueue()). */
MRT_API mrt_status mrt_output_queue_enqueue_lock(mrt_output_queue *queue,
                                                 mrt_output_queue_entry **out_entry) MRT_NOEXCEPT;
MRT_API mrt_status mrt_output_queue_enqueue_complete(mrt_output_queue *queue) MRT_NOEXCEPT;

/* What a queue transfers. Set struct_size (mrt_queue_info_init) before
 * calling mrt_input_queue_info / mrt_output_queue_info; pointers in it are
 * borrowed from the manager. Any thread. */
typedef struct mrt_queue_info {
  size_t struct_size;        /* set by the caller, e.g. with mrt_queue_info_init() */
  const char *name;          /* the anchor name; borrowed from the manager */
  int32_t data_type;         /* an mrt_data_type */
  const int64_t *shape;      /* rank dimensions; borrowed from the manager */
  size_t rank;
  int64_t size_in_bytes;     /* one device transfer */
  int64_t sample_size_bytes; /* size_in_bytes / B: the unit of enqueued sizes */
  int64_t num_buffers;       /* ring entries */
  bool connected;            /* false after disconnect, until reset */
} mrt_queue_info;
#define MRT_QUEUE_INFO_V1_SIZE MRT_STRUCT_SIZE(mrt_queue_info, connected)

/* Zeroes *info and sets struct_size, as far as "Sized structs" at the top says. */
MRT_API void mrt_queue_info_init(mrt_queue_info *info) MRT_NOEXCEPT;
MRT_API mrt_status mrt_queue_info_init_sized(mrt_queue_info *info, size_t size) MRT_NOEXCEPT;
#define mrt_queue_info_init(info) mrt_queue_info_init_sized((info), sizeof *(info))
MRT_API mrt_status mrt_input_queue_info(const mrt_input_queue *queue,
                                        mrt_queue_info *out_info) MRT_NOEXCEPT;
MRT_API mrt_status mrt_output_queue_info(const mrt_output_queue *queue,
                                         mrt_queue_info *out_info) MRT_NOEXCEPT;

/* ------------------------------------------------------------------------ */
/* ---- Futures ---- */

/* The pending outcome of an asynchronous request (mrt_model_runner_execute_async).
 * Created by the library, owned by the caller: free with mrt_future_destroy().
 * A pending future may be destroyed: the request still completes safely, and
 * callbacks registered with mrt_future_on_ready still fire.
 * Thread safety: every function may be called from any thread, concurrently. */
typedef struct mrt_future mrt_future;

/* True once the request is done (succeeded or failed). False for NULL. */
MRT_API bool mrt_future_is_ready(const mrt_future *future) MRT_NOEXCEPT;

/* Waits until the request is done, at most timeout_ns nanoseconds
 * (MRT_FOREVER: no limit; 0: just look). With MRT_FOREVER, while no other
 * thread runs the replica's device, the calling thread runs it itself
 * until the request is done, as mrt_model_runner_execute() does (no thread
 * hand-off; on_ready callbacks of the requests it serves run on it).
 * Returns the request's status once done (MRT_OK, or
 * the code of its failure - details in mrt_future_error_message), or
 * MRT_DEADLINE_EXCEEDED if it is not done in time (then the request goes on;
 * wait again or destroy the future). MRT_INVALID_ARGUMENT for a NULL future.
 * The request's own failure is not written to mrt_last_error_message(). */
MRT_API mrt_status mrt_future_wait(mrt_future *future, int64_t timeout_ns) MRT_NOEXCEPT;

/* The status of a finished request, in *out_request_status.
 * MRT_FAILED_PRECONDITION while it is still running. */
MRT_API mrt_status mrt_future_status(const mrt_future *future,
                                     mrt_status *out_request_status) MRT_NOEXCEPT;

/* What went wrong with a failed request; "" while pending, after success or
 * for NULL. Borrowed from the future: valid until mrt_future_destroy(). */
MRT_API const char *mrt_future_error_message(const mrt_future *future) MRT_NOEXCEPT;

/* The mrt_recovery_action of a request that failed with MRT_DEVICE_ERROR;
 * MRT_RECOVERY_NONE for any other outcome, a request not done yet, or NULL. */
MRT_API int32_t mrt_future_recovery_action(const mrt_future *future) MRT_NOEXCEPT;

/* Called once with the request's status. */
typedef void (*mrt_future_ready_fn)(mrt_status status, void *user_data);

/* Calls fn exactly once when the request is done: at once, on this thread,
 * if it already is; otherwise on the library thread that completes it (a
 * replica's device thread, a thread serving the device in
 * mrt_model_runner_execute(), mrt_model_runner_execute_async() facing full
 * queues or mrt_future_wait(MRT_FOREVER), or the thread destroying the
 * runner), after
 * mrt_future_wait() can already see the outcome. Callbacks of different
 * futures may run concurrently; fn must not block for long (it holds up the
 * replica) and may call any mrt_future_* function, also on this future.
 * user_data_free runs once fn has run (or at once if registration fails).
 * Several callbacks may be registered on one future. */
MRT_API mrt_status mrt_future_on_ready(mrt_future *future, mrt_future_ready_fn fn, void *user_data,
                                       void (*user_data_free)(void *user_data)) MRT_NOEXCEPT;

/* Releases the caller's handle. NULL is ignored. */
MRT_API void mrt_future_destroy(mrt_future *future) MRT_NOEXCEPT;

/* ------------------------------------------------------------------------ */
/* ---- Model runner ---- */

/* A model runner serves inference requests on a model (docs/runner.md): one
 * simulated device, session and device thread per replica. execute and
 * execute_async validate on the caller's thread, queue pointers to the
 * caller's buffers, and the replica's device thread copies each tensor once
 * per direction between those buffers and the device.
 *
 * Errors: MRT_INVALID_ARGUMENT for a wrong size, count, NULL data or a
 * replica id out of range, MRT_NOT_FOUND for an unknown tensor name (the
 * message names the value and what was expected; a misspelt name is
 * MRT_NOT_FOUND); they leave the runner serving. A request fails with
 * MRT_DEVICE_ERROR if its replica's device fails in a run that had started
 * moving its data (with auto_reset and an IPU_RESET error the replica
 * recovers and serves the requests queued behind it, and later ones;
 * mrt_future_recovery_action() tells the action; a request still waiting for
 * room in a full queue when the device fails is refused with the same
 * error), and with MRT_CANCELLED if the runner is destroyed before it ran.
 *
 * Thread safety: with config.thread_safe, execute and execute_async may be
 * called from any number of threads at once; without it, calls on one
 * runner must not overlap. The description and statistics calls may be made
 * from any thread. mrt_model_runner_destroy must not overlap other calls on
 * the runner. */
typedef struct mrt_model_runner mrt_model_runner;

/* The bytes of one named tensor, borrowed from the caller. */
typedef struct mrt_tensor_view {
  const char *name;
  void *data;
  uint64_t size_bytes;
} mrt_tensor_view;

/* The description of one input or output (DataDesc). Borrowed from the
 * runner, valid until it is destroyed. */
typedef struct mrt_data_desc {
  const char *name;
  int64_t size_in_bytes;  /* of one model batch */
  const int64_t *shape;
  size_t rank;
  int32_t data_type;      /* an mrt_data_type */
  bool popef_contains_tensor_data;
} mrt_data_desc;

/* Save-program outputs of one replica, written when the runner is destroyed
 * (with run_save_programs). The buffers must stay valid until then. */
typedef struct mrt_replica_outputs {
  uint32_t replica_id;
  const mrt_tensor_view *outputs;
  size_t num_outputs;
} mrt_replica_outputs;

/* Called on a replica's device thread when it timed out (timeout_ns)
 * waiting for input `tensor_id`, before the runner flushes dummy data into
 * every queue so the device can progress. Calls of different replicas may
 * overlap. tensor_id is valid only during the call. */
typedef void (*mrt_flush_fn)(const char *tensor_id, void *user_data);

/* Which queues a timeout flush pads: what an mrt_flush_select_fn chooses
 * (the seeds' flush_callback with its inputs and outputs). Valid only
 * during that call. Nothing added means every queue; once anything is
 * added, only the added queues are padded. */
typedef struct mrt_flush_selection mrt_flush_selection;

/* Adds the queue of anchor `name` (copied), an input or an output as
 * `direction` (an mrt_tensor_type) says. MRT_INVALID_ARGUMENT for NULL or
 * another direction. A name that is not one of the runner's queues is
 * reported when the flush happens: logged as an error, and every queue is
 * padded instead, since padding the wrong queues would hand later requests
 * the padding's results. */
MRT_API mrt_status mrt_flush_selection_add(mrt_flush_selection *selection, int32_t direction,
                                           const char *name) MRT_NOEXCEPT;

/* As mrt_flush_fn, choosing with mrt_flush_selection_add() which queues to
 * pad. Called on a replica's device thread; calls of different replicas may
 * overlap. */
typedef void (*mrt_flush_select_fn)(const char *tensor_id, mrt_flush_selection *selection, void *user_data);

/* Batching disabled (the default of batching_dim). */
#define MRT_BATCHING_DISABLED UINT32_MAX

/* ModelRunnerConfig. Fill with mrt_model_runner_config_init(), then set
 * fields. Everything is read (and copied where needed) by
 * mrt_model_runner_create(), except what is documented as borrowed. */
typedef struct mrt_model_runner_config {
  size_t struct_size;
  uint32_t replication_factor;       /* copies of the model, each on its own device; default 1.
                                        A model compiled with replication factor R serves R
                                        replicas per copy: replica ids 0 .. this x R - 1, id k
                                        being in-model replica k % R of copy k / R */
  bool run_save_programs;            /* run Save when the runner is destroyed; default false */
  bool thread_safe;                  /* allow concurrent execute calls; default false */
  const mrt_tensor_view *frozen_inputs; /* data fixed for the runner's life (overrides */
  size_t num_frozen_inputs;          /* TensorData); copied at create; default none */
  const mrt_replica_outputs *save_programs_outputs; /* borrowed until destroy; default none */
  size_t num_save_programs_outputs;
  mrt_device *const *replica_devices; /* [replica id] -> device, or NULL entries for */
  size_t num_replica_devices;        /* automatic choice; the runner keeps its own reference.
                                        In-model replication: a copy's device goes under its
                                        first replica id (a multiple of R) */
  const mrt_device_wait_config *device_wait_config; /* NULL: NO_WAIT */
  bool check_package_hash;           /* default true */
  int64_t timeout_ns;                /* flush dummy data after waiting this long for input;
                                        MRT_FOREVER (< 0): wait forever; 0 is refused;
                                        default 5 s. When > 0, also the hang watchdog: a
                                        replica whose programs move no data for
                                        max(timeout_ns, 1 s) while requests wait is stopped
                                        and those requests fail with MRT_DEADLINE_EXCEEDED
                                        (then as after a device error: auto_reset
                                        recovers). Whatever the value, destroy stops a run
                                        that does not end within that time (1 s for
                                        MRT_FOREVER) */
  bool validate_io_params;           /* check names and sizes on every execute; default true */
  uint32_t batching_dim;             /* dynamic batch sizing along this dimension of every
                                        execute tensor (all must have it, of the model's
                                        batch size): requests of any number of samples;
                                        default MRT_BATCHING_DISABLED, which takes the
                                        dimension the model records if any
                                        (mrt_onnx_options.batching_dim) */
  bool auto_reset;                   /* reset the device after a device error needing
                                        MRT_RECOVERY_IPU_RESET, or a hang; default false */
  int64_t max_look_ahead;            /* host syncs (input transfers) each replica may prepare
                                        ahead through stream prefetch while a run computes;
                                        < 0: unlimited (default): one per input stream on a
                                        model with IO tiles (engine option
                                        exchange.numIOTiles), none without; 0: never */
  uint32_t ring_buffer_size_multiplier; /* ring entries = multiplier x batch; default 2 */
  bool flush_on_waiting_outputs;     /* flush only while outputs are awaited; default false */
  int64_t batch_size_timeout_ns;     /* pad a partial batch after this long (0: at once);
                                        MRT_FOREVER: never (default) */
  int64_t data_parallel_timeout_ns;  /* MRT_FOREVER: never (default) */
  bool is_batch_size_timeout_enabled; /* default false */
  size_t request_tracepoints_buffer_size; /* traces kept per replica; 0: unbounded; default 1000 */
  mrt_flush_fn flush_callback;       /* default NULL */
  void *flush_user_data;             /* passed to flush_callback */
  void (*flush_user_data_free)(void *user_data); /* runs once when the runner no longer needs
                                        it: at destroy, or when create fails */
  /* Appended after the first version: */
  mrt_flush_select_fn flush_select_callback; /* as flush_callback, also choosing the queues
                                        to pad; gets flush_user_data; set at most one of
                                        the two; default NULL */
  const char *model_name;            /* as mrt_session_config.model_name, for
                                        mrt_model_runner_create_from_files(); copied;
                                        default NULL */
} mrt_model_runner_config;
#define MRT_MODEL_RUNNER_CONFIG_V1_SIZE MRT_STRUCT_SIZE(mrt_model_runner_config, flush_user_data_free)

/* Fills every field with its default, as far as "Sized structs" at the top says. */
MRT_API void mrt_model_runner_config_init(mrt_model_runner_config *config) MRT_NOEXCEPT;
MRT_API mrt_status mrt_model_runner_config_init_sized(mrt_model_runner_config *config, size_t size) MRT_NOEXCEPT;
#define mrt_model_runner_config_init(config) mrt_model_runner_config_init_sized((config), sizeof *(config))

/* Creates a runner for model (which it keeps alive) and attaches one device
 * per replica; returns once every replica has run the model's Load programs
 * (a replica whose Load fails is out of service, its requests failing with
 * the device error). config may be NULL for the defaults. *out belongs to the
 * caller: mrt_model_runner_destroy(). MRT_UNAVAILABLE if devices cannot be
 * had, MRT_VERSION_MISMATCH for a package hash mismatch, MRT_CORRUPT_MODEL if
 * the model's metadata disagrees with its executable (checked before any
 * device is taken; see mrt_session_create()), MRT_RESOURCE_EXHAUSTED past
 * the host memory limit. */
MRT_API mrt_status mrt_model_runner_create(const mrt_model *model, const mrt_model_runner_config *config,
                                           mrt_model_runner **out) MRT_NOEXCEPT;

/* As mrt_model_runner_create, loading the model from PopEF files. */
MRT_API mrt_status mrt_model_runner_create_from_files(const char *const *paths, size_t num_paths,
                                                      const mrt_model_runner_config *config,
                                                      mrt_model_runner **out) MRT_NOEXCEPT;

/* Runs the Save programs if configured, completes pending requests with
 * MRT_CANCELLED (their futures stay valid), releases the devices. NULL is
 * ignored. May be called from inside a callback the runner invoked (a
 * future's on_ready, flush_callback), which runs on a device thread the
 * destruction must join: the runner is then destroyed on a thread of the
 * library's own once the callback has returned, and this call returns at
 * once (flush_user_data_free tells when it is done). */
MRT_API void mrt_model_runner_destroy(mrt_model_runner *runner) MRT_NOEXCEPT;

/* What execute takes (inputs without PopEF data and not frozen) and returns,
 * in name order. The array is borrowed from the runner. */
MRT_API mrt_status mrt_model_runner_execute_inputs(const mrt_model_runner *runner,
                                                   const mrt_data_desc **out_descs,
                                                   size_t *out_count) MRT_NOEXCEPT;
MRT_API mrt_status mrt_model_runner_execute_outputs(const mrt_model_runner *runner,
                                                    const mrt_data_desc **out_descs,
                                                    size_t *out_count) MRT_NOEXCEPT;
/* Every input (output) of the model, including those PopEF provides. */
MRT_API mrt_status mrt_model_runner_model_inputs(const mrt_model_runner *runner,
                                                 const mrt_data_desc **out_descs,
                                                 size_t *out_count) MRT_NOEXCEPT;
MRT_API mrt_status mrt_model_runner_model_outputs(const mrt_model_runner *runner,
                                                  const mrt_data_desc **out_descs,
                                                  size_t *out_count) MRT_NOEXCEPT;

/* Runs one request on replica_id and returns when its outputs are written
 * into the caller's buffers. Each input and output is named once; sizes are
 * whole model batches (or any batch with batching_dim). The request's own
 * failure (MRT_DEVICE_ERROR, MRT_CANCELLED) is reported like any failed call. */
MRT_API mrt_status mrt_model_runner_execute(mrt_model_runner *runner, const mrt_tensor_view *inputs,
                                            size_t num_inputs, const mrt_tensor_view *outputs,
                                            size_t num_outputs, uint32_t replica_id) MRT_NOEXCEPT;

/* Queues one request and returns with its future (*out, owned by the
 * caller): at once, unless one of the replica's queues is full (more
 * requests in flight than it holds); then, while no other thread runs the
 * replica's device, the calling thread runs it until there is room (on_ready
 * callbacks of the requests it serves run on it, and so does the handling of
 * a device error: auto_reset's reload), else it waits for room. (It runs
 * the device only for a model whose Main copies each stream at most once
 * per run; for others it always waits for room.) After a thread served the
 * device (here, or in mrt_future_wait without a bound), the replica's device
 * thread leaves requests to the clients for 100 us: a request nobody then
 * waits for without a bound may complete up to 100 us later.
 * Input and output buffers must stay valid and untouched until the future
 * is ready. */
MRT_API mrt_status mrt_model_runner_execute_async(mrt_model_runner *runner, const mrt_tensor_view *inputs,
                                                  size_t num_inputs, const mrt_tensor_view *outputs,
                                                  size_t num_outputs, uint32_t replica_id,
                                                  mrt_future **out) MRT_NOEXCEPT;

/* Outputs the library allocated (TensorMemory), one per execute output.
 * Owned by the caller: mrt_tensor_memory_destroy(). The bytes are 64-byte
 * aligned and stay valid until the handle is destroyed. Any thread. */
typedef struct mrt_tensor_memory mrt_tensor_memory;

/* As mrt_model_runner_execute, writing the outputs into memory the library
 * allocates (*out). */
MRT_API mrt_status mrt_model_runner_execute_alloc(mrt_model_runner *runner, const mrt_tensor_view *inputs,
                                                  size_t num_inputs, uint32_t replica_id,
                                                  mrt_tensor_memory **out) MRT_NOEXCEPT;

/* As mrt_model_runner_execute_async, with library-allocated outputs:
 * *out_outputs is usable at once, its bytes are the results once *out_future
 * is ready (with MRT_OK). Both belong to the caller, independently. */
MRT_API mrt_status mrt_model_runner_execute_async_alloc(mrt_model_runner *runner,
                                                        const mrt_tensor_view *inputs, size_t num_inputs,
                                                        uint32_t replica_id, mrt_future **out_future,
                                                        mrt_tensor_memory **out_outputs) MRT_NOEXCEPT;

/* The number of outputs held. */
MRT_API mrt_status mrt_tensor_memory_count(const mrt_tensor_memory *memory, size_t *out_count) MRT_NOEXCEPT;
/* Output `index` (in name order) as a view; name and data are borrowed from
 * the handle. MRT_INVALID_ARGUMENT for an index out of range. */
MRT_API mrt_status mrt_tensor_memory_get(const mrt_tensor_memory *memory, size_t index,
                                         mrt_tensor_view *out_view) MRT_NOEXCEPT;
/* The output named `name` (MRT_NOT_FOUND if none). */
MRT_API mrt_status mrt_tensor_memory_find(const mrt_tensor_memory *memory, const char *name,
                                          mrt_tensor_view *out_view) MRT_NOEXCEPT;
/* Frees the outputs; views got from the handle become invalid. NULL is
 * ignored. Any thread, once the request's future is ready (destroying the
 * outputs of a pending request is safe too: they live until it completes). */
MRT_API void mrt_tensor_memory_destroy(mrt_tensor_memory *memory) MRT_NOEXCEPT;

/* Phases of requests, in microseconds (getTimeTrace and the monitoring
 * statistics). For mrt_model_runner_statistics_count the fields hold counts. */
typedef struct mrt_request_times {
  size_t struct_size;
  double request_us;           /* from receipt to completion */
  double read_preparation_us;  /* validating and queueing */
  double read_queue_us;        /* waiting in the queue */
  double computation_us;       /* on the device */
} mrt_request_times;
#define MRT_REQUEST_TIMES_V1_SIZE MRT_STRUCT_SIZE(mrt_request_times, computation_us)

/* The phases of a recent request of replica_id: cur -1 the last one,
 * otherwise the index among the kept traces (0 = oldest). MRT_INVALID_ARGUMENT
 * if cur is below -1, or past the kept traces (the message says how many are
 * kept); MRT_NOT_FOUND if the replica has no trace yet. Set out->struct_size
 * first. */
MRT_API mrt_status mrt_model_runner_time_trace(mrt_model_runner *runner, uint32_t replica_id, int32_t cur,
                                               mrt_request_times *out) MRT_NOEXCEPT;
/* The quantile (0..1) of each phase over the kept traces of replica_id. */
MRT_API mrt_status mrt_model_runner_statistics_percentile(mrt_model_runner *runner, double quantile,
                                                          uint32_t replica_id,
                                                          mrt_request_times *out) MRT_NOEXCEPT;
/* The mean of each phase over the kept traces. */
MRT_API mrt_status mrt_model_runner_statistics_mean(mrt_model_runner *runner, uint32_t replica_id,
                                                    mrt_request_times *out) MRT_NOEXCEPT;
/* How many requests each phase has seen, ever (as doubles). */
MRT_API mrt_status mrt_model_runner_statistics_count(mrt_model_runner *runner, uint32_t replica_id,
                                                     mrt_request_times *out) MRT_NOEXCEPT;
/* The modelled time on the target: the cycles replica_id's device has run
 * (its own lane of the device, for a replica of a model compiled with
 * replication factor R; Load and every Main run, host transfers, exchange
 * and syncs included)
 * since it was last loaded (the runner's creation, which returns once every
 * replica has run its Load programs, or a reset after a device error), and
 * the device's clock in Hz (out_clock_hz may be NULL).
 * (cycles after - cycles before) / clock_hz is the modelled device time of
 * the requests served in between: a request's output transfers are counted
 * before its outputs arrive, so a reading taken once a request completed
 * holds all of its run up to its last output (what a Main run does after
 * that is counted by the time the next reading can see it finished). A
 * model pipelined over several IPUs is the exception: its stages run at
 * once, and a pipeline step's cycles count when the whole step has ended.
 * MRT_INVALID_ARGUMENT for a replica_id out
 * of range (naming it and the runner's replicas). Any thread. */
MRT_API mrt_status mrt_model_runner_device_cycles(const mrt_model_runner *runner, uint32_t replica_id,
                                                  uint64_t *out_cycles, double *out_clock_hz) MRT_NOEXCEPT;

/* How many replicas the runner serves (valid replica_id values are 0 ..
 * count - 1): replication_factor copies x the model's own replication
 * factor R (a model compiled with R serves R replicas on each device). Any
 * thread. */
MRT_API mrt_status mrt_model_runner_num_replicas(const mrt_model_runner *runner,
                                                 uint32_t *out_count) MRT_NOEXCEPT;

/* The runner's model: a new reference for the caller (mrt_model_destroy()).
 * Any thread. */
MRT_API mrt_status mrt_model_runner_model(const mrt_model_runner *runner, mrt_model **out) MRT_NOEXCEPT;

/* The options the runner runs with (ModelRunner::config). Set
 * out_config->struct_size first (e.g. with mrt_model_runner_config_init());
 * the fields that fit are written. The array, device and callback fields
 * (frozen_inputs, save_programs_outputs, replica_devices,
 * device_wait_config, flush_callback and their counts / user data) are not
 * returned: they are NULL / 0. Any thread. */
MRT_API mrt_status mrt_model_runner_get_config(const mrt_model_runner *runner,
                                               mrt_model_runner_config *out_config) MRT_NOEXCEPT;

/* Simulated hardware faults, for testing how an application handles device
 * errors (the simulated IPU's subset of Poplar's error codes). */
typedef enum mrt_simulated_error {
  MRT_SIMULATED_TILE_EXCEPTION = 0,  /* a worker's exception; recovery: reset the IPU */
  MRT_SIMULATED_MEMORY_PARITY = 1,   /* tile memory parity; reset the IPU */
  MRT_SIMULATED_EXCHANGE_ERROR = 2,  /* IPU-Link failure; reset the partition */
  MRT_SIMULATED_HOST_LINK_ERROR = 3  /* PCIe link failure; full reset */
} mrt_simulated_error;

/* Makes the simulated device of replica_id fail once with `error` (an
 * mrt_simulated_error) at the first program step named step_name (a compute
 * set, stream or codelet of the executable, e.g. "Add") of its next Main
 * run; if that run does not reach the step, nothing fails. Errors inserted
 * at one step before the run: the last one counts. The requests of that run
 * fail with MRT_DEVICE_ERROR naming the fault and its recovery action
 * (mrt_future_recovery_action()); then, with auto_reset and an IPU_RESET
 * fault (TILE_EXCEPTION, MEMORY_PARITY), the replica resets its device and
 * serves on, running the requests that were queued behind them. Otherwise
 * (no auto_reset, or a PARTITION_RESET / FULL_RESET fault) every pending and
 * later request of the replica fails with MRT_DEVICE_ERROR and the same
 * recovery action, whose message says to destroy the runner and create a
 * new one. MRT_NOT_FOUND if no step has that
 * name, MRT_INVALID_ARGUMENT for an empty step_name, an unknown error or a
 * replica id out of range. Any thread; for tests and diagnostics. */
MRT_API mrt_status mrt_model_runner_insert_simulated_error(mrt_model_runner *runner, int32_t error,
                                                           const char *step_name,
                                                           uint32_t replica_id) MRT_NOEXCEPT;

/* ------------------------------------------------------------------------ */
/* ---- Building models: targets and graphs ---- */

/* The Poplar-style layer a model is built with (docs/graph.md has a tutorial
 * and the codelet table): a graph of tensors mapped to tiles, compute sets of
 * vertices running built-in codelets, host FIFOs, remote buffers and control
 * programs; a compiler producing an executable; an engine running it on a
 * device; and a PopEF writer turning it into a model ModelRunner serves.
 *
 * Graph objects are plain 64-bit ids (mrt_tensor, mrt_program, ...) owned by
 * their graph and valid until mrt_graph_destroy(); 0 is never a valid id, and
 * an id carries its graph and kind, so passing a tensor of another graph, a
 * program as a tensor or a stale id fails with MRT_INVALID_ARGUMENT naming
 * it. Calls on one graph are serialized by the graph's lock: any thread may
 * use it, concurrent calls are safe (but not faster). Element types are
 * mrt_data_type values; the simulated IPU has every type but S64, U64 and
 * F64 (MRT_INVALID_ARGUMENT naming the type). Names (debug names, handles)
 * are copied; NULL means "" where the comment allows it. */

/* A system the graph is built for, with the rates the simulated IPU's cycle
 * cost model uses (docs/hwsim.md gives every value's source). Fill it with
 * mrt_target_init() and change what you need: custom rates make "what if"
 * targets. When read, fields beyond the caller's struct_size take the
 * defaults of the named system for ipu_version. */
typedef struct mrt_target {
  size_t struct_size;
  const char *name;               /* "GC200", "Bow", "C600", "IPU-Model small"; borrowed */
  uint32_t ipu_version;           /* 2 (Mk2) or 21 (C600) */
  uint32_t num_ipus;              /* IPUs of one replica */
  uint32_t tiles_per_ipu;
  uint32_t worker_contexts_per_tile;
  uint64_t bytes_per_tile;
  double clock_hz;
  double f32_matmul_flops_per_cycle;  /* per tile */
  double f16_matmul_flops_per_cycle;
  double f32_vector_width;            /* elements per cycle */
  double f16_vector_width;
  double int_vector_width;
  double transcendental_cycles_per_element;
  double vertex_overhead_cycles;
  double exchange_bytes_per_cycle;    /* per tile */
  double host_link_bytes_per_second;  /* per IPU, each direction */
  double ipu_link_bytes_per_second;   /* per IPU to the others, each direction */
  double internal_sync_cycles;
  double external_sync_cycles;
  double host_sync_cycles;
} mrt_target;
#define MRT_TARGET_V1_SIZE MRT_STRUCT_SIZE(mrt_target, host_sync_cycles)

/* Fills *out_target with the system `system` ("gc200", "bow", "c600" or
 * "ipu-model-small", case-insensitive; MRT_NOT_FOUND listing them otherwise)
 * with num_ipus IPUs per replica (1 to 64), as far as "Sized structs" at
 * the top says for mrt_X_init (struct_size = size). */
MRT_API mrt_status mrt_target_init(const char *system, uint32_t num_ipus,
                                   mrt_target *out_target) MRT_NOEXCEPT;
MRT_API mrt_status mrt_target_init_sized(const char *system, uint32_t num_ipus, mrt_target *out_target,
                                         size_t size) MRT_NOEXCEPT;
#define mrt_target_init(system, num_ipus, out_target) \
  mrt_target_init_sized((system), (num_ipus), (out_target), sizeof *(out_target))

/* A graph: what one replica holds and does. */
typedef struct mrt_graph mrt_graph;

typedef uint64_t mrt_tensor;        /* a variable, constant or a view of them */
typedef uint64_t mrt_compute_set;
typedef uint64_t mrt_vertex;
typedef uint64_t mrt_stream;        /* a host FIFO (data stream) */
typedef uint64_t mrt_remote_buffer;
typedef uint64_t mrt_function;
typedef uint64_t mrt_program;

/* Creates an empty graph for `target` (NULL: a single GC200) and
 * replication_factor replicas (>= 1; every replica runs the same graph on
 * its own target->num_ipus IPUs). MRT_INVALID_ARGUMENT for a malformed
 * target (zero tiles, IPUs or rates, an unknown ipu_version) naming the
 * field. *out belongs to the caller: mrt_graph_destroy(). */
MRT_API mrt_status mrt_graph_create(const mrt_target *target, uint32_t replication_factor,
                                    mrt_graph **out) MRT_NOEXCEPT;
/* Frees the graph and invalidates its ids. Executables compiled from it do
 * not need it. NULL is accepted. */
MRT_API void mrt_graph_destroy(mrt_graph *graph) MRT_NOEXCEPT;
MRT_API mrt_status mrt_graph_get_target(const mrt_graph *graph, mrt_target *out_target) MRT_NOEXCEPT;
MRT_API mrt_status mrt_graph_replication_factor(const mrt_graph *graph,
                                                uint32_t *out_replication_factor) MRT_NOEXCEPT;

/* ---- Tensors ---- */

/* A variable: device memory, zero after an engine loads, written by
 * programs. Every variable must be mapped to tiles before compiling.
 * rank 0 is a scalar (shape may be NULL). */
MRT_API mrt_status mrt_graph_add_variable(mrt_graph *graph, int32_t data_type, const uint64_t *shape,
                                          size_t rank, const char *name, mrt_tensor *out) MRT_NOEXCEPT;
/* A constant from num_bytes of host data in the type's representation (F16
 * as IEEE half bits, BOOL as 0/1 bytes); num_bytes must be exactly the
 * tensor's size. Programs cannot write constants (copies to them and vertex
 * outputs on them fail to compile). */
MRT_API mrt_status mrt_graph_add_constant(mrt_graph *graph, int32_t data_type, const uint64_t *shape,
                                          size_t rank, const void *data, uint64_t num_bytes,
                                          const char *name, mrt_tensor *out) MRT_NOEXCEPT;
/* A constant with every element equal to value (converted to the type). */
MRT_API mrt_status mrt_graph_add_constant_filled(mrt_graph *graph, int32_t data_type,
                                                 const uint64_t *shape, size_t rank, double value,
                                                 const char *name, mrt_tensor *out) MRT_NOEXCEPT;

/* What a tensor is. shape is borrowed from the graph (valid until it is
 * destroyed), NULL when rank is 0. Set struct_size = sizeof(mrt_tensor_info). */
typedef struct mrt_tensor_info {
  size_t struct_size;
  int32_t data_type;         /* an mrt_data_type */
  size_t rank;
  const uint64_t *shape;
  uint64_t num_elements;
  uint64_t num_bytes;
  bool is_contiguous;        /* one run of one variable's elements */
  bool is_constant;          /* every element is a constant's */
} mrt_tensor_info;
#define MRT_TENSOR_INFO_V1_SIZE MRT_STRUCT_SIZE(mrt_tensor_info, is_constant)
MRT_API mrt_status mrt_graph_tensor_info(const mrt_graph *graph, mrt_tensor tensor,
                                         mrt_tensor_info *out_info) MRT_NOEXCEPT;

/* Views: new ids for elements of existing tensors; nothing is copied. */
/* Elements [begin, end) along dimension dim (the rank is unchanged). */
MRT_API mrt_status mrt_graph_slice(mrt_graph *graph, mrt_tensor tensor, uint64_t begin, uint64_t end,
                                   uint32_t dim, mrt_tensor *out) MRT_NOEXCEPT;
/* Element `index` of dimension 0, dropping that dimension. */
MRT_API mrt_status mrt_graph_index(mrt_graph *graph, mrt_tensor tensor, uint64_t index,
                                   mrt_tensor *out) MRT_NOEXCEPT;
/* The same elements in a new shape with the same number of elements. */
MRT_API mrt_status mrt_graph_reshape(mrt_graph *graph, mrt_tensor tensor, const uint64_t *shape,
                                     size_t rank, mrt_tensor *out) MRT_NOEXCEPT;
MRT_API mrt_status mrt_graph_flatten(mrt_graph *graph, mrt_tensor tensor, mrt_tensor *out) MRT_NOEXCEPT;
/* The two dimensions of a rank-2 tensor swapped. */
MRT_API mrt_status mrt_graph_transpose(mrt_graph *graph, mrt_tensor tensor, mrt_tensor *out) MRT_NOEXCEPT;
/* num_tensors (>= 1) tensors of one type joined along dimension dim. */
MRT_API mrt_status mrt_graph_concat(mrt_graph *graph, const mrt_tensor *tensors, size_t num_tensors,
                                    uint32_t dim, mrt_tensor *out) MRT_NOEXCEPT;

/* ---- Tile mapping ---- */

/* Puts every element of tensor on `tile` (< tiles of one replica). */
MRT_API mrt_status mrt_graph_set_tile_mapping(mrt_graph *graph, mrt_tensor tensor,
                                              uint32_t tile) MRT_NOEXCEPT;
/* Spreads tensor over tiles [first_tile, first_tile + num_tiles) (num_tiles
 * 0: to the last tile) in contiguous chunks of at least grain_size (>= 1)
 * elements, like poputil::mapTensorLinearly. */
MRT_API mrt_status mrt_graph_map_linearly(mrt_graph *graph, mrt_tensor tensor, uint64_t grain_size,
                                          uint32_t first_tile, uint32_t num_tiles) MRT_NOEXCEPT;

/* Flat elements [begin, end) of a tensor live on `tile`. */
typedef struct mrt_tile_interval {
  uint64_t begin;
  uint64_t end;
  uint32_t tile;
} mrt_tile_interval;
/* The tensor's mapping as runs of elements in element order (unmapped
 * elements are absent). Writes up to capacity intervals and sets
 * *out_count to the number there are: call with capacity 0 (intervals may
 * then be NULL) to learn the count. */
MRT_API mrt_status mrt_graph_tile_mapping(const mrt_graph *graph, mrt_tensor tensor,
                                          mrt_tile_interval *intervals, size_t capacity,
                                          size_t *out_count) MRT_NOEXCEPT;

/* ---- Compute sets, vertices and codelets ---- */

MRT_API mrt_status mrt_graph_add_compute_set(mrt_graph *graph, const char *name,
                                             mrt_compute_set *out) MRT_NOEXCEPT;
/* Adds a vertex of the built-in codelet `codelet` (MRT_NOT_FOUND for an
 * unknown name) on `tile` to a compute set. Its fields are connected with
 * mrt_graph_connect(); all of them must lie on the vertex's tile. */
MRT_API mrt_status mrt_graph_add_vertex(mrt_graph *graph, mrt_compute_set compute_set,
                                        const char *codelet, uint32_t tile,
                                        mrt_vertex *out) MRT_NOEXCEPT;
/* Connects field `field` of the vertex (MRT_NOT_FOUND naming the codelet's
 * fields if it has no such field) to tensor. Types and shapes are checked
 * against the codelet when the graph is compiled. */
MRT_API mrt_status mrt_graph_connect(mrt_graph *graph, mrt_vertex vertex, const char *field,
                                     mrt_tensor tensor) MRT_NOEXCEPT;
/* Sets attribute `attribute` of the vertex ("value" of Fill, "axes" of the
 * reductions, ...) to num_values values (0 restores its default). */
MRT_API mrt_status mrt_graph_set_vertex_attribute(mrt_graph *graph, mrt_vertex vertex,
                                                  const char *attribute, const double *values,
                                                  size_t num_values) MRT_NOEXCEPT;

/* The built-in codelet library, for bindings and tools to discover. */
typedef enum mrt_field_direction {
  MRT_FIELD_IN = 0,
  MRT_FIELD_OUT = 1,
  MRT_FIELD_INOUT = 2
} mrt_field_direction;
typedef struct mrt_codelet_info {
  size_t struct_size;
  const char *name;          /* static storage */
  const char *description;   /* one line: what it computes, types it takes */
  size_t num_fields;
  size_t num_attributes;
} mrt_codelet_info;
#define MRT_CODELET_INFO_V1_SIZE MRT_STRUCT_SIZE(mrt_codelet_info, num_attributes)
MRT_API size_t mrt_codelet_count(void) MRT_NOEXCEPT;
/* Codelet `index` < mrt_codelet_count(). Set struct_size first. */
MRT_API mrt_status mrt_codelet_get_info(size_t index, mrt_codelet_info *out_info) MRT_NOEXCEPT;
/* Field `field` < num_fields of codelet `index`: its name and an
 * mrt_field_direction (static storage). */
MRT_API mrt_status mrt_codelet_field(size_t index, size_t field, const char **out_name,
                                     int32_t *out_direction) MRT_NOEXCEPT;
/* Attribute `attribute` < num_attributes of codelet `index`: its name and
 * default values (static storage; *out_defaults NULL when there are none). */
MRT_API mrt_status mrt_codelet_attribute(size_t index, size_t attribute, const char **out_name,
                                         const double **out_defaults,
                                         size_t *out_num_defaults) MRT_NOEXCEPT;

/* ---- Host communication, remote buffers, functions ---- */

/* FIFOs between host and device: each copy moves num_elements elements.
 * Handles are unique among the graph's streams and remote buffers; a model
 * anchor names one. */
MRT_API mrt_status mrt_graph_add_host_to_device_fifo(mrt_graph *graph, const char *handle,
                                                     int32_t data_type, uint64_t num_elements,
                                                     mrt_stream *out) MRT_NOEXCEPT;
MRT_API mrt_status mrt_graph_add_device_to_host_fifo(mrt_graph *graph, const char *handle,
                                                     int32_t data_type, uint64_t num_elements,
                                                     mrt_stream *out) MRT_NOEXCEPT;
/* Handles for mrt_engine_write_tensor() / mrt_engine_read_tensor(). */
MRT_API mrt_status mrt_graph_create_host_write(mrt_graph *graph, const char *handle,
                                               mrt_tensor tensor) MRT_NOEXCEPT;
MRT_API mrt_status mrt_graph_create_host_read(mrt_graph *graph, const char *handle,
                                              mrt_tensor tensor) MRT_NOEXCEPT;
/* Streaming memory outside the IPU: `repeats` (>= 1) slots of num_elements. */
MRT_API mrt_status mrt_graph_add_remote_buffer(mrt_graph *graph, const char *handle,
                                               int32_t data_type, uint64_t num_elements,
                                               uint64_t repeats, mrt_remote_buffer *out) MRT_NOEXCEPT;
/* A program compiled once and run by mrt_program_call() from many places. */
MRT_API mrt_status mrt_graph_add_function(mrt_graph *graph, mrt_program body,
                                          mrt_function *out) MRT_NOEXCEPT;

/* ---- Programs ---- */

/* Control programs, as Poplar's poplar::program classes. A program may be
 * used in several places (it is shared, not copied); a program that would
 * contain itself is refused (MRT_INVALID_ARGUMENT). name may be NULL. */
MRT_API mrt_status mrt_program_sequence(mrt_graph *graph, const mrt_program *programs,
                                        size_t num_programs, const char *name,
                                        mrt_program *out) MRT_NOEXCEPT;
/* Appends program to a Sequence (MRT_INVALID_ARGUMENT if it is not one). */
MRT_API mrt_status mrt_program_sequence_add(mrt_graph *graph, mrt_program sequence,
                                            mrt_program program) MRT_NOEXCEPT;
MRT_API mrt_status mrt_program_execute(mrt_graph *graph, mrt_compute_set compute_set,
                                       const char *name, mrt_program *out) MRT_NOEXCEPT;
/* Copies between tensors of the same type and number of elements. */
MRT_API mrt_status mrt_program_copy(mrt_graph *graph, mrt_tensor source, mrt_tensor destination,
                                    const char *name, mrt_program *out) MRT_NOEXCEPT;
/* Host FIFO transfers: the stream's element count and type must match. */
MRT_API mrt_status mrt_program_copy_from_stream(mrt_graph *graph, mrt_stream stream,
                                                mrt_tensor destination, const char *name,
                                                mrt_program *out) MRT_NOEXCEPT;
MRT_API mrt_status mrt_program_copy_to_stream(mrt_graph *graph, mrt_tensor source,
                                              mrt_stream stream, const char *name,
                                              mrt_program *out) MRT_NOEXCEPT;
/* Remote buffer slot transfers. The slot is `slot`, or, when slot_tensor is
 * not 0, read at run time from that scalar U32/S32 tensor. */
MRT_API mrt_status mrt_program_copy_from_remote_buffer(mrt_graph *graph, mrt_remote_buffer buffer,
                                                       mrt_tensor destination, uint64_t slot,
                                                       mrt_tensor slot_tensor, const char *name,
                                                       mrt_program *out) MRT_NOEXCEPT;
MRT_API mrt_status mrt_program_copy_to_remote_buffer(mrt_graph *graph, mrt_tensor source,
                                                     mrt_remote_buffer buffer, uint64_t slot,
                                                     mrt_tensor slot_tensor, const char *name,
                                                     mrt_program *out) MRT_NOEXCEPT;
MRT_API mrt_status mrt_program_repeat(mrt_graph *graph, uint64_t count, mrt_program body,
                                      const char *name, mrt_program *out) MRT_NOEXCEPT;
/* Runs condition, then while the scalar predicate is non-zero (while_true)
 * or zero (!while_true) runs body and condition again. */
MRT_API mrt_status mrt_program_repeat_while(mrt_graph *graph, mrt_program condition,
                                            mrt_tensor predicate, mrt_program body, bool while_true,
                                            const char *name, mrt_program *out) MRT_NOEXCEPT;
/* then_body if the scalar predicate is non-zero, else else_body (0: none). */
MRT_API mrt_status mrt_program_if(mrt_graph *graph, mrt_tensor predicate, mrt_program then_body,
                                  mrt_program else_body, const char *name,
                                  mrt_program *out) MRT_NOEXCEPT;
/* Runs the case whose value equals the scalar S32/U32 control, else
 * default_body (0: none). Add cases with mrt_program_switch_add_case(). */
MRT_API mrt_status mrt_program_switch(mrt_graph *graph, mrt_tensor control, mrt_program default_body,
                                      const char *name, mrt_program *out) MRT_NOEXCEPT;
/* MRT_INVALID_ARGUMENT for a value the switch already has. */
MRT_API mrt_status mrt_program_switch_add_case(mrt_graph *graph, mrt_program switch_program,
                                               int32_t value, mrt_program body) MRT_NOEXCEPT;
typedef enum mrt_sync_type {
  MRT_SYNC_INTERNAL = 0,  /* the tiles of one IPU */
  MRT_SYNC_EXTERNAL = 1,  /* every IPU of the replica */
  MRT_SYNC_GLOBAL = 2     /* with the host */
} mrt_sync_type;
MRT_API mrt_status mrt_program_sync(mrt_graph *graph, int32_t sync_type, const char *name,
                                    mrt_program *out) MRT_NOEXCEPT;
MRT_API mrt_status mrt_program_call(mrt_graph *graph, mrt_function function, const char *name,
                                    mrt_program *out) MRT_NOEXCEPT;
/* Marks the tensor's contents dead (a liveness hint). */
MRT_API mrt_status mrt_program_write_undef(mrt_graph *graph, mrt_tensor tensor, const char *name,
                                           mrt_program *out) MRT_NOEXCEPT;
/* Prints "title: [v0 v1 ...]" to the engine's print stream (stdout, or
 * mrt_engine_set_print_callback()). */
MRT_API mrt_status mrt_program_print_tensor(mrt_graph *graph, const char *title, mrt_tensor tensor,
                                            mrt_program *out) MRT_NOEXCEPT;

/* ---- Operations (a PopLibs-like layer) ---- */

/* Whole operations spread over tiles [first_tile, first_tile + num_tiles)
 * (num_tiles 0: to the last tile), with the vertices and the exchange
 * copies they need appended to `sequence` (a Sequence program). Results are
 * new variables, already mapped. Codelet names are those of the library:
 * unary Neg Abs Relu Exp Log Sqrt Sigmoid Tanh Not Cast; binary Add Sub Mul
 * Div Max Min Pow Equal NotEqual Less LessEqual Greater GreaterEqual And Or
 * (b has a's shape, one element, or a's last dimension); reduce ReduceSum
 * ReduceMax ReduceMin ReduceMean. */

/* A new variable of `shape` spread over the tiles in whole rows. */
MRT_API mrt_status mrt_ops_create_tensor(mrt_graph *graph, int32_t data_type, const uint64_t *shape,
                                         size_t rank, const char *name, uint32_t first_tile,
                                         uint32_t num_tiles, mrt_tensor *out) MRT_NOEXCEPT;
/* out = codelet(in) elementwise; out_type -1 keeps in's type (Cast needs one). */
MRT_API mrt_status mrt_ops_unary(mrt_graph *graph, mrt_program sequence, const char *codelet,
                                 mrt_tensor in, int32_t out_type, const char *name,
                                 mrt_tensor *out) MRT_NOEXCEPT;
MRT_API mrt_status mrt_ops_binary(mrt_graph *graph, mrt_program sequence, const char *codelet,
                                  mrt_tensor a, mrt_tensor b, const char *name,
                                  mrt_tensor *out) MRT_NOEXCEPT;
/* a = codelet(a, b) in place. */
MRT_API mrt_status mrt_ops_binary_in_place(mrt_graph *graph, mrt_program sequence, const char *codelet,
                                           mrt_tensor a, mrt_tensor b) MRT_NOEXCEPT;
MRT_API mrt_status mrt_ops_fill(mrt_graph *graph, mrt_program sequence, mrt_tensor tensor,
                                double value) MRT_NOEXCEPT;
/* [M,K] x [K,N] -> [M,N] of out_type (-1: F32; F16 for F16 inputs also). */
MRT_API mrt_status mrt_ops_matmul(mrt_graph *graph, mrt_program sequence, mrt_tensor a, mrt_tensor b,
                                  int32_t out_type, const char *name, uint32_t first_tile,
                                  uint32_t num_tiles, mrt_tensor *out) MRT_NOEXCEPT;
/* The same with b holding weights: values written only by load_sequence (a
 * program run before `sequence`, such as the model's Load program, whose
 * writes of b are already appended), never by `sequence`. The copies of b to
 * the tiles that multiply it are appended to load_sequence, so each run of
 * `sequence` exchanges only a. Lay a and b out with
 * MRT_MATMUL_LHS_OF_PRELOADED / MRT_MATMUL_RHS_PRELOADED. load_sequence must
 * be a Sequence other than `sequence`. */
MRT_API mrt_status mrt_ops_matmul_preloaded_rhs(mrt_graph *graph, mrt_program sequence,
                                                mrt_program load_sequence, mrt_tensor a, mrt_tensor b,
                                                int32_t out_type, const char *name, uint32_t first_tile,
                                                uint32_t num_tiles, mrt_tensor *out) MRT_NOEXCEPT;
/* Which operand of a matmul a new variable is laid out for: of
 * mrt_ops_matmul() (LHS, RHS) or of mrt_ops_matmul_preloaded_rhs(), whose
 * plan differs (LHS_OF_PRELOADED, RHS_PRELOADED). */
typedef enum mrt_matmul_operand {
  MRT_MATMUL_LHS = 0,
  MRT_MATMUL_RHS = 1,
  MRT_MATMUL_LHS_OF_PRELOADED = 2,
  MRT_MATMUL_RHS_PRELOADED = 3
} mrt_matmul_operand;
/* A variable laid out the way mrt_ops_matmul() (or
 * mrt_ops_matmul_preloaded_rhs()) over the same tiles uses its `operand` of a
 * [M,K] x [K,N] product (a_shape = {M,K}, b_shape = {K,N}), so weights loaded
 * once stay where the multiply needs them. */
MRT_API mrt_status mrt_ops_create_matmul_input(mrt_graph *graph, int32_t operand, int32_t data_type,
                                               const uint64_t a_shape[2], const uint64_t b_shape[2],
                                               const char *name, uint32_t first_tile,
                                               uint32_t num_tiles, mrt_tensor *out) MRT_NOEXCEPT;
/* Reduces over num_axes dimensions `axes` (0: all). */
MRT_API mrt_status mrt_ops_reduce(mrt_graph *graph, mrt_program sequence, const char *codelet,
                                  mrt_tensor in, const uint64_t *axes, size_t num_axes,
                                  const char *name, uint32_t first_tile, uint32_t num_tiles,
                                  mrt_tensor *out) MRT_NOEXCEPT;
/* Softmax (F16/F32) and ArgMax (S32 indices) over the last dimension. */
MRT_API mrt_status mrt_ops_softmax(mrt_graph *graph, mrt_program sequence, mrt_tensor in,
                                   const char *name, uint32_t first_tile, uint32_t num_tiles,
                                   mrt_tensor *out) MRT_NOEXCEPT;
MRT_API mrt_status mrt_ops_argmax(mrt_graph *graph, mrt_program sequence, mrt_tensor in,
                                  const char *name, uint32_t first_tile, uint32_t num_tiles,
                                  mrt_tensor *out) MRT_NOEXCEPT;

/* ------------------------------------------------------------------------ */
/* ---- Compiling: executables ---- */

/* A compiled graph and its programs. Immutable: any thread, any number at
 * once. Engines and models made from it keep what they need. */
typedef struct mrt_executable mrt_executable;

/* Compilation progress: step of total_steps, on the compiling thread. */
typedef void (*mrt_progress_fn)(int32_t step, int32_t total_steps, void *user_data);

/* Compiles the graph with num_programs programs: programs[i] is program
 * index i of the executable. options: NULL-terminated key/value pairs as for
 * devices (the engine options of mrt_engine_create; NULL for none).
 * progress may be NULL. A graph compiles once: it is frozen afterwards (a
 * second compile or any change is MRT_FAILED_PRECONDITION). Errors:
 * MRT_INVALID_ARGUMENT for a graph that does not compile (an unmapped
 * tensor, a vertex touching another tile, wrong types or shapes, writing a
 * constant), MRT_RESOURCE_EXHAUSTED when a tile needs more memory than it
 * has (the message names the tile and the bytes), each with the compiler's
 * message. *out belongs to the caller: mrt_executable_destroy(). */
MRT_API mrt_status mrt_graph_compile(mrt_graph *graph, const mrt_program *programs, size_t num_programs,
                                     const char *const *options, mrt_progress_fn progress,
                                     void *user_data, void (*user_data_free)(void *user_data),
                                     mrt_executable **out) MRT_NOEXCEPT;
MRT_API void mrt_executable_destroy(mrt_executable *executable) MRT_NOEXCEPT;

/* The serialized executable: borrowed bytes, valid until destroy. */
MRT_API mrt_status mrt_executable_serialize(const mrt_executable *executable, const void **out_data,
                                            uint64_t *out_size) MRT_NOEXCEPT;
/* Reads serialized bytes (copied), verifying them: MRT_CORRUPT_MODEL naming
 * the inconsistency for anything malformed. */
MRT_API mrt_status mrt_executable_deserialize(const void *data, uint64_t size,
                                              mrt_executable **out) MRT_NOEXCEPT;
/* The executable of a model (deserialized and verified). */
MRT_API mrt_status mrt_model_get_executable(const mrt_model *model, mrt_executable **out) MRT_NOEXCEPT;

/* What an executable holds and what it costs. Set struct_size first. */
typedef struct mrt_executable_info {
  size_t struct_size;
  uint64_t hash;                 /* xxHash64 of the serialization: equal executables, equal hashes */
  uint32_t replication_factor;
  uint32_t num_ipus;             /* all replicas together */
  uint32_t num_programs;
  uint32_t num_tiles;            /* of one replica */
  size_t num_streams;
  size_t num_remote_buffers;
  size_t num_host_reads;
  size_t num_host_writes;
  size_t num_steps;              /* program steps (see mrt_executable_step) */
  uint64_t total_memory_bytes;   /* used on all tiles of one replica */
  uint64_t max_tile_memory_bytes;
  uint32_t max_memory_tile;      /* the fullest tile */
  uint64_t bytes_per_tile;       /* the tile memory size */
} mrt_executable_info;
#define MRT_EXECUTABLE_INFO_V1_SIZE MRT_STRUCT_SIZE(mrt_executable_info, bytes_per_tile)
MRT_API mrt_status mrt_executable_get_info(const mrt_executable *executable,
                                           mrt_executable_info *out_info) MRT_NOEXCEPT;
MRT_API mrt_status mrt_executable_get_target(const mrt_executable *executable,
                                             mrt_target *out_target) MRT_NOEXCEPT;
/* Bytes used on each of the *out_count tiles of one replica (borrowed). */
MRT_API mrt_status mrt_executable_memory_per_tile(const mrt_executable *executable,
                                                  const uint64_t **out_bytes,
                                                  size_t *out_count) MRT_NOEXCEPT;
/* Program step `index` < num_steps: its kind ("Execute", "StreamToTensor",
 * ...), name and the modelled cycles of one run of it (compute, exchange
 * and sync; host transfers at the target's host link rate). Borrowed. */
typedef struct mrt_step_info {
  size_t struct_size;
  const char *kind;
  const char *name;
  uint64_t modelled_cycles;
} mrt_step_info;
#define MRT_STEP_INFO_V1_SIZE MRT_STRUCT_SIZE(mrt_step_info, modelled_cycles)
MRT_API mrt_status mrt_executable_step(const mrt_executable *executable, size_t index,
                                       mrt_step_info *out_info) MRT_NOEXCEPT;
/* The name of program `program` < num_programs (borrowed). */
MRT_API mrt_status mrt_executable_program_name(const mrt_executable *executable, uint32_t program,
                                               const char **out_name) MRT_NOEXCEPT;
/* Program `program` < num_programs as a pipeline over the IPUs of a replica
 * (docs/hwsim.md "Pipelining"): steps on one IPU after another, joined by
 * copies between IPUs, are num_stages stages (1: not a pipeline). A
 * ModelRunner streams requests through the stages of a pipelined Main
 * program, stage k of one run while stage k + 1 of the run before it.
 * Modelled cycles: latency_cycles for one run alone (stages and transfers
 * one after another); interval_cycles between the ends of streamed runs
 * (the slowest stage plus the slowest transfer; latency_cycles when not a
 * pipeline). Divide by the target's clock for seconds. Set struct_size. */
typedef struct mrt_pipeline_info {
  size_t struct_size;
  uint32_t num_stages;
  uint64_t latency_cycles;
  uint64_t interval_cycles;
} mrt_pipeline_info;
#define MRT_PIPELINE_INFO_V1_SIZE MRT_STRUCT_SIZE(mrt_pipeline_info, interval_cycles)
MRT_API mrt_status mrt_executable_pipeline(const mrt_executable *executable, uint32_t program,
                                           mrt_pipeline_info *out_info) MRT_NOEXCEPT;

/* A stream, remote buffer or host read/write handle of an executable. */
typedef enum mrt_handle_kind {
  MRT_HANDLE_HOST_TO_DEVICE = 0,  /* a FIFO the host writes */
  MRT_HANDLE_DEVICE_TO_HOST = 1,  /* a FIFO the host reads */
  MRT_HANDLE_REMOTE_BUFFER = 2,
  MRT_HANDLE_HOST_WRITE = 3,      /* mrt_engine_write_tensor() */
  MRT_HANDLE_HOST_READ = 4        /* mrt_engine_read_tensor() */
} mrt_handle_kind;
typedef struct mrt_handle_info {
  size_t struct_size;
  const char *handle;     /* borrowed */
  int32_t kind;           /* an mrt_handle_kind */
  int32_t data_type;      /* an mrt_data_type */
  uint64_t num_elements;  /* per transfer / per slot / of the tensor */
  uint64_t repeats;       /* remote buffer slots; 1 otherwise */
} mrt_handle_info;
#define MRT_HANDLE_INFO_V1_SIZE MRT_STRUCT_SIZE(mrt_handle_info, repeats)
/* Handle `index` of kind `kind` (index < the matching num_* of the info).
 * Streams are counted together (num_streams): either stream kind takes
 * index < num_streams, and out_info->kind tells the stream's direction. */
MRT_API mrt_status mrt_executable_handle(const mrt_executable *executable, int32_t kind, size_t index,
                                         mrt_handle_info *out_info) MRT_NOEXCEPT;

/* ------------------------------------------------------------------------ */
/* ---- Engines: running executables (Poplar's Engine) ---- */

/* An executable loaded on a device. One thread drives an engine at a time:
 * calls other than mrt_engine_stop() while another call is running on it
 * fail with MRT_FAILED_PRECONDITION. mrt_engine_stop() may be called from
 * any thread. */
typedef struct mrt_engine mrt_engine;

/* Every replica (mrt_engine_connect_stream(), mrt_engine_write_tensor()). */
#define MRT_ALL_REPLICAS UINT32_MAX

/* Creates an engine for an executable with engine options (NULL-terminated
 * key/value pairs or NULL). Every option name Poplar's Engine documents is
 * accepted; those that change nothing in a simulator are logged at DEBUG as
 * ignored. Unknown names and malformed values are MRT_INVALID_ARGUMENT
 * naming them. Options include profiling: "debug.instrument" "true" records
 * an execution profile; "autoReport.all" "true" with "autoReport.directory"
 * writes the profiles when the engine is destroyed (docs/hwsim.md). The
 * environment variable MRT_ENGINE_OPTIONS (a JSON object) overrides them.
 * *out belongs to the caller: mrt_engine_destroy(). */
MRT_API mrt_status mrt_engine_create(const mrt_executable *executable, const char *const *options,
                                     mrt_engine **out) MRT_NOEXCEPT;
/* Stops a run in progress and waits for it, then frees. NULL accepted. */
MRT_API void mrt_engine_destroy(mrt_engine *engine) MRT_NOEXCEPT;

/* Loads the executable on `device` (from a device manager; it needs the
 * executable's IPUs and IPU version): zeroes variables, writes constants,
 * clears remote buffers. Call again to start afresh, as after a stop or a
 * device error. The engine keeps the device while loaded. */
MRT_API mrt_status mrt_engine_load(mrt_engine *engine, const mrt_device *device) MRT_NOEXCEPT;
/* Runs program `program` on every replica (replica 0 on the calling thread),
 * or on one replica. MRT_CANCELLED if mrt_engine_stop() stopped it (load
 * again to run); MRT_FAILED_PRECONDITION if not loaded or a stream it uses
 * is not connected; MRT_DEVICE_ERROR for a (simulated) device fault, whose
 * recovery action is in the message; MRT_INVALID_ARGUMENT for a program or
 * replica out of range. */
MRT_API mrt_status mrt_engine_run(mrt_engine *engine, uint32_t program) MRT_NOEXCEPT;
MRT_API mrt_status mrt_engine_run_replica(mrt_engine *engine, uint32_t program,
                                          uint32_t replica) MRT_NOEXCEPT;
/* Asks a running program to stop at its next host sync, compute set or loop
 * iteration and returns at once. Any thread. */
MRT_API mrt_status mrt_engine_stop(mrt_engine *engine) MRT_NOEXCEPT;

/* Stream callback: for a host-to-device stream write `size` bytes to data;
 * for device-to-host read them. Called on the thread running the replica,
 * in program order; calls for one replica never overlap. */
typedef void (*mrt_stream_fn)(void *data, uint64_t size, uint32_t replica, void *user_data);
/* Connects stream `handle` of `replica` (or MRT_ALL_REPLICAS) to fn,
 * replacing an earlier connection. MRT_NOT_FOUND for an unknown handle. */
MRT_API mrt_status mrt_engine_connect_stream(mrt_engine *engine, const char *handle, uint32_t replica,
                                             mrt_stream_fn fn, void *user_data,
                                             void (*user_data_free)(void *user_data)) MRT_NOEXCEPT;
/* Connects stream `handle` to a circular host buffer of size bytes (a whole
 * number of transfers), read or written in turn by successive transfers.
 * The buffer is borrowed: it must stay valid while the engine may run. */
MRT_API mrt_status mrt_engine_connect_stream_to_buffer(mrt_engine *engine, const char *handle,
                                                       uint32_t replica, void *buffer,
                                                       uint64_t size) MRT_NOEXCEPT;

/* Host access by handle (mrt_graph_create_host_write/read); size must be the
 * tensor's size in bytes. Writes go to one replica or MRT_ALL_REPLICAS. */
MRT_API mrt_status mrt_engine_write_tensor(mrt_engine *engine, const char *handle, const void *data,
                                           uint64_t size, uint32_t replica) MRT_NOEXCEPT;
MRT_API mrt_status mrt_engine_read_tensor(mrt_engine *engine, const char *handle, void *data,
                                          uint64_t size, uint32_t replica) MRT_NOEXCEPT;
/* One slot of a remote buffer; size must be the slot's size in bytes. */
MRT_API mrt_status mrt_engine_copy_to_remote_buffer(mrt_engine *engine, const char *handle,
                                                    const void *data, uint64_t size, uint64_t slot,
                                                    uint32_t replica) MRT_NOEXCEPT;
MRT_API mrt_status mrt_engine_copy_from_remote_buffer(mrt_engine *engine, const char *handle,
                                                      void *data, uint64_t size, uint64_t slot,
                                                      uint32_t replica) MRT_NOEXCEPT;

/* Receives PrintTensor output, one line per call (without newline), on the
 * running thread. NULL fn restores stdout. */
typedef void (*mrt_print_fn)(const char *line, void *user_data);
MRT_API mrt_status mrt_engine_set_print_callback(mrt_engine *engine, mrt_print_fn fn, void *user_data,
                                                 void (*user_data_free)(void *user_data)) MRT_NOEXCEPT;

/* Modelled device cycles of `replica` since the last load. */
MRT_API mrt_status mrt_engine_device_cycles(const mrt_engine *engine, uint32_t replica,
                                            uint64_t *out_cycles) MRT_NOEXCEPT;

/* Simulated faults (after load, not during a run): `error` (an
 * mrt_simulated_error) fires when replica runs program step `step` (see
 * mrt_executable_step) on `tile`. MRT_NOT_FOUND when erasing a location
 * that has none. */
MRT_API mrt_status mrt_engine_insert_simulated_error(mrt_engine *engine, int32_t error, uint32_t step,
                                                     uint32_t tile) MRT_NOEXCEPT;
MRT_API mrt_status mrt_engine_erase_simulated_error(mrt_engine *engine, uint32_t step,
                                                    uint32_t tile) MRT_NOEXCEPT;
MRT_API mrt_status mrt_engine_clear_simulated_errors(mrt_engine *engine) MRT_NOEXCEPT;

/* Profiling. Execution profiling records the cycles of every step run while
 * enabled (also from the start with the option "debug.instrument"). */
MRT_API mrt_status mrt_engine_set_profiling(mrt_engine *engine, bool enabled) MRT_NOEXCEPT;
typedef enum mrt_profile_format {
  MRT_PROFILE_SUMMARY = 0,    /* text: target, memory per tile, cycles per step */
  MRT_PROFILE_INTERVALS = 1,  /* CSV begin,end,compute_tiles,exchange_tiles,sync_tiles */
  MRT_PROFILE_TRACE = 2       /* Chrome/Perfetto trace event JSON */
} mrt_profile_format;
/* Writes the profile in `format` to the file `path` (created or truncated).
 * MRT_FAILED_PRECONDITION for intervals or a trace when profiling was never
 * enabled. */
MRT_API mrt_status mrt_engine_write_profile(const mrt_engine *engine, int32_t format,
                                            const char *path) MRT_NOEXCEPT;
/* The same into buffer (NUL terminated, truncated to buffer_size - 1);
 * *out_length gets the full length, as mrt_last_error_message_copy(). */
MRT_API mrt_status mrt_engine_profile_text(const mrt_engine *engine, int32_t format, char *buffer,
                                           size_t buffer_size, size_t *out_length) MRT_NOEXCEPT;

/* ------------------------------------------------------------------------ */
/* ---- Writing models (PopEF) ---- */

/* Builds a model in memory from an executable: metadata, anchors, program
 * flow and data, checked like a model read from a file. Use from one thread
 * at a time. The replication factor, IPU count and IPU version come from the
 * executable. */
typedef struct mrt_model_builder mrt_model_builder;

/* name: the executable's name in the model (not empty). The builder keeps
 * the executable. *out belongs to the caller: mrt_model_builder_destroy(). */
MRT_API mrt_status mrt_model_builder_create(const char *name, const mrt_executable *executable,
                                            mrt_model_builder **out) MRT_NOEXCEPT;
MRT_API void mrt_model_builder_destroy(mrt_model_builder *builder) MRT_NOEXCEPT;

/* Default true. */
MRT_API mrt_status mrt_model_builder_set_inference(mrt_model_builder *builder,
                                                   bool is_inference) MRT_NOEXCEPT;
/* An engine or device option (set = an mrt_model_options), replacing an
 * earlier value of key. Engine options must be valid engine options. */
MRT_API mrt_status mrt_model_builder_set_option(mrt_model_builder *builder, int32_t set,
                                                const char *key, const char *value) MRT_NOEXCEPT;
MRT_API mrt_status mrt_model_builder_set_seed_handle(mrt_model_builder *builder,
                                                     const char *handle) MRT_NOEXCEPT;
/* The name of program `program` in the programs map (default: the
 * executable's program names). */
MRT_API mrt_status mrt_model_builder_set_program_name(mrt_model_builder *builder, uint64_t program,
                                                      const char *name) MRT_NOEXCEPT;
/* The programs of phase `phase` (an mrt_program_phase), in run order,
 * replacing earlier ones; each < the executable's number of programs. */
MRT_API mrt_status mrt_model_builder_set_program_flow(mrt_model_builder *builder, int32_t phase,
                                                      const uint64_t *programs,
                                                      size_t num_programs) MRT_NOEXCEPT;

/* An anchor. Its direction, data type and element count come from the
 * stream or remote buffer `handle` names (an H2D stream or a remote buffer
 * is an input, a D2H stream an output); shape must hold that many elements
 * (for a remote buffer: slot elements x slots). Fill with
 * mrt_anchor_config_init(). */
typedef struct mrt_anchor_config {
  size_t struct_size;
  const char *name;           /* the tensor's name; "" (default NULL) = handle */
  const char *handle;         /* a stream or remote buffer of the executable */
  const int64_t *shape;
  size_t rank;
  const uint64_t *programs;   /* the programs that move it */
  size_t num_programs;
  bool is_per_replica;        /* default false */
  int32_t data_source;        /* an mrt_data_source; default NONE */
} mrt_anchor_config;
#define MRT_ANCHOR_CONFIG_V1_SIZE MRT_STRUCT_SIZE(mrt_anchor_config, data_source)
MRT_API void mrt_anchor_config_init(mrt_anchor_config *config) MRT_NOEXCEPT;
MRT_API mrt_status mrt_anchor_config_init_sized(mrt_anchor_config *config, size_t size) MRT_NOEXCEPT;
#define mrt_anchor_config_init(config) mrt_anchor_config_init_sized((config), sizeof *(config))
/* MRT_INVALID_ARGUMENT naming the anchor for an unknown handle, a shape of
 * the wrong size or a duplicate name or handle. */
MRT_API mrt_status mrt_model_builder_add_anchor(mrt_model_builder *builder,
                                                const mrt_anchor_config *config) MRT_NOEXCEPT;
/* A TensorData blob (copied): size bytes of a tensor of data_type and shape. */
MRT_API mrt_status mrt_model_builder_add_tensor_data(mrt_model_builder *builder, const char *name,
                                                     int32_t data_type, const int64_t *shape,
                                                     size_t rank, const void *data,
                                                     uint64_t size) MRT_NOEXCEPT;
/* A FeedData blob (copied): num_tensors tensors of data_type and shape. */
MRT_API mrt_status mrt_model_builder_add_feed_data(mrt_model_builder *builder, const char *name,
                                                   int32_t data_type, const int64_t *shape,
                                                   size_t rank, const void *data, uint64_t size,
                                                   uint64_t num_tensors) MRT_NOEXCEPT;
/* The model, checked as mrt_model_load() checks files (MRT_CORRUPT_MODEL or
 * MRT_INVALID_ARGUMENT naming the problem). The builder may be used again.
 * *out belongs to the caller: mrt_model_destroy(). */
MRT_API mrt_status mrt_model_builder_build(mrt_model_builder *builder, mrt_model **out) MRT_NOEXCEPT;

/* Writes a model as one PopEF file (created or truncated). */
MRT_API mrt_status mrt_model_write(const mrt_model *model, const char *path) MRT_NOEXCEPT;
/* Writes a model as two PopEF files: the metadata and executable to
 * model_path, the TensorData, FeedData and Opaque blobs to data_path;
 * mrt_model_load() reads them back given both paths. MRT_INVALID_ARGUMENT
 * for a model without such blobs (a PopEF file holds at least one) or two
 * paths of the same file. A failed write removes the files it wrote. */
MRT_API mrt_status mrt_model_write_split(const mrt_model *model, const char *model_path,
                                         const char *data_path) MRT_NOEXCEPT;
/* Writes the PopEF file bytes into buffer: the bytes mrt_model_write()
 * writes to a file. With buffer NULL only *out_size is set (to the bytes
 * needed); a buffer_size below that is MRT_INVALID_ARGUMENT naming both
 * sizes. Otherwise *out_size is the number of bytes written. */
MRT_API mrt_status mrt_model_write_to_memory(const mrt_model *model, void *buffer, size_t buffer_size,
                                             size_t *out_size) MRT_NOEXCEPT;
/* Loads a model from size bytes of PopEF file content (copied; checked as
 * mrt_model_load() checks files). */
MRT_API mrt_status mrt_model_load_from_memory(const void *data, size_t size,
                                              mrt_model **out) MRT_NOEXCEPT;

/* Model fusion (User Guide 2.10; docs/popef.md "Fused models"): writes one
 * PopEF file (created or truncated) holding the num_models (>= 2) models
 * with one executable, in which each model runs on its own tiles of one
 * IPU. Each model keeps its name, anchor names and data; load one with
 * mrt_model_load_named() or the model_name of mrt_session_config /
 * mrt_model_runner_config. Sessions and runners of different models of the
 * file may share one device (give each runner the same device in
 * replica_devices) and run at the same time. The models must run on one
 * IPU without replication, for the same target, with distinct names, none
 * already fused. MRT_INVALID_ARGUMENT names the model and value otherwise,
 * and when the models need more tiles together than the IPU has (naming
 * each model's tiles and the total). The models are only read; any thread.
 * A failed write removes the file. */
MRT_API mrt_status mrt_model_fuse(const mrt_model *const *models, size_t num_models,
                                  const char *path) MRT_NOEXCEPT;

/* ------------------------------------------------------------------------ */
/* ---- Importing ONNX models ---- */

/* Compiles an ONNX model (docs/onnx.md lists the operators) into a PopEF
 * model for the simulated IPU, the way Graphcore's PopRT does: the model is
 * checked, constants folded, every shape inferred, tensors mapped over the
 * target's tiles and the graph lowered with the graph API's ops. Initializers
 * become TensorData loaded once by the Load program; graph inputs and outputs
 * become the model's anchors, under their ONNX names. */

/* The whole shape of one graph input, replacing the one the model declares
 * (static dimensions included: a model exported at batch 1 can be compiled
 * for 8). rank must be the declared rank; every dimension at least 1. */
typedef struct mrt_onnx_input_shape {
  const char *name;    /* a graph input (not an initializer) */
  const int64_t *dims; /* rank values */
  size_t rank;
} mrt_onnx_input_shape;

/* The precision the model computes in. F16 runs every FLOAT tensor of the
 * model as FLOAT16 on the device (weights converted when compiled; matmuls
 * and convolutions accumulate in F32), while the model's inputs and outputs
 * keep their declared types: they are cast at the model's edges. */
typedef enum mrt_onnx_precision {
  MRT_ONNX_PRECISION_F32 = 0,
  MRT_ONNX_PRECISION_F16 = 1
} mrt_onnx_precision;

/* Options of an ONNX compilation. Fields are only ever appended: a caller
 * built against an older header sends a smaller struct_size (at least
 * MRT_ONNX_OPTIONS_V1_SIZE) and gets the defaults for the fields it lacks. */
typedef struct mrt_onnx_options {
  size_t struct_size;
  const char *target;             /* a system of mrt_target_init(); default "gc200" */
  const mrt_target *custom_target;/* overrides target when not NULL (borrowed during the call) */
  uint32_t num_ipus;              /* IPUs per replica; default 1 */
  uint32_t replication_factor;    /* default 1 */
  int64_t batch_size;             /* the value of dynamic dimensions (symbolic, 0 or -1)
                                     of inputs; default 1 */
  const char *model_name;         /* the executable's name; default: the ONNX graph's
                                     name, or "onnx_model" */
  mrt_progress_fn progress;       /* may be NULL; called on the calling thread */
  void *user_data;
  void (*user_data_free)(void *user_data);
  /* ---- appended after V1 ---- */
  const mrt_onnx_input_shape *input_shapes; /* num_input_shapes of them, may be NULL;
                                               borrowed during the call; default none */
  size_t num_input_shapes;
  int32_t precision;              /* an mrt_onnx_precision; default MRT_ONNX_PRECISION_F32 */
  uint32_t batching_dim;          /* recorded in the model as the dimension ModelRunner batches
                                     requests along when its config's batching_dim is
                                     MRT_BATCHING_DISABLED (every graph input and output must
                                     have it, of one size); default MRT_BATCHING_DISABLED */
  uint32_t num_io_tiles;          /* tiles of each IPU that only stream (the engine option
                                     exchange.numIOTiles, recorded in the model): operators
                                     run on the others, and prefetched inputs land there
                                     while they compute (docs/hwsim.md "Overlapped I/O");
                                     must be below the target's tiles per IPU; default 0 */
} mrt_onnx_options;

/* The first published mrt_onnx_options ended at user_data_free. */
#define MRT_ONNX_OPTIONS_V1_SIZE MRT_STRUCT_SIZE(mrt_onnx_options, user_data_free)

/* Every default, as far as "Sized structs" at the top says. */
MRT_API void mrt_onnx_options_init(mrt_onnx_options *options) MRT_NOEXCEPT;
MRT_API mrt_status mrt_onnx_options_init_sized(mrt_onnx_options *options, size_t size) MRT_NOEXCEPT;
#define mrt_onnx_options_init(options) mrt_onnx_options_init_sized((options), sizeof *(options))

/* Compiles the ONNX file at path (external data files are read from its
 * directory) or size bytes of one in memory (copied; no external data).
 * options may be NULL for the defaults. Errors: MRT_NOT_FOUND for a missing
 * file, MRT_CORRUPT_MODEL for a malformed or truncated model (naming what is
 * wrong), MRT_UNIMPLEMENTED listing every unsupported node (name and op type)
 * or attribute value in one message, MRT_RESOURCE_EXHAUSTED for a model too
 * big for the target (naming the tensor and the tile). *out belongs to the
 * caller: mrt_model_destroy(); write it with mrt_model_write(). */
MRT_API mrt_status mrt_onnx_compile_file(const char *path, const mrt_onnx_options *options,
                                         mrt_model **out) MRT_NOEXCEPT;
MRT_API mrt_status mrt_onnx_compile_memory(const void *data, size_t size, const mrt_onnx_options *options,
                                           mrt_model **out) MRT_NOEXCEPT;

/* Reads the ONNX TensorProto file at path (the test_data_set_N/input_M.pb
 * files ONNX models ship with) into the size bytes at buffer as a tensor of
 * data_type (an mrt_data_type): the input of a compiled model fed with the
 * data it ships with. The file's element type must be the one the compiler
 * gives the device (INT64 fills MRT_S32, UINT64 MRT_U32, DOUBLE MRT_F32:
 * the simulated IPU has no 64-bit types) and it must hold size / element
 * size elements, in any shape. Errors: MRT_NOT_FOUND "no such file",
 * MRT_INVALID_ARGUMENT for a path that is not a regular file, a file that
 * is not a TensorProto, another element type or count (naming the file's
 * and the tensor's), an INT64 value beyond S32 or a size that is not whole
 * elements; buffer is then unchanged. Any thread. */
MRT_API mrt_status mrt_onnx_read_tensor_file(const char *path, int32_t data_type, void *buffer,
                                             uint64_t size) MRT_NOEXCEPT;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MRT_C_H */
