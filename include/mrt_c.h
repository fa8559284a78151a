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
 * - Config structs start with `size_t struct_size` and are filled with
 *   defaults by their mrt_X_config_init() function; set fields after calling
 *   it. Fields are only ever appended; older struct sizes keep working.
 * - Callbacks come as (fn, user_data, user_data_free). user_data is passed as
 *   the last argument of fn. user_data_free (may be NULL) is called exactly
 *   once when the library no longer needs user_data, also when registration
 *   fails. Each callback documents its calling thread and whether calls can
 *   overlap. Pointer arguments of callbacks are valid only during the call.
 * - Output parameters come last and are named out...; on failure they are not
 *   written.
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
/* ---- Logging ---- */

/* Verbosity, from silent to everything. The environment variable
 * MRT_LOG_LEVEL sets the starting level by name (OFF, ERR, WARN, INFO, DEBUG,
 * TRACE; default WARN) and MRT_LOG_DEST the destination (stdout, stderr - the
 * default - or a file path, appended to). */
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
 * message is valid only during the call. The callback must not call
 * mrt_set_log_callback() (that call fails with MRT_FAILED_PRECONDITION). */
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

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MRT_C_H */
