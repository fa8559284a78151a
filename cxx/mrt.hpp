// mrt.hpp - header-only C++17 wrapper over libmrt's C API (mrt_c.h).
// It uses the C API only, never the library's internals: everything here is
// what any C++ application could write itself, packaged once. Installed as
// <prefix>/include/mrt.hpp next to mrt_c.h; link libmrt (mrt::mrt in CMake,
// `pkg-config --libs mrt`).
//
// Conventions (the C API's, in C++ clothes):
// - Failures throw mrt::Error carrying the status code and the library's
//   message. Using an object that was moved from or closed throws
//   mrt::Error(MRT_FAILED_PRECONDITION) naming the type - never a crash.
// - Every handle is a move-only RAII type; the C API lets handles be
//   destroyed in any order (a child keeps what it needs of its parent), so
//   objects may go out of scope in any order too. close() destroys early.
// - Queue handles (InputQueue, OutputQueue) are non-owning views, valid while
//   their QueueManager lives, as in the C API.
// - Callbacks are std::function objects owned by the library through the C
//   API's user_data / user_data_free pair: they are freed exactly once, when
//   the library no longer needs them. Each says on which thread it runs.
// - Config structs start from the library's defaults (their *_config_init
//   functions); set the fields you need.
// - Thread safety is the C API's: see each class.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <future>
#include <initializer_list>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "mrt_c.h"

namespace mrt {

// ---------------------------------------------------------------------------
// Errors

// A failed libmrt call: code() is the mrt_status, what() the message.
class Error : public std::runtime_error {
 public:
  Error(mrt_status code, const std::string &message) : std::runtime_error(message), code_(code) {}
  mrt_status code() const noexcept { return code_; }
  // The status code's name and meaning, e.g. "MRT_NOT_FOUND: not found".
  const char *codeString() const noexcept { return mrt_status_string(code_); }

 private:
  mrt_status code_;
};

// This thread's last error message (mrt_last_error_message), copied.
inline std::string lastErrorMessage() {
  std::size_t length = 0;
  mrt_last_error_message_copy(nullptr, 0, &length);
  std::string message(length + 1, '\0');
  mrt_last_error_message_copy(message.data(), message.size(), nullptr);
  message.resize(length);
  return message;
}

// Throws mrt::Error for any status but MRT_OK, with this thread's last error
// message (read right away, before another call can replace it).
inline void check(mrt_status status) {
  if (status == MRT_OK) return;
  const char *message = mrt_last_error_message();
  throw Error(status, message && *message ? message : mrt_status_string(status));
}

// The name and meaning of a status code, e.g. "MRT_NOT_FOUND: not found".
inline std::string_view statusString(mrt_status code) noexcept { return mrt_status_string(code); }

// The loaded library's version, "MAJOR.MINOR.PATCH" and in parts.
inline std::string_view versionString() noexcept { return mrt_version_string(); }
struct Version {
  int major = 0, minor = 0, patch = 0;
};
inline Version version() noexcept {
  Version v;
  mrt_version(&v.major, &v.minor, &v.patch);
  return v;
}

// Throws unless the loaded library serves the version this header came with.
inline void checkVersion() { check(mrt_check_version(MRT_VERSION_MAJOR, MRT_VERSION_MINOR)); }

// ---------------------------------------------------------------------------
// Span: a non-owning view of contiguous elements (std::span for C++17).

template <class T>
class Span {
 public:
  using element_type = T;
  using value_type = std::remove_cv_t<T>;

  constexpr Span() noexcept = default;
  constexpr Span(T *data, std::size_t size) noexcept : data_(data), size_(size) {}
  template <std::size_t N>
  constexpr Span(T (&array)[N]) noexcept : data_(array), size_(N) {}
  // Any contiguous container with data() and size(): std::vector,
  // std::array, std::string, another Span of convertible elements.
  template <class C, class Pointer = decltype(std::data(std::declval<C &>())),
            class = std::enable_if_t<std::is_convertible_v<Pointer, T *> && !std::is_array_v<std::remove_reference_t<C>>>>
  constexpr Span(C &&container) noexcept : data_(std::data(container)), size_(std::size(container)) {}
  // A braced list written in a call, f({a, b}): valid until the end of the
  // call's full expression, and no allocation (as std::span in C++26; GCC
  // warns that the Span does not extend the list's life, which is the point).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif
  template <class U = T, class = std::enable_if_t<std::is_const_v<U>>>
  constexpr Span(std::initializer_list<value_type> list) noexcept : data_(list.begin()), size_(list.size()) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

  constexpr T *data() const noexcept { return data_; }
  constexpr std::size_t size() const noexcept { return size_; }
  constexpr std::size_t size_bytes() const noexcept { return size_ * sizeof(T); }
  constexpr bool empty() const noexcept { return size_ == 0; }
  constexpr T *begin() const noexcept { return data_; }
  constexpr T *end() const noexcept { return data_ + size_; }
  constexpr T &operator[](std::size_t i) const noexcept { return data_[i]; }

 private:
  T *data_ = nullptr;
  std::size_t size_ = 0;
};

// ---------------------------------------------------------------------------
// Internals of the wrapper (not part of the API).

namespace detail {

// One deleter for every owned handle type.
struct Destroy {
  void operator()(mrt_model *p) const noexcept { mrt_model_destroy(p); }
  void operator()(mrt_device_manager *p) const noexcept { mrt_device_manager_destroy(p); }
  void operator()(mrt_device *p) const noexcept { mrt_device_destroy(p); }
  void operator()(mrt_anchor_predicate *p) const noexcept { mrt_anchor_predicate_destroy(p); }
  void operator()(mrt_session *p) const noexcept { mrt_session_destroy(p); }
  void operator()(mrt_queue_manager *p) const noexcept { mrt_queue_manager_destroy(p); }
  void operator()(mrt_future *p) const noexcept { mrt_future_destroy(p); }
  void operator()(mrt_model_runner *p) const noexcept { mrt_model_runner_destroy(p); }
  void operator()(mrt_tensor_memory *p) const noexcept { mrt_tensor_memory_destroy(p); }
  void operator()(mrt_graph *p) const noexcept { mrt_graph_destroy(p); }
  void operator()(mrt_engine *p) const noexcept { mrt_engine_destroy(p); }
  void operator()(mrt_model_builder *p) const noexcept { mrt_model_builder_destroy(p); }
  void operator()(mrt_popef_listing *p) const noexcept { mrt_popef_listing_destroy(p); }
};

template <class T>
using Owned = std::unique_ptr<T, Destroy>;

// The handle of `owned`, or an mrt::Error naming `type` if it was moved from
// or closed.
template <class T>
T *live(const Owned<T> &owned, const char *type) {
  if (!owned) {
    throw Error(MRT_FAILED_PRECONDITION,
                std::string(type) + ": used after it was moved from or closed (it holds no handle)");
  }
  return owned.get();
}

// The wrapper class owning each handle type, for messages.
inline const char *wrapperName(const mrt_model *) noexcept { return "mrt::Model"; }
inline const char *wrapperName(const mrt_device_manager *) noexcept { return "mrt::DeviceManager"; }
inline const char *wrapperName(const mrt_device *) noexcept { return "mrt::Device"; }
inline const char *wrapperName(const mrt_anchor_predicate *) noexcept { return "mrt::AnchorPredicate"; }
inline const char *wrapperName(const mrt_session *) noexcept { return "mrt::Session"; }
inline const char *wrapperName(const mrt_queue_manager *) noexcept { return "mrt::QueueManager"; }
inline const char *wrapperName(const mrt_future *) noexcept { return "mrt::Future"; }
inline const char *wrapperName(const mrt_model_runner *) noexcept { return "mrt::ModelRunner"; }
inline const char *wrapperName(const mrt_tensor_memory *) noexcept { return "mrt::TensorMemory"; }
inline const char *wrapperName(const mrt_graph *) noexcept { return "mrt::Graph"; }
inline const char *wrapperName(const mrt_engine *) noexcept { return "mrt::Engine"; }
inline const char *wrapperName(const mrt_model_builder *) noexcept { return "mrt::ModelBuilder"; }
inline const char *wrapperName(const mrt_popef_listing *) noexcept { return "mrt::PopefListing"; }

// What every class owning a C handle shares: the handle (destroyed with
// the object, movable, not copyable), get() that names the class when it
// holds none, close() to destroy it early and the emptiness test. Classes
// that can hand the handle back re-export release().
template <class T>
class OwnedHandle {
 public:
  T *get() const { return live(handle_, wrapperName(static_cast<const T *>(nullptr))); }
  void close() noexcept { handle_.reset(); }
  explicit operator bool() const noexcept { return handle_ != nullptr; }

 protected:
  T *release() noexcept { return handle_.release(); }
  Owned<T> handle_;
};

// user_data_free for a heap-allocated callback object of type F.
template <class F>
void deleteBox(void *box) noexcept {
  delete static_cast<F *>(box);
}

// A C string or "" for NULL.
inline std::string str(const char *s) { return s ? std::string(s) : std::string(); }

// Exceptions thrown by user callbacks that the library calls on the caller's
// own thread (predicates, callback factories, anchor callbacks) are caught in
// the trampoline, parked here and rethrown by the wrapper call that ran them,
// so they reach the caller unchanged instead of crossing the C ABI.
inline std::exception_ptr &parkedException() {
  static thread_local std::exception_ptr parked;
  return parked;
}

// Clears the parked exception when made; check() rethrows a parked exception
// first, then turns a failed status into mrt::Error.
class CallbackScope {
 public:
  CallbackScope() noexcept { parkedException() = nullptr; }
  CallbackScope(const CallbackScope &) = delete;
  CallbackScope &operator=(const CallbackScope &) = delete;
  ~CallbackScope() { parkedException() = nullptr; }
  void check(mrt_status status) const {
    if (auto parked = std::exchange(parkedException(), nullptr)) std::rethrow_exception(parked);
    ::mrt::check(status);
  }
};

inline void park(std::exception_ptr e) noexcept {
  if (!parkedException()) parkedException() = std::move(e);
}

// NULL-terminated key/value array for the C API's device options.
class OptionArray {
 public:
  explicit OptionArray(const std::vector<std::pair<std::string, std::string>> &options) {
    for (const auto &[key, value] : options) {
      pointers_.push_back(key.c_str());
      pointers_.push_back(value.c_str());
    }
    pointers_.push_back(nullptr);
  }
  const char *const *get() const noexcept { return pointers_.size() > 1 ? pointers_.data() : nullptr; }

 private:
  std::vector<const char *> pointers_;
};

inline std::vector<const char *> cStrings(const std::vector<std::string> &strings) {
  std::vector<const char *> pointers;
  pointers.reserve(strings.size());
  for (const auto &s : strings) pointers.push_back(s.c_str());
  return pointers;
}

}  // namespace detail

// ---------------------------------------------------------------------------
// Logging

enum class LogLevel { Off = MRT_LOG_OFF, Err = MRT_LOG_ERR, Warn = MRT_LOG_WARN,
                      Info = MRT_LOG_INFO, Debug = MRT_LOG_DEBUG, Trace = MRT_LOG_TRACE };

// Messages at `level` and more severe are emitted. Thread safe.
inline void setLogLevel(LogLevel level) {
  check(mrt_set_log_level(static_cast<int32_t>(level)));
}
inline LogLevel logLevel() noexcept { return static_cast<LogLevel>(mrt_get_log_level()); }

using LogCallback = std::function<void(LogLevel, std::string_view)>;

// Sends libmrt's log messages to callback (empty: back to MRT_LOG_DEST).
// Called on the logging thread (any thread), never overlapping; the message
// is valid during the call only. Must not call setLogCallback(); a throw is
// swallowed and the message lost. The previous callback is freed here, after
// its last call; the last one when the library is unloaded. Thread safe.
inline void setLogCallback(LogCallback callback) {
  if (!callback) {
    check(mrt_set_log_callback(nullptr, nullptr, nullptr));
    return;
  }
  auto *owned = new LogCallback(std::move(callback));
  check(mrt_set_log_callback(
      [](mrt_log_level level, const char *message, void *user_data) {
        try {
          (*static_cast<LogCallback *>(user_data))(static_cast<LogLevel>(level), message);
        } catch (...) {
        }
      },
      owned, &detail::deleteBox<LogCallback>));
}

// Emits message through libmrt's logger (LogLevel::Err to Trace).
inline void logMessage(LogLevel level, const std::string &message) {
  check(mrt_log_message(static_cast<int32_t>(level), message.c_str()));
}

// ---------------------------------------------------------------------------
// Enumerations (values are the C API's)

enum class DataType {
  BOOL = MRT_BOOL, U8 = MRT_U8, S8 = MRT_S8, U16 = MRT_U16, S16 = MRT_S16, S32 = MRT_S32,
  U32 = MRT_U32, S64 = MRT_S64, U64 = MRT_U64, F16 = MRT_F16, F32 = MRT_F32, F64 = MRT_F64
};
enum class TensorType { INPUT = MRT_TENSOR_INPUT, OUTPUT = MRT_TENSOR_OUTPUT, UNKNOWN = MRT_TENSOR_UNKNOWN };
enum class DataSource {
  NONE = MRT_DATA_SOURCE_NONE, TENSOR_DATA = MRT_DATA_SOURCE_TENSOR_DATA, FEED_DATA = MRT_DATA_SOURCE_FEED_DATA
};
enum class ProgramPhase { Load = MRT_PHASE_LOAD, Main = MRT_PHASE_MAIN, Save = MRT_PHASE_SAVE };
enum class ModelOptions { Engine = MRT_MODEL_ENGINE_OPTIONS, Device = MRT_MODEL_DEVICE_OPTIONS };

// ---------------------------------------------------------------------------
// Models

// Model metadata (mrt_model_info), strings copied.
struct ModelInfo {
  std::string executable;
  uint64_t replication_factor = 0;
  uint64_t num_ipus = 0;
  uint32_t ipu_version = 0;
  bool is_inference = false;
  std::string seed_handle;
  std::string package_hash;
  std::size_t num_anchors = 0;
  std::size_t num_programs = 0;
  std::size_t num_engine_options = 0;
  std::size_t num_device_options = 0;
  std::size_t num_tensor_data = 0;
  std::size_t num_feed_data = 0;
  std::string shared_executable;  // "" unless the model is fused with others
};

// One anchor (mrt_anchor_info), strings and arrays copied.
struct AnchorInfo {
  std::string name;
  std::string handle;
  DataType data_type = DataType::F32;
  std::vector<int64_t> shape;
  int64_t size_in_bytes = 0;
  std::vector<uint64_t> programs;
  bool is_per_replica = false;
  TensorType tensor_type = TensorType::UNKNOWN;
  DataSource data_source = DataSource::NONE;
  std::string remote_buffer;  // "" if none
  int64_t remote_buffer_repeats = 0;
  // For the anchor a CallbackFactory is given: the replica its callback will
  // serve (a replicated model's factory is called once per replica); 0 elsewhere.
  uint32_t replica = 0;

  static AnchorInfo from(const mrt_anchor_info &c) {
    AnchorInfo a;
    a.name = detail::str(c.name);
    a.handle = detail::str(c.handle);
    a.data_type = static_cast<DataType>(c.data_type);
    if (c.shape) a.shape.assign(c.shape, c.shape + c.rank);
    a.size_in_bytes = c.size_in_bytes;
    if (c.programs) a.programs.assign(c.programs, c.programs + c.num_programs);
    a.is_per_replica = c.is_per_replica;
    a.tensor_type = static_cast<TensorType>(c.tensor_type);
    a.data_source = static_cast<DataSource>(c.data_source);
    a.remote_buffer = detail::str(c.remote_buffer);
    a.remote_buffer_repeats = c.remote_buffer_repeats;
    // A library older than the field fills less of the struct.
    if (c.struct_size >= MRT_STRUCT_SIZE(mrt_anchor_info, replica)) a.replica = c.replica;
    return a;
  }
};

// FeedData: num_tensors tensors of bytes.size() / num_tensors bytes each.
struct FeedData {
  Span<const std::byte> bytes;
  uint64_t num_tensors = 0;
};

// A model loaded from PopEF files. Immutable: every const call may be made
// from any number of threads at once. Bytes and strings it returns by Span
// are borrowed from it (valid while it lives); objects made from it keep
// what they need, so it may be destroyed before them. Move-only.
class Model : public detail::OwnedHandle<mrt_model> {
 public:
  Model() = default;
  explicit Model(const std::string &path) : Model(std::vector<std::string>{path}) {}
  // A model split over several files (any order); the files must hold one model.
  explicit Model(const std::vector<std::string> &paths) {
    auto c = detail::cStrings(paths);
    mrt_model *out = nullptr;
    check(mrt_model_load(c.data(), c.size(), &out));
    handle_.reset(out);
  }
  // The model whose executable is named `executable`, among several in the files.
  static Model loadNamed(const std::vector<std::string> &paths, const std::string &executable) {
    auto c = detail::cStrings(paths);
    mrt_model *out = nullptr;
    check(mrt_model_load_named(c.data(), c.size(), executable.c_str(), &out));
    return adopt(out);
  }
  // Takes ownership of a handle from the C API.
  static Model adopt(mrt_model *model) noexcept {
    Model m;
    m.handle_.reset(model);
    return m;
  }

  ModelInfo info() const {
    mrt_model_info c{};
    c.struct_size = sizeof c;
    check(mrt_model_get_info(get(), &c));
    ModelInfo i;
    i.executable = detail::str(c.executable);
    i.replication_factor = c.replication_factor;
    i.num_ipus = c.num_ipus;
    i.ipu_version = c.ipu_version;
    i.is_inference = c.is_inference;
    i.seed_handle = detail::str(c.seed_handle);
    i.package_hash = detail::str(c.package_hash);
    i.num_anchors = c.num_anchors;
    i.num_programs = c.num_programs;
    i.num_engine_options = c.num_engine_options;
    i.num_device_options = c.num_device_options;
    i.num_tensor_data = c.num_tensor_data;
    i.num_feed_data = c.num_feed_data;
    i.shared_executable = detail::str(c.shared_executable);
    return i;
  }

  // The dimension ModelRunner batches along unless told otherwise; none if
  // the model records none (mrt_model_batching_dim).
  std::optional<uint32_t> batchingDim() const {
    uint32_t dim = MRT_BATCHING_DISABLED;
    check(mrt_model_batching_dim(get(), &dim));
    return dim == MRT_BATCHING_DISABLED ? std::nullopt : std::optional<uint32_t>(dim);
  }

  // The bytes of TensorData `name`, borrowed (in the model's image of its
  // file: memory-mapped for a file over 4 MiB, never copied again).
  Span<const std::byte> tensorData(const std::string &name) const {
    const void *data = nullptr;
    uint64_t size = 0;
    check(mrt_model_tensor_data(get(), name.c_str(), &data, &size));
    return {static_cast<const std::byte *>(data), static_cast<std::size_t>(size)};
  }
  // TensorData `name` as elements of T; mrt::Error(MRT_INVALID_ARGUMENT) if
  // its size is not a whole number of them.
  template <class T>
  Span<const T> tensorDataAs(const std::string &name) const {
    auto bytes = tensorData(name);
    if (bytes.size() % sizeof(T) != 0) {
      throw Error(MRT_INVALID_ARGUMENT, "TensorData '" + name + "' has " + std::to_string(bytes.size()) +
                                            " bytes, not a multiple of " + std::to_string(sizeof(T)));
    }
    return {reinterpret_cast<const T *>(bytes.data()), bytes.size() / sizeof(T)};
  }
  FeedData feedData(const std::string &name) const {
    const void *data = nullptr;
    uint64_t size = 0, count = 0;
    check(mrt_model_feed_data(get(), name.c_str(), &data, &size, &count));
    return {{static_cast<const std::byte *>(data), static_cast<std::size_t>(size)}, count};
  }
  Span<const std::byte> executable() const {
    const void *data = nullptr;
    uint64_t size = 0;
    check(mrt_model_executable(get(), &data, &size));
    return {static_cast<const std::byte *>(data), static_cast<std::size_t>(size)};
  }

  // A new model with these engine options set over this one's (blobs
  // shared): mrt_model_with_engine_options.
  Model withEngineOptions(const std::vector<std::pair<std::string, std::string>> &options) const {
    const detail::OptionArray pairs(options);
    mrt_model *out = nullptr;
    check(mrt_model_with_engine_options(get(), pairs.get(), &out));
    return adopt(out);
  }

  // Every option of a set, in key order.
  std::vector<std::pair<std::string, std::string>> options(ModelOptions set) const {
    const ModelInfo i = info();
    const std::size_t n = set == ModelOptions::Engine ? i.num_engine_options : i.num_device_options;
    std::vector<std::pair<std::string, std::string>> result;
    for (std::size_t index = 0; index < n; ++index) {
      const char *key = nullptr, *value = nullptr;
      check(mrt_model_option(get(), static_cast<int32_t>(set), index, &key, &value));
      result.emplace_back(detail::str(key), detail::str(value));
    }
    return result;
  }

  std::vector<AnchorInfo> anchors() const {
    const std::size_t n = info().num_anchors;
    std::vector<AnchorInfo> result;
    result.reserve(n);
    for (std::size_t index = 0; index < n; ++index) {
      mrt_anchor_info c{};
      c.struct_size = sizeof c;
      check(mrt_model_anchor(get(), index, &c));
      result.push_back(AnchorInfo::from(c));
    }
    return result;
  }
  AnchorInfo anchor(const std::string &name) const {
    mrt_anchor_info c{};
    c.struct_size = sizeof c;
    check(mrt_model_anchor_by_name(get(), name.c_str(), &c));
    return AnchorInfo::from(c);
  }
  AnchorInfo anchorByHandle(const std::string &handle) const {
    mrt_anchor_info c{};
    c.struct_size = sizeof c;
    check(mrt_model_anchor_by_handle(get(), handle.c_str(), &c));
    return AnchorInfo::from(c);
  }

  // The program indices of a phase, in the order they run.
  std::vector<uint64_t> programFlow(ProgramPhase phase) const {
    const uint64_t *programs = nullptr;
    std::size_t count = 0;
    check(mrt_model_program_flow(get(), static_cast<int32_t>(phase), &programs, &count));
    return programs ? std::vector<uint64_t>(programs, programs + count) : std::vector<uint64_t>();
  }
  // The programs map: index -> name.
  std::map<uint64_t, std::string> programs() const {
    const std::size_t n = info().num_programs;
    std::map<uint64_t, std::string> result;
    for (std::size_t index = 0; index < n; ++index) {
      uint64_t program = 0;
      const char *name = nullptr;
      check(mrt_model_program(get(), index, &program, &name));
      result.emplace(program, detail::str(name));
    }
    return result;
  }

  using OwnedHandle::release;  // hands the C handle back to the caller
};

// ---------------------------------------------------------------------------
// Inspecting PopEF files

enum class BlobType {
  Metadata = MRT_BLOB_METADATA,
  Executable = MRT_BLOB_EXECUTABLE,
  TensorData = MRT_BLOB_TENSOR_DATA,
  FeedData = MRT_BLOB_FEED_DATA,
  Opaque = MRT_BLOB_OPAQUE
};

// "Metadata", "TensorData", ... as PopEF spells them; "Unknown" for a value
// that is no BlobType (mrt_blob_type_name). Static storage.
inline const char *blobTypeName(BlobType type) noexcept {
  return mrt_blob_type_name(static_cast<std::int32_t>(type));
}

// One listed blob (mrt_blob_info), strings and shape copied.
struct BlobInfo {
  std::size_t file = 0;
  std::size_t index = 0;
  BlobType type = BlobType::Opaque;
  std::string executable;  // "" if its descriptor is unreadable
  std::string name;        // "" for Metadata
  uint64_t offset = 0;
  uint64_t payload_size = 0;
  uint64_t stored_checksum = 0;
  uint64_t computed_checksum = 0;
  std::string problem;  // why the descriptor could not be read, "" if it could
  int32_t data_type = -1;  // TensorData, FeedData: an mrt_data_type
  std::vector<int64_t> shape;
  uint64_t num_tensors = 0;
  uint64_t data_size = 0;
  bool checksumOk() const noexcept { return stored_checksum == computed_checksum; }
};

// One listed file: its blobs as far as its framing could be followed.
struct ListedFile {
  std::string path;
  uint64_t size = 0;
  std::vector<BlobInfo> blobs;
};

// What PopEF files hold, read as far as they can be (mrt_popef_listing):
// never throws for damaged files; error() says what is wrong and where.
// Immutable; move-only.
class PopefListing : public detail::OwnedHandle<mrt_popef_listing> {
 public:
  // Every model of the files, or only `model_name` when it is not empty.
  explicit PopefListing(const std::vector<std::string> &paths, const std::string &model_name = {}) {
    auto c = detail::cStrings(paths);
    mrt_popef_listing *out = nullptr;
    check(mrt_popef_listing_create(c.data(), c.size(), model_name.empty() ? nullptr : model_name.c_str(), &out));
    handle_.reset(out);
  }

  // MRT_OK and "" if the files are sound, else the first problem.
  mrt_status errorStatus() const {
    mrt_status status = MRT_OK;
    check(mrt_popef_listing_error(get(), &status, nullptr));
    return status;
  }
  std::string errorMessage() const {
    const char *message = nullptr;
    check(mrt_popef_listing_error(get(), nullptr, &message));
    return detail::str(message);
  }

  ListedFile file(std::size_t index) const {
    const char *path = nullptr;
    ListedFile f;
    std::size_t blobs = 0;
    check(mrt_popef_listing_file(get(), index, &path, &f.size, &blobs));
    f.path = detail::str(path);
    for (std::size_t b = 0; b < blobs; ++b) f.blobs.push_back(blob(index, b));
    return f;
  }
  BlobInfo blob(std::size_t file, std::size_t index) const {
    mrt_blob_info c{};
    c.struct_size = sizeof c;
    check(mrt_popef_listing_blob(get(), file, index, &c));
    BlobInfo b;
    b.file = c.file;
    b.index = c.index;
    b.type = static_cast<BlobType>(c.type);
    b.executable = detail::str(c.executable);
    b.name = detail::str(c.name);
    b.offset = c.offset;
    b.payload_size = c.payload_size;
    b.stored_checksum = c.stored_checksum;
    b.computed_checksum = c.computed_checksum;
    b.problem = detail::str(c.problem);
    b.data_type = c.data_type;
    if (c.shape) b.shape.assign(c.shape, c.shape + c.rank);
    b.num_tensors = c.num_tensors;
    b.data_size = c.data_size;
    return b;
  }

  // The models loaded, in the order of their Metadata blobs.
  std::vector<Model> models() const {
    std::size_t n = 0;
    check(mrt_popef_listing_num_models(get(), &n));
    std::vector<Model> result;
    for (std::size_t index = 0; index < n; ++index) {
      mrt_model *model = nullptr;
      check(mrt_popef_listing_model(get(), index, &model));
      result.push_back(Model::adopt(model));
    }
    return result;
  }
};

// ---------------------------------------------------------------------------
// Devices

enum class DeviceWaitStrategy {
  NO_WAIT = MRT_DEVICE_NO_WAIT,
  WAIT_WITH_TIMEOUT = MRT_DEVICE_WAIT_WITH_TIMEOUT,
  WAIT_FOREVER = MRT_DEVICE_WAIT_FOREVER
};

// How to wait for a device; defaults from mrt_device_wait_config_init (NO_WAIT).
struct DeviceWaitConfig {
  DeviceWaitConfig() {
    mrt_device_wait_config c;
    mrt_device_wait_config_init(&c);
    strategy = static_cast<DeviceWaitStrategy>(c.strategy);
    timeout = std::chrono::nanoseconds(c.timeout_ns);
    sleepTime = std::chrono::nanoseconds(c.sleep_time_ns);
  }
  explicit DeviceWaitConfig(DeviceWaitStrategy s, std::chrono::nanoseconds t = std::chrono::nanoseconds(0),
                            std::chrono::nanoseconds sleep = std::chrono::seconds(15))
      : strategy(s), timeout(t), sleepTime(sleep) {}

  DeviceWaitStrategy strategy;
  std::chrono::nanoseconds timeout;    // WAIT_WITH_TIMEOUT: how long to keep trying
  std::chrono::nanoseconds sleepTime;  // pause between attempts

  mrt_device_wait_config toC() const {
    mrt_device_wait_config c;
    mrt_device_wait_config_init(&c);
    c.strategy = static_cast<int32_t>(strategy);
    c.timeout_ns = timeout.count();
    c.sleep_time_ns = sleepTime.count();
    return c;
  }
};

// Device options as key/value pairs, e.g. {{"ipuLinkDomainSize", "4"}}.
using DeviceOptions = std::vector<std::pair<std::string, std::string>>;

// One device of the simulated system (mrt_device_info).
struct DeviceInfo {
  int64_t id = 0;
  int64_t num_ipus = 0;
  int64_t ipu_version = 0;
  int64_t tiles_per_ipu = 0;
  bool is_free = false;  // a snapshot
  std::string target_name;
};

// One attached device: its IPUs are held exclusively until it is destroyed
// and no session uses it. Accessors may be called from any thread. Move-only.
class Device : public detail::OwnedHandle<mrt_device> {
 public:
  Device() = default;
  static Device adopt(mrt_device *device) noexcept {
    Device d;
    d.handle_.reset(device);
    return d;
  }

  int64_t ipuVersion() const {
    int64_t v = 0;
    check(mrt_device_ipu_version(get(), &v));
    return v;
  }
  // The id in the system, -1 for an IPU Model device.
  int64_t id() const {
    int64_t v = 0;
    check(mrt_device_id(get(), &v));
    return v;
  }
  int64_t numIpus() const {
    int64_t v = 0;
    check(mrt_device_num_ipus(get(), &v));
    return v;
  }

  using OwnedHandle::release;  // hands the C handle back to the caller
  // Releases this handle (the device is detached once no session uses it).
};

// A view of the simulated system (MRT_HWSIM_IPUS, MRT_HWSIM_LOCK_DIR read at
// construction). Every call may be made from any number of threads at once.
// Devices do not need their manager. The get* calls throw
// mrt::Error(MRT_UNAVAILABLE) when no device can be attached; the tryGet*
// calls return std::nullopt instead. Move-only.
class DeviceManager : public detail::OwnedHandle<mrt_device_manager> {
 public:
  DeviceManager() {
    mrt_device_manager *out = nullptr;
    check(mrt_device_manager_create(&out));
    handle_.reset(out);
  }

  // 2 (Mk2) or 21 (C600); 0 without IPUs.
  int64_t ipuHardwareVersion() const {
    int64_t v = 0;
    check(mrt_device_manager_ipu_hardware_version(get(), &v));
    return v;
  }
  std::size_t deviceCount() const {
    std::size_t n = 0;
    check(mrt_device_manager_device_count(get(), &n));
    return n;
  }
  DeviceInfo deviceInfo(std::size_t index) const {
    mrt_device_info c{};
    c.struct_size = sizeof c;
    check(mrt_device_manager_device_info(get(), index, &c));
    return {c.id, c.num_ipus, c.ipu_version, c.tiles_per_ipu, c.is_free, detail::str(c.target_name)};
  }
  std::vector<DeviceInfo> devices() const {
    std::vector<DeviceInfo> result;
    const std::size_t n = deviceCount();
    for (std::size_t i = 0; i < n; ++i) result.push_back(deviceInfo(i));
    return result;
  }

  Device getDevice(int64_t num_ipus, const DeviceOptions &options = {}, const DeviceWaitConfig &wait = {},
                   bool requires_remote_buffers = false) const {
    return attach(mrt_device_manager_get_device, num_ipus, detail::OptionArray(options).get(), wait,
                  requires_remote_buffers);
  }
  std::optional<Device> tryGetDevice(int64_t num_ipus, const DeviceOptions &options = {},
                                     const DeviceWaitConfig &wait = {}, bool requires_remote_buffers = false) const {
    return maybe(attach(mrt_device_manager_try_get_device, num_ipus, detail::OptionArray(options).get(), wait,
                        requires_remote_buffers));
  }
  // A device for `model`: its IPUs, version and options.
  Device getDevice(const Model &model, const DeviceWaitConfig &wait = {}) const {
    return attach(mrt_device_manager_get_device_for_model, model.get(), wait);
  }
  std::optional<Device> tryGetDevice(const Model &model, const DeviceWaitConfig &wait = {}) const {
    return maybe(attach(mrt_device_manager_try_get_device_for_model, model.get(), wait));
  }
  Device getSpecificDevice(int64_t device_id, const DeviceOptions &options = {},
                           const DeviceWaitConfig &wait = {}) const {
    return attach(mrt_device_manager_get_specific_device, device_id, detail::OptionArray(options).get(), wait);
  }
  std::optional<Device> tryGetSpecificDevice(int64_t device_id, const DeviceOptions &options = {},
                                             const DeviceWaitConfig &wait = {}) const {
    return maybe(
        attach(mrt_device_manager_try_get_specific_device, device_id, detail::OptionArray(options).get(), wait));
  }
  Device getSpecificDevice(int64_t device_id, const Model &model, const DeviceWaitConfig &wait = {}) const {
    return attach(mrt_device_manager_get_specific_device_for_model, device_id, model.get(), wait);
  }
  std::optional<Device> tryGetSpecificDevice(int64_t device_id, const Model &model,
                                             const DeviceWaitConfig &wait = {}) const {
    return maybe(attach(mrt_device_manager_try_get_specific_device_for_model, device_id, model.get(), wait));
  }
  // IPU Model devices: outside the pool, never busy; id -1.
  Device createIpuModelDevice(int64_t num_ipus, int64_t ipu_version = 2, int64_t tiles_per_ipu = 0) const {
    mrt_device *out = nullptr;
    check(mrt_device_manager_create_ipu_model_device(get(), num_ipus, ipu_version, tiles_per_ipu, &out));
    return Device::adopt(out);
  }
  Device createIpuModelDevice(const Model &model, int64_t tiles_per_ipu = 0) const {
    mrt_device *out = nullptr;
    check(mrt_device_manager_create_ipu_model_device_for_model(get(), model.get(), tiles_per_ipu, &out));
    return Device::adopt(out);
  }
  // 4 tiles per IPU: quick, for models compiled for 4 tiles.
  Device createSmallIpuModelDevice(int64_t num_ipus, int64_t ipu_version = 2) const {
    mrt_device *out = nullptr;
    check(mrt_device_manager_create_small_ipu_model_device(get(), num_ipus, ipu_version, &out));
    return Device::adopt(out);
  }
  Device createSmallIpuModelDevice(const Model &model) const {
    mrt_device *out = nullptr;
    check(mrt_device_manager_create_small_ipu_model_device_for_model(get(), model.get(), &out));
    return Device::adopt(out);
  }


 private:
  // Calls fn(manager, args..., &wait, [extra...], &out) and adopts the device.
  template <class Fn, class... Args>
  Device attach(Fn fn, Args... args) const {
    return attachImpl(fn, std::forward<Args>(args)...);
  }
  template <class Fn, class A>
  Device attachImpl(Fn fn, A a, const DeviceWaitConfig &wait) const {
    const mrt_device_wait_config c = wait.toC();
    mrt_device *out = nullptr;
    check(fn(get(), a, &c, &out));
    return Device::adopt(out);
  }
  template <class Fn, class A, class B>
  Device attachImpl(Fn fn, A a, B b, const DeviceWaitConfig &wait) const {
    const mrt_device_wait_config c = wait.toC();
    mrt_device *out = nullptr;
    check(fn(get(), a, b, &c, &out));
    return Device::adopt(out);
  }
  template <class Fn, class A, class B>
  Device attachImpl(Fn fn, A a, B b, const DeviceWaitConfig &wait, bool remote) const {
    const mrt_device_wait_config c = wait.toC();
    mrt_device *out = nullptr;
    check(fn(get(), a, b, &c, remote, &out));
    return Device::adopt(out);
  }
  static std::optional<Device> maybe(Device d) {
    if (!d) return std::nullopt;
    return std::optional<Device>(std::move(d));
  }

};

// ---------------------------------------------------------------------------
// Anchor predicates

enum class AnchorCallbackPolicy {
  BIND_USER_CB = MRT_BIND_USER_CB, BIND_EMPTY_CB = MRT_BIND_EMPTY_CB, SKIP_CB = MRT_SKIP_CB
};
enum class PopefDataUsagePolicy {
  USE_POPEF_DATA_IF_ANY = MRT_USE_POPEF_DATA_IF_ANY, USE_USER_DATA = MRT_USE_USER_DATA
};
enum class PredicateKind {
  AnchorCallback = MRT_PREDICATE_ANCHOR_CALLBACK, PopefDataUsage = MRT_PREDICATE_POPEF_DATA_USAGE
};

namespace detail {
template <class Policy>
constexpr PredicateKind kindOf() {
  static_assert(std::is_same_v<Policy, AnchorCallbackPolicy> || std::is_same_v<Policy, PopefDataUsagePolicy>,
                "a predicate policy is AnchorCallbackPolicy or PopefDataUsagePolicy");
  return std::is_same_v<Policy, AnchorCallbackPolicy> ? PredicateKind::AnchorCallback
                                                      : PredicateKind::PopefDataUsage;
}
}  // namespace detail

template <class Policy>
struct ProgramsWithPolicy {
  std::vector<uint64_t> programs;
  Policy policy;
};
template <class Policy>
struct AnchorWithPolicy {
  std::string handle;
  Policy policy;
};

// A predicate: for each anchor, a policy of its kind (AnchorCallbackPolicy
// for handlers, PopefDataUsagePolicy for SessionConfig::pred_tensor_data).
// Immutable; usable from any number of threads and sessions, which keep
// their own reference (so it may be destroyed right after use). Move-only.
// The factories are the seeds' predicate_factory; the policy type of the
// arguments chooses the kind.
class AnchorPredicate : public detail::OwnedHandle<mrt_anchor_predicate> {
 public:
  AnchorPredicate() = default;

  template <class Policy = AnchorCallbackPolicy>
  static AnchorPredicate programFlowLoad(const Model &model, Policy accept = defaultAccept<Policy>(),
                                         Policy reject = defaultReject<Policy>()) {
    return prebuilt(MRT_PRED_PROGRAM_FLOW_LOAD, &model, {}, accept, reject);
  }
  template <class Policy = AnchorCallbackPolicy>
  static AnchorPredicate programFlowMain(const Model &model, Policy accept = defaultAccept<Policy>(),
                                         Policy reject = defaultReject<Policy>()) {
    return prebuilt(MRT_PRED_PROGRAM_FLOW_MAIN, &model, {}, accept, reject);
  }
  template <class Policy = AnchorCallbackPolicy>
  static AnchorPredicate programFlowSave(const Model &model, Policy accept = defaultAccept<Policy>(),
                                         Policy reject = defaultReject<Policy>()) {
    return prebuilt(MRT_PRED_PROGRAM_FLOW_SAVE, &model, {}, accept, reject);
  }
  template <class Policy = AnchorCallbackPolicy>
  static AnchorPredicate programNotAssigned(Policy accept = defaultAccept<Policy>(),
                                            Policy reject = defaultReject<Policy>()) {
    return prebuilt(MRT_PRED_PROGRAM_NOT_ASSIGNED, nullptr, {}, accept, reject);
  }
  // Anchors of rank >= 1 (AnchorCallbackPolicy only).
  static AnchorPredicate nonScalarType(AnchorCallbackPolicy accept = AnchorCallbackPolicy::BIND_USER_CB,
                                       AnchorCallbackPolicy reject = AnchorCallbackPolicy::BIND_EMPTY_CB) {
    return prebuilt(MRT_PRED_NON_SCALAR_TYPE, nullptr, {}, accept, reject);
  }
  template <class Policy = AnchorCallbackPolicy>
  static AnchorPredicate programIndexes(const std::vector<uint64_t> &programs, Policy accept = defaultAccept<Policy>(),
                                        Policy reject = defaultReject<Policy>()) {
    return prebuilt(MRT_PRED_PROGRAM_INDEXES, nullptr, programs, accept, reject);
  }
  // The first group that moves an anchor gives its policy, reject if none.
  template <class Policy>
  static AnchorPredicate programIndexes(const std::vector<ProgramsWithPolicy<Policy>> &groups, Policy reject) {
    std::vector<mrt_programs_with_policy> c;
    for (const auto &g : groups) c.push_back({g.programs.data(), g.programs.size(), static_cast<int32_t>(g.policy)});
    mrt_anchor_predicate *out = nullptr;
    check(mrt_anchor_predicate_create_program_policies(cKind<Policy>(), c.data(), c.size(),
                                                       static_cast<int32_t>(reject), &out));
    return adopt(out, detail::kindOf<Policy>());
  }
  // The anchors named by handle get their policy, others reject.
  template <class Policy>
  static AnchorPredicate anchorsPolicies(const std::vector<AnchorWithPolicy<Policy>> &entries, Policy reject) {
    std::vector<mrt_anchor_with_policy> c;
    for (const auto &e : entries) c.push_back({e.handle.c_str(), static_cast<int32_t>(e.policy)});
    mrt_anchor_predicate *out = nullptr;
    check(mrt_anchor_predicate_create_anchor_policies(cKind<Policy>(), c.data(), c.size(),
                                                      static_cast<int32_t>(reject), &out));
    return adopt(out, detail::kindOf<Policy>());
  }
  // A user function AnchorInfo -> Policy; its return type gives the kind.
  // Called on the thread of the call that uses the predicate (session
  // creation, handlers, evaluate), possibly from several threads at once.
  // An exception it throws is rethrown by that call. The function is freed
  // when the last user of the predicate lets go.
  template <class F>
  static AnchorPredicate fromFunction(F function) {
    using Policy = std::invoke_result_t<F &, const AnchorInfo &>;
    using Box = std::function<Policy(const AnchorInfo &)>;
    auto *box = new Box(std::move(function));
    mrt_anchor_predicate *out = nullptr;
    check(mrt_anchor_predicate_create_user(
        cKind<Policy>(),
        [](const mrt_anchor_info *anchor, void *user_data) -> int32_t {
          try {
            return static_cast<int32_t>((*static_cast<Box *>(user_data))(AnchorInfo::from(*anchor)));
          } catch (...) {
            detail::park(std::current_exception());
            return -1;  // outside the enum: the call using the predicate fails
          }
        },
        box, &detail::deleteBox<Box>, &out));
    return adopt(out, detail::kindOf<Policy>());
  }
  // andBind / orBind: accept when all (any) of the predicates (>= 1, all of
  // the policy's kind) accept.
  template <class Policy>
  static AnchorPredicate andBind(Policy accept, Policy reject, const std::vector<const AnchorPredicate *> &predicates) {
    return combine(mrt_anchor_predicate_and, accept, reject, predicates);
  }
  template <class Policy>
  static AnchorPredicate orBind(Policy accept, Policy reject, const std::vector<const AnchorPredicate *> &predicates) {
    return combine(mrt_anchor_predicate_or, accept, reject, predicates);
  }

  // The policy for the anchor of `model` whose handle is anchor_handle, as an
  // int32_t of this predicate's kind (see evaluateAs).
  int32_t evaluate(const Model &model, const std::string &anchor_handle) const {
    detail::CallbackScope scope;
    int32_t policy = 0;
    scope.check(mrt_anchor_predicate_evaluate(get(), model.get(), anchor_handle.c_str(), &policy));
    return policy;
  }
  template <class Policy>
  Policy evaluateAs(const Model &model, const std::string &anchor_handle) const {
    if (detail::kindOf<Policy>() != kind_) {
      throw Error(MRT_INVALID_ARGUMENT, "mrt::AnchorPredicate::evaluateAs: the predicate is of the other kind");
    }
    return static_cast<Policy>(evaluate(model, anchor_handle));
  }

  PredicateKind kind() const noexcept { return kind_; }

 private:
  template <class Policy>
  static constexpr Policy defaultAccept() {
    if constexpr (std::is_same_v<Policy, AnchorCallbackPolicy>) return AnchorCallbackPolicy::BIND_USER_CB;
    else return PopefDataUsagePolicy::USE_USER_DATA;
  }
  template <class Policy>
  static constexpr Policy defaultReject() {
    if constexpr (std::is_same_v<Policy, AnchorCallbackPolicy>) return AnchorCallbackPolicy::BIND_EMPTY_CB;
    else return PopefDataUsagePolicy::USE_POPEF_DATA_IF_ANY;
  }
  template <class Policy>
  static int32_t cKind() {
    return static_cast<int32_t>(detail::kindOf<Policy>());
  }
  static AnchorPredicate adopt(mrt_anchor_predicate *p, PredicateKind k) {
    AnchorPredicate a;
    a.handle_.reset(p);
    a.kind_ = k;
    return a;
  }
  template <class Policy>
  static AnchorPredicate prebuilt(int32_t which, const Model *model, const std::vector<uint64_t> &programs,
                                  Policy accept, Policy reject) {
    mrt_anchor_predicate *out = nullptr;
    check(mrt_anchor_predicate_create(cKind<Policy>(), which, model ? model->get() : nullptr,
                                      programs.empty() ? nullptr : programs.data(), programs.size(),
                                      static_cast<int32_t>(accept), static_cast<int32_t>(reject), &out));
    return adopt(out, detail::kindOf<Policy>());
  }
  template <class Fn, class Policy>
  static AnchorPredicate combine(Fn fn, Policy accept, Policy reject,
                                 const std::vector<const AnchorPredicate *> &predicates) {
    std::vector<const mrt_anchor_predicate *> c;
    for (const auto *p : predicates) {
      if (p == nullptr) throw Error(MRT_INVALID_ARGUMENT, "mrt::AnchorPredicate: a null predicate to combine");
      c.push_back(p->get());
    }
    mrt_anchor_predicate *out = nullptr;
    check(fn(cKind<Policy>(), static_cast<int32_t>(accept), static_cast<int32_t>(reject), c.data(), c.size(), &out));
    return adopt(out, detail::kindOf<Policy>());
  }

  PredicateKind kind_ = PredicateKind::AnchorCallback;
};

// ---------------------------------------------------------------------------
// Queues

// What a queue transfers (mrt_queue_info).
struct QueueInfo {
  std::string name;
  DataType data_type = DataType::F32;
  std::vector<int64_t> shape;
  int64_t size_in_bytes = 0;      // one device transfer
  int64_t sample_size_bytes = 0;  // the unit of enqueued sizes
  int64_t num_buffers = 0;        // ring entries
  bool connected = false;

  static QueueInfo from(const mrt_queue_info &c) {
    QueueInfo q;
    q.name = detail::str(c.name);
    q.data_type = static_cast<DataType>(c.data_type);
    if (c.shape) q.shape.assign(c.shape, c.shape + c.rank);
    q.size_in_bytes = c.size_in_bytes;
    q.sample_size_bytes = c.sample_size_bytes;
    q.num_buffers = c.num_buffers;
    q.connected = c.connected;
    return q;
  }
};

// Called on the device thread (the thread running a session's programs, or
// the caller of QueueManager::transfer). A throw is swallowed.
using ReadStartCallback = std::function<void()>;
using ReadCompleteCallback = std::function<void()>;
using WriteCompleteCallback = std::function<void()>;

namespace detail {
// The callbacks of one enqueued entry, freed when the library drops it.
struct QueueEntryCallbacks {
  std::function<void()> first;
  std::function<void()> second;

  static void callFirst(void *box) noexcept {
    try {
      static_cast<QueueEntryCallbacks *>(box)->first();
    } catch (...) {
    }
  }
  static void callSecond(void *box) noexcept {
    try {
      static_cast<QueueEntryCallbacks *>(box)->second();
    } catch (...) {
    }
  }
};
}  // namespace detail

// The input queue of one anchor: a non-owning view, valid while its
// QueueManager lives. One producer thread at a time (enqueue, flush, reset);
// disconnect from any thread. Queues carry pointers: enqueued bytes are read
// when the device transfers them, so they must stay valid until then.
class InputQueue {
 public:
  explicit InputQueue(mrt_input_queue *queue) noexcept : queue_(queue) {}

  // Queues size_bytes bytes at data (a positive whole number of samples).
  // read_start runs just before the first byte is copied, read_complete once
  // the last is; both on the device thread. Blocks while the queue is full;
  // mrt::Error(MRT_CANCELLED) if it is or gets disconnected.
  void enqueue(const void *data, int64_t size_bytes, ReadStartCallback read_start = nullptr,
               ReadCompleteCallback read_complete = nullptr) const {
    mrt_input_queue *queue = get();
    if (!read_start && !read_complete) {
      check(mrt_input_queue_enqueue(queue, data, size_bytes, nullptr, nullptr, nullptr, nullptr));
      return;
    }
    using Box = detail::QueueEntryCallbacks;
    const bool start = static_cast<bool>(read_start), complete = static_cast<bool>(read_complete);
    auto *box = new Box{std::move(read_start), std::move(read_complete)};
    check(mrt_input_queue_enqueue(queue, data, size_bytes, start ? &Box::callFirst : nullptr,
                                  complete ? &Box::callSecond : nullptr, box, &detail::deleteBox<Box>));
  }
  template <class T>
  void enqueue(Span<const T> data, ReadStartCallback read_start = nullptr,
               ReadCompleteCallback read_complete = nullptr) const {
    enqueue(data.data(), static_cast<int64_t>(data.size_bytes()), std::move(read_start), std::move(read_complete));
  }
  // Two-phase enqueue (mrt_input_queue_enqueue_lock): the entry of the
  // ring's next slot, to fill in place (blocks while the ring is full; the
  // same entry again while it stays locked); enqueueComplete() publishes it.
  // The entry holds C callbacks: function pointers and user_data.
  mrt_input_queue_entry &enqueueLock() const {
    mrt_input_queue_entry *entry = nullptr;
    check(mrt_input_queue_enqueue_lock(get(), &entry));
    return *entry;
  }
  void enqueueComplete() const { check(mrt_input_queue_enqueue_complete(get())); }
  // Pads a partial transfer with zeros, or queues a whole transfer of zeros.
  void flush() const { check(mrt_input_queue_flush(get())); }
  // Empties the queue and reconnects it (no other thread may use it).
  void reset() const { check(mrt_input_queue_reset(get())); }
  // Wakes blocked calls; the device gets zeros until reset. Any thread.
  void disconnect() const { check(mrt_input_queue_disconnect(get())); }
  QueueInfo info() const {
    mrt_queue_info c;
    mrt_queue_info_init(&c);
    check(mrt_input_queue_info(get(), &c));
    return QueueInfo::from(c);
  }

  mrt_input_queue *get() const {
    if (!queue_) throw Error(MRT_FAILED_PRECONDITION, "mrt::InputQueue: an empty view");
    return queue_;
  }

 private:
  mrt_input_queue *queue_;
};

// The output queue of one anchor; as InputQueue.
class OutputQueue {
 public:
  explicit OutputQueue(mrt_output_queue *queue) noexcept : queue_(queue) {}

  // Queues the buffer data of size_bytes bytes for the device's output;
  // write_complete runs on the device thread once it is written.
  void enqueue(void *data, int64_t size_bytes, WriteCompleteCallback write_complete = nullptr) const {
    mrt_output_queue *queue = get();
    if (!write_complete) {
      check(mrt_output_queue_enqueue(queue, data, size_bytes, nullptr, nullptr, nullptr));
      return;
    }
    using Box = detail::QueueEntryCallbacks;
    auto *box = new Box{std::move(write_complete), nullptr};
    check(mrt_output_queue_enqueue(queue, data, size_bytes, &Box::callFirst, box, &detail::deleteBox<Box>));
  }
  template <class T>
  void enqueue(Span<T> data, WriteCompleteCallback write_complete = nullptr) const {
    enqueue(data.data(), static_cast<int64_t>(data.size_bytes()), std::move(write_complete));
  }
  // As InputQueue's (mrt_output_queue_enqueue_lock).
  mrt_output_queue_entry &enqueueLock() const {
    mrt_output_queue_entry *entry = nullptr;
    check(mrt_output_queue_enqueue_lock(get(), &entry));
    return *entry;
  }
  void enqueueComplete() const { check(mrt_output_queue_enqueue_complete(get())); }
  // Gives the dummy output of a flushed input a scratch buffer.
  void flush() const { check(mrt_output_queue_flush(get())); }
  void reset() const { check(mrt_output_queue_reset(get())); }
  void disconnect() const { check(mrt_output_queue_disconnect(get())); }
  QueueInfo info() const {
    mrt_queue_info c;
    mrt_queue_info_init(&c);
    check(mrt_output_queue_info(get(), &c));
    return QueueInfo::from(c);
  }

  mrt_output_queue *get() const {
    if (!queue_) throw Error(MRT_FAILED_PRECONDITION, "mrt::OutputQueue: an empty view");
    return queue_;
  }

 private:
  mrt_output_queue *queue_;
};

// Called on the device thread when a transfer of anchor_name has waited
// `timeout` for data (input) or buffers (output), and again every timeout
// it keeps waiting; bytes_done is how much is already transferred. To let
// the device go on, flush the queue (a producer call: keep it from
// overlapping your producer's calls). A throw is swallowed.
using QueueTimeoutCallback =
    std::function<void(std::string_view anchor_name, TensorType direction, int64_t bytes_done)>;

// QueueManager options; defaults from mrt_queue_manager_config_init.
struct QueueManagerConfig {
  QueueManagerConfig() {
    mrt_queue_manager_config c;
    mrt_queue_manager_config_init(&c);
    ring_size_multiplier = c.ring_size_multiplier;
    load_save_ring_size_multiplier = c.load_save_ring_size_multiplier;
    timeout = std::chrono::nanoseconds(c.timeout_ns);
  }
  int64_t ring_size_multiplier;            // ring entries = this x batch (Main anchors)
  int64_t load_save_ring_size_multiplier;  // the same for Load/Save-only anchors
  std::chrono::nanoseconds timeout;        // MRT_FOREVER (< 0, default): never call timeout_callback
  QueueTimeoutCallback timeout_callback;
  std::map<std::string, int64_t> ring_size_overrides;  // anchor name -> its own multiplier
};

namespace detail {
// A C queue manager config and the overrides array it points into.
struct CQueueManagerConfig {
  mrt_queue_manager_config c;
  std::vector<mrt_ring_size_override> overrides;  // names borrowed from the QueueManagerConfig
};

// The C config of `config` (valid while `config` lives); its callback box
// is handed to the library (which frees it exactly once, also when the
// call fails).
inline CQueueManagerConfig queueManagerConfig(const QueueManagerConfig &config) {
  CQueueManagerConfig result;
  for (const auto &[name, multiplier] : config.ring_size_overrides) {
    result.overrides.push_back({name.c_str(), multiplier});
  }
  mrt_queue_manager_config &c = result.c;
  mrt_queue_manager_config_init(&c);
  c.ring_size_overrides = result.overrides.data();
  c.num_ring_size_overrides = result.overrides.size();
  c.ring_size_multiplier = config.ring_size_multiplier;
  c.load_save_ring_size_multiplier = config.load_save_ring_size_multiplier;
  c.timeout_ns = config.timeout.count();
  if (config.timeout_callback) {
    c.timeout_fn = [](const char *anchor, int32_t direction, int64_t bytes_done, void *user_data) {
      try {
        (*static_cast<QueueTimeoutCallback *>(user_data))(anchor, static_cast<TensorType>(direction), bytes_done);
      } catch (...) {
      }
    };
    c.timeout_user_data = new QueueTimeoutCallback(config.timeout_callback);
    c.timeout_user_data_free = &deleteBox<QueueTimeoutCallback>;
  }
  return result;  // moving the vector keeps its buffer, so c's pointer stays valid
}
}  // namespace detail

// One input queue per user input anchor of a model and one output queue per
// output anchor (the seeds' QueueManager). From Session::createQueueManager
// (the session's device transfers while it runs programs) or, without a
// session, QueueManager(model) (the caller plays the device with
// transfer()). Lookups may be made from any thread. Destroy it while no
// thread is inside a call on it or its queues. Move-only.
class QueueManager : public detail::OwnedHandle<mrt_queue_manager> {
 public:
  QueueManager() = default;
  // A standalone manager over model's anchors, connected to no device.
  explicit QueueManager(const Model &model, const QueueManagerConfig &config = {}) {
    const mrt_model *m = model.get();  // before the config owns a callback box
    const detail::CQueueManagerConfig c = detail::queueManagerConfig(config);
    mrt_queue_manager *out = nullptr;
    check(mrt_queue_manager_create(m, &c.c, &out));
    handle_.reset(out);
  }
  static QueueManager adopt(mrt_queue_manager *manager) noexcept {
    QueueManager q;
    q.handle_.reset(manager);
    return q;
  }

  // The queue of an anchor, by anchor name or stream handle.
  InputQueue input(const std::string &name) const {
    mrt_input_queue *q = nullptr;
    check(mrt_queue_manager_input_queue(get(), name.c_str(), &q));
    return InputQueue(q);
  }
  OutputQueue output(const std::string &name) const {
    mrt_output_queue *q = nullptr;
    check(mrt_queue_manager_output_queue(get(), name.c_str(), &q));
    return OutputQueue(q);
  }
  std::vector<std::string> inputNames() const {
    return names(mrt_queue_manager_num_inputs, mrt_queue_manager_input_name);
  }
  std::vector<std::string> outputNames() const {
    return names(mrt_queue_manager_num_outputs, mrt_queue_manager_output_name);
  }
  // Every queue by name (the seeds' QueueManager::inputs / outputs).
  std::map<std::string, InputQueue> inputs() const {
    std::map<std::string, InputQueue> result;
    for (const auto &name : inputNames()) result.emplace(name, input(name));
    return result;
  }
  std::map<std::string, OutputQueue> outputs() const {
    std::map<std::string, OutputQueue> result;
    for (const auto &name : outputNames()) result.emplace(name, output(name));
    return result;
  }

  void flushAll() const { check(mrt_queue_manager_flush_all(get())); }
  void disconnectAll() const { check(mrt_queue_manager_disconnect_all(get())); }
  void resetAll() const { check(mrt_queue_manager_reset_all(get())); }

  // Standalone managers only: the device side of one anchor (by handle or
  // name). device_buffer holds exactly the tensor's size. Blocks until
  // enough is enqueued; runs the entries' callbacks on this thread.
  void transfer(const std::string &handle, void *device_buffer) const {
    check(mrt_queue_manager_transfer(get(), handle.c_str(), device_buffer));
  }


 private:
  template <class Count, class Name>
  std::vector<std::string> names(Count count_fn, Name name_fn) const {
    std::size_t n = 0;
    check(count_fn(get(), &n));
    std::vector<std::string> result;
    for (std::size_t i = 0; i < n; ++i) {
      const char *name = nullptr;
      check(name_fn(get(), i, &name));
      result.push_back(detail::str(name));
    }
    return result;
  }

};

// ---------------------------------------------------------------------------
// Sessions

enum class LaunchPolicy { Immediate = MRT_LAUNCH_IMMEDIATE, Deferred = MRT_LAUNCH_DEFERRED };

// Session options; defaults from mrt_session_config_init.
struct SessionConfig {
  SessionConfig() {
    mrt_session_config c;
    mrt_session_config_init(&c);
    policy = static_cast<LaunchPolicy>(c.policy);
    check_package_hash = c.check_package_hash;
  }
  LaunchPolicy policy;
  // Which inputs use the model's TensorData/FeedData (a PopefDataUsage
  // predicate; the session keeps its own reference). nullptr: all.
  const AnchorPredicate *pred_tensor_data = nullptr;
  bool check_package_hash;
  // How an Immediate session waits for a device; nullopt: NO_WAIT.
  std::optional<DeviceWaitConfig> wait_config;
  std::string max_look_ahead = "unlimited";
};

// Called whenever the device reads (input: write `size` bytes to buffer) or
// wrote (output: read them) an anchor's stream, on the thread running the
// session's programs, never overlapping for one session. buffer is valid
// during the call only. An exception it throws stops the session and is
// rethrown by the run* call (then reload() before running again).
using AnchorCallback = std::function<void(void *buffer, uint64_t size)>;

// For each anchor a handler selects: the callback to bind, or an empty
// function for "keep the anchor's binding". Called on the thread calling
// setUser*Handler, once per anchor; an exception it throws is rethrown there.
using CallbackFactory = std::function<AnchorCallback(const AnchorInfo &anchor)>;

enum class SessionAnchorSet {
  Inputs = MRT_SESSION_INPUT_ANCHORS,
  UserInputs = MRT_SESSION_USER_INPUT_ANCHORS,
  UserOutputs = MRT_SESSION_USER_OUTPUT_ANCHORS
};

namespace detail {
// A bound anchor callback and the session to stop if it throws.
struct AnchorCallbackBox {
  AnchorCallback callback;
  mrt_session *session;

  static void call(void *buffer, uint64_t size, void *user_data) noexcept {
    auto *box = static_cast<AnchorCallbackBox *>(user_data);
    try {
      box->callback(buffer, size);
    } catch (...) {
      park(std::current_exception());
      mrt_session_stop(box->session);
    }
  }
};
}  // namespace detail

// Modelled time on the target (ModelRunner::deviceTime): cycles since the
// device was last loaded, at clock_hz.
struct DeviceTime {
  uint64_t cycles = 0;
  double clock_hz = 0;
  // The modelled seconds from `earlier` to this sample.
  double secondsSince(const DeviceTime &earlier) const {
    return clock_hz > 0 ? static_cast<double>(cycles - earlier.cycles) / clock_hz : 0.0;
  }
};

// A session links one model to one device: loads the executable, binds the
// anchors' streams and runs the Load, Main and Save programs. stop() and
// isStopped() may be called from any thread at any time; every other call
// must not overlap another call on the session. Move-only.
class Session : public detail::OwnedHandle<mrt_session> {
 public:
  Session() = default;
  explicit Session(const Model &model, const SessionConfig &config = {}) {
    Config c(config);
    detail::CallbackScope scope;
    mrt_session *out = nullptr;
    scope.check(mrt_session_create(model.get(), &c.c, &out));
    handle_.reset(out);
  }
  explicit Session(const std::vector<std::string> &popef_paths, const SessionConfig &config = {}) {
    Config c(config);
    auto paths = detail::cStrings(popef_paths);
    detail::CallbackScope scope;
    mrt_session *out = nullptr;
    scope.check(mrt_session_create_from_files(paths.data(), paths.size(), &c.c, &out));
    handle_.reset(out);
  }

  // The session's model (a new reference).
  Model model() const {
    mrt_model *out = nullptr;
    check(mrt_session_model(get(), &out));
    return Model::adopt(out);
  }

  // Binds to device (unbinding first, which runs Save if Load has run) and
  // loads the executable. The session keeps its own reference to the device.
  void bindToDevice(const Device &device) { check(mrt_session_bind_to_device(get(), device.get())); }
  void unloadFromDevice() { check(mrt_session_unload_from_device(get())); }
  // Loads again on the last device (resetting it); needed after stop().
  void reload() { check(mrt_session_reload(get())); }

  void runLoadPrograms() { run(mrt_session_run_load_programs); }
  // Runs Load first if it has not run since the executable was loaded.
  void runMainPrograms() { run(mrt_session_run_main_programs); }
  void runSavePrograms() { run(mrt_session_run_save_programs); }
  // Main on replica `replica` (0 .. numReplicas() - 1) only, on this thread,
  // which runs that replica's callbacks and queue transfers. Runs for
  // distinct replicas may overlap, each on its own thread, once the
  // executable is loaded; nothing else may be called meanwhile but stop()
  // and isStopped().
  void runMainPrograms(unsigned replica) {
    detail::CallbackScope scope;
    scope.check(mrt_session_run_main_programs_for_replica(get(), replica));
  }
  // The model's replication factor R: replicas 0 .. R - 1 (1 for a model
  // that is not replicated). Any thread.
  unsigned numReplicas() const {
    uint32_t count = 0;
    check(mrt_session_num_replicas(get(), &count));
    return count;
  }
  void runPrograms(const std::vector<uint64_t> &programs) {
    detail::CallbackScope scope;
    scope.check(mrt_session_run_programs(get(), programs.empty() ? nullptr : programs.data(), programs.size()));
  }

  // Binds callback to the anchor whose handle is anchor_handle (an empty
  // function binds an empty callback). A replaced callback is freed when the
  // session no longer needs it. On a replicated model it binds every
  // replica: the callback is then called from each replica's thread,
  // concurrently.
  void setCallbackForAnchor(const std::string &anchor_handle, AnchorCallback callback) {
    bindCallback(anchor_handle, std::nullopt, std::move(callback));
  }
  // The same for replica `replica` (0 .. numReplicas() - 1) only.
  void setCallbackForAnchor(const std::string &anchor_handle, unsigned replica, AnchorCallback callback) {
    bindCallback(anchor_handle, replica, std::move(callback));
  }

  // Fills the anchor's remote buffer from `size` bytes at `data` (copied)
  // instead of its TensorData, now if loaded and at every later load.
  void setRemoteBufferData(const std::string &anchor_handle, const void *data, std::size_t size) {
    check(mrt_session_set_remote_buffer_data(get(), anchor_handle.c_str(), data, size));
  }

  // For each input (output) anchor with a stream, the predicate's policy
  // (nullptr: BIND_USER_CB for all): BIND_USER_CB asks factory for a callback
  // (unless skip_connected and the anchor has one), BIND_EMPTY_CB binds an
  // empty callback, SKIP_CB leaves the anchor alone.
  void setUserInputHandler(CallbackFactory factory, const AnchorPredicate *predicate = nullptr,
                           bool skip_connected = false) {
    setHandler(mrt_session_set_user_input_handler, std::move(factory), predicate, skip_connected);
  }
  void setUserOutputHandler(CallbackFactory factory, const AnchorPredicate *predicate = nullptr,
                            bool skip_connected = false) {
    setHandler(mrt_session_set_user_output_handler, std::move(factory), predicate, skip_connected);
  }

  std::vector<AnchorInfo> anchors(SessionAnchorSet set) const {
    std::size_t n = 0;
    check(mrt_session_anchor_count(get(), static_cast<int32_t>(set), &n));
    std::vector<AnchorInfo> result;
    for (std::size_t i = 0; i < n; ++i) {
      mrt_anchor_info c{};
      c.struct_size = sizeof c;
      check(mrt_session_anchor(get(), static_cast<int32_t>(set), i, &c));
      result.push_back(AnchorInfo::from(c));
    }
    return result;
  }
  std::vector<AnchorInfo> getInputAnchors() const { return anchors(SessionAnchorSet::Inputs); }
  std::vector<AnchorInfo> getUserInputAnchors() const { return anchors(SessionAnchorSet::UserInputs); }
  std::vector<AnchorInfo> getUserOutputAnchors() const { return anchors(SessionAnchorSet::UserOutputs); }

  // For each of programs, the anchors with a stream and no binding it moves.
  std::map<uint64_t, std::vector<AnchorInfo>> anchorsNotConnectedToCallbacks(
      const std::vector<uint64_t> &programs) const {
    using Result = std::map<uint64_t, std::vector<AnchorInfo>>;
    Result result;
    detail::CallbackScope scope;
    scope.check(mrt_session_anchors_not_connected(
        get(), programs.empty() ? nullptr : programs.data(), programs.size(),
        [](uint64_t program, const mrt_anchor_info *anchor, void *user_data) {
          try {
            (*static_cast<Result *>(user_data))[program].push_back(AnchorInfo::from(*anchor));
          } catch (...) {
            detail::park(std::current_exception());
          }
        },
        &result, nullptr));
    return result;
  }
  // mrt::Error(MRT_FAILED_PRECONDITION) listing the unbound anchors, if any.
  void errorIfAnchorsAreNotConnectedToCallbacks(const std::vector<uint64_t> &programs) const {
    check(mrt_session_error_if_anchors_not_connected(get(), programs.empty() ? nullptr : programs.data(),
                                                     programs.size()));
  }

  // Stops running programs at their next host sync (the run throws
  // MRT_CANCELLED) and later runs until reload(). Any thread.
  void stop() { check(mrt_session_stop(get())); }
  bool isStopped() const {
    bool stopped = false;
    check(mrt_session_is_stopped(get(), &stopped));
    return stopped;
  }

  // The seeds' createQueueManager: one queue per anchor needing user data,
  // fed to the device whenever the session runs programs (on one thread)
  // while producers enqueue. The timeout callback runs on the thread running
  // the programs. stop() disconnects the queues, reload() resets them. A
  // second call replaces the first manager (which stays valid, detached).
  // The manager and session may be destroyed in either order: a manager
  // outliving its session fails its calls with MRT_FAILED_PRECONDITION.
  QueueManager createQueueManager(const QueueManagerConfig &config = {}) {
    return makeQueueManager(std::nullopt, config);
  }
  // A replicated model has a manager per replica (createQueueManager refuses
  // it): replica `replica`'s, fed whenever that replica runs its programs
  // (runMainPrograms(replica) on its own thread, or runMainPrograms()).
  // A second call for the same replica replaces that replica's manager only.
  QueueManager createQueueManagerForReplica(unsigned replica, const QueueManagerConfig &config = {}) {
    return makeQueueManager(replica, config);
  }

  // Cycles replica `replica` of the device has run since the executable was
  // last loaded, and its clock (mrt_session_device_cycles). May be called
  // while another thread runs the programs.
  DeviceTime deviceTime(unsigned replica = 0) const {
    DeviceTime time;
    check(mrt_session_device_cycles(get(), replica, &time.cycles, &time.clock_hz));
    return time;
  }

  // Leaves the device (without Save) and frees the callbacks.

 private:
  // The C config and the wait config it points to.
  struct Config {
    explicit Config(const SessionConfig &config) {
      mrt_session_config_init(&c);
      c.policy = static_cast<int32_t>(config.policy);
      c.pred_tensor_data = config.pred_tensor_data ? config.pred_tensor_data->get() : nullptr;
      c.check_package_hash = config.check_package_hash;
      if (config.wait_config) {
        wait = config.wait_config->toC();
        c.wait_config = &wait;
      }
      c.max_look_ahead = config.max_look_ahead.c_str();
    }
    mrt_session_config c;
    mrt_device_wait_config wait;
  };

  void run(mrt_status (*fn)(mrt_session *)) {
    detail::CallbackScope scope;
    scope.check(fn(get()));
  }

  // createQueueManagerForReplica, or createQueueManager without a replica.
  QueueManager makeQueueManager(std::optional<unsigned> replica, const QueueManagerConfig &config) {
    mrt_session *s = get();
    const detail::CQueueManagerConfig c = detail::queueManagerConfig(config);
    mrt_queue_manager *out = nullptr;
    check(replica ? mrt_session_create_queue_manager_for_replica(s, *replica, &c.c, &out)
                  : mrt_session_create_queue_manager(s, &c.c, &out));
    return QueueManager::adopt(out);
  }

  // setCallbackForAnchor on one replica, or on every replica without one.
  void bindCallback(const std::string &anchor_handle, std::optional<unsigned> replica, AnchorCallback callback) {
    mrt_session *s = get();
    using Box = detail::AnchorCallbackBox;
    Box *box = callback ? new Box{std::move(callback), s} : nullptr;
    const mrt_anchor_callback_fn fn = box ? &Box::call : nullptr;
    void (*const free_box)(void *) = box ? &detail::deleteBox<Box> : nullptr;
    check(replica ? mrt_session_set_replica_callback_for_anchor(s, anchor_handle.c_str(), *replica, fn, box, free_box)
                  : mrt_session_set_callback_for_anchor(s, anchor_handle.c_str(), fn, box, free_box));
  }

  template <class Fn>
  void setHandler(Fn fn, CallbackFactory factory, const AnchorPredicate *predicate, bool skip_connected) {
    struct FactoryBox {
      CallbackFactory factory;
      mrt_session *session;
    };
    mrt_session *s = get();
    const mrt_anchor_predicate *pred = predicate ? predicate->get() : nullptr;
    auto *box = new FactoryBox{std::move(factory), s};
    detail::CallbackScope scope;
    scope.check(fn(
        s,
        [](const mrt_anchor_info *anchor, mrt_anchor_callback *out, void *user_data) -> bool {
          auto *state = static_cast<FactoryBox *>(user_data);
          try {
            AnchorCallback callback = state->factory ? state->factory(AnchorInfo::from(*anchor)) : nullptr;
            if (!callback) return false;
            using Box = detail::AnchorCallbackBox;
            out->fn = &Box::call;
            out->user_data = new Box{std::move(callback), state->session};
            out->user_data_free = &detail::deleteBox<Box>;
            return true;
          } catch (...) {
            detail::park(std::current_exception());
            return false;
          }
        },
        box, &detail::deleteBox<FactoryBox>, pred, skip_connected));
  }

};

// ---------------------------------------------------------------------------
// Futures

// The pending outcome of an asynchronous request (mrt_future). Every call
// may be made from any thread. Destroying a pending future is allowed: the
// request completes, and onReady callbacks still fire. Move-only.
class Future : public detail::OwnedHandle<mrt_future> {
 public:
  Future() = default;
  static Future adopt(mrt_future *future) noexcept {
    Future f;
    f.handle_.reset(future);
    return f;
  }

  bool isReady() const { return mrt_future_is_ready(get()); }
  // Waits at most timeout (negative: forever) and returns true once the
  // request is done; false if it is not done in time.
  bool waitFor(std::chrono::nanoseconds timeout) const {
    const mrt_status s = mrt_future_wait(get(), timeout.count());
    return s != MRT_DEADLINE_EXCEEDED || isReady();
  }
  // Waits until the request is done; throws mrt::Error with the request's
  // code and message if it failed.
  void wait() const {
    waitFor(std::chrono::nanoseconds(-1));
    const mrt_status s = status();
    if (s != MRT_OK) throw Error(s, errorMessage());
  }
  // The request's status; mrt::Error(MRT_FAILED_PRECONDITION) while running.
  mrt_status status() const {
    mrt_status s = MRT_OK;
    check(mrt_future_status(get(), &s));
    return s;
  }
  // What went wrong; "" while pending or after success.
  std::string errorMessage() const { return mrt_future_error_message(get()); }

  // Calls callback exactly once with the request's status: now, on this
  // thread, if it is done; otherwise on the library thread completing it.
  // Must not block for long; a throw is swallowed. Freed once it has run.
  void onReady(std::function<void(mrt_status)> callback) const {
    using Box = std::function<void(mrt_status)>;
    mrt_future *future = get();  // before the box: a throw must not leak it
    auto *box = new Box(std::move(callback));
    check(mrt_future_on_ready(
        future,
        [](mrt_status status, void *user_data) {
          try {
            (*static_cast<Box *>(user_data))(status);
          } catch (...) {
          }
        },
        box, &detail::deleteBox<Box>));
  }

  using OwnedHandle::release;  // hands the C handle back to the caller
};

// ---------------------------------------------------------------------------
// Model runner

// The bytes of one named input, borrowed from the caller, and so is the
// name: it must outlive the view (a string literal, or a std::string that
// is not a temporary). The layout of mrt_tensor_view, so an array of views
// goes to the C API as it is, with no copy and no allocation.
struct ConstTensorView {
  const char *name = nullptr;
  const void *data = nullptr;
  uint64_t size_bytes = 0;

  ConstTensorView(const char *n, const void *d, uint64_t size) noexcept : name(n), data(d), size_bytes(size) {}
  ConstTensorView(const std::string &n, const void *d, uint64_t size) noexcept : ConstTensorView(n.c_str(), d, size) {}
  ConstTensorView(std::string &&, const void *, uint64_t) = delete;  // the name would dangle
  // Any contiguous container or Span (std::vector<float>, float[N], ...).
  template <class C, class P = decltype(std::data(std::declval<const C &>())),
            class = std::enable_if_t<std::is_pointer_v<P>>>
  ConstTensorView(const char *n, const C &c) noexcept
      : name(n), data(std::data(c)), size_bytes(std::size(c) * sizeof(*std::data(c))) {}
  template <class C, class P = decltype(std::data(std::declval<const C &>())),
            class = std::enable_if_t<std::is_pointer_v<P>>>
  ConstTensorView(const std::string &n, const C &c) noexcept : ConstTensorView(n.c_str(), c) {}
  template <class C>
  ConstTensorView(std::string &&, const C &) = delete;  // the name would dangle
};

// The bytes of one named output, borrowed from the caller, with its name
// (as for ConstTensorView). The layout of mrt_tensor_view.
struct TensorView {
  const char *name = nullptr;
  void *data = nullptr;
  uint64_t size_bytes = 0;

  TensorView(const char *n, void *d, uint64_t size) noexcept : name(n), data(d), size_bytes(size) {}
  TensorView(const std::string &n, void *d, uint64_t size) noexcept : TensorView(n.c_str(), d, size) {}
  TensorView(std::string &&, void *, uint64_t) = delete;  // the name would dangle
  template <class C, class P = decltype(std::data(std::declval<C &>())),
            class = std::enable_if_t<std::is_pointer_v<P> && !std::is_const_v<std::remove_pointer_t<P>>>>
  TensorView(const char *n, C &c) noexcept : name(n), data(std::data(c)), size_bytes(std::size(c) * sizeof(*std::data(c))) {}
  template <class C, class P = decltype(std::data(std::declval<C &>())),
            class = std::enable_if_t<std::is_pointer_v<P> && !std::is_const_v<std::remove_pointer_t<P>>>>
  TensorView(const std::string &n, C &c) noexcept : TensorView(n.c_str(), c) {}
  template <class C>
  TensorView(std::string &&, C &) = delete;  // the name would dangle
};

namespace detail {
template <class View>
constexpr bool kLaidOutAsCView = std::is_standard_layout_v<View> && sizeof(View) == sizeof(mrt_tensor_view) &&
                                 offsetof(View, name) == offsetof(mrt_tensor_view, name) &&
                                 offsetof(View, data) == offsetof(mrt_tensor_view, data) &&
                                 offsetof(View, size_bytes) == offsetof(mrt_tensor_view, size_bytes);
static_assert(kLaidOutAsCView<ConstTensorView> && kLaidOutAsCView<TensorView>,
              "tensor views pass to the C API as mrt_tensor_view arrays");

// The views as the C API's array, without a copy.
template <class View>
const mrt_tensor_view *cViews(Span<const View> views) noexcept {
  return reinterpret_cast<const mrt_tensor_view *>(views.data());
}
}  // namespace detail

// One output held by a TensorMemory: name and bytes borrowed from it.
struct TensorMemoryView {
  std::string_view name;
  Span<std::byte> bytes;

  template <class T>
  Span<const T> as() const {
    return {reinterpret_cast<const T *>(bytes.data()), bytes.size() / sizeof(T)};
  }
};

// Outputs the library allocated (64-byte aligned), one per execute output,
// in name order. Any thread. Move-only.
class TensorMemory : public detail::OwnedHandle<mrt_tensor_memory> {
 public:
  TensorMemory() = default;
  static TensorMemory adopt(mrt_tensor_memory *memory) noexcept {
    TensorMemory m;
    m.handle_.reset(memory);
    return m;
  }

  std::size_t size() const {
    std::size_t n = 0;
    check(mrt_tensor_memory_count(get(), &n));
    return n;
  }
  TensorMemoryView operator[](std::size_t index) const {
    mrt_tensor_view v{};
    check(mrt_tensor_memory_get(get(), index, &v));
    return view(v);
  }
  // The output named `name`; mrt::Error(MRT_NOT_FOUND) if none.
  TensorMemoryView find(const std::string &name) const {
    mrt_tensor_view v{};
    check(mrt_tensor_memory_find(get(), name.c_str(), &v));
    return view(v);
  }
  template <class T>
  Span<const T> as(const std::string &name) const {
    return find(name).template as<T>();
  }


 private:
  static TensorMemoryView view(const mrt_tensor_view &v) {
    return {v.name ? std::string_view(v.name) : std::string_view(),
            {static_cast<std::byte *>(v.data), static_cast<std::size_t>(v.size_bytes)}};
  }
};

// The description of one input or output (DataDesc).
struct DataDesc {
  std::string name;
  int64_t size_in_bytes = 0;  // of one model batch
  std::vector<int64_t> shape;
  DataType data_type = DataType::F32;
  bool popef_contains_tensor_data = false;
};
using InputDesc = DataDesc;
using OutputDesc = DataDesc;

// Save-program outputs of one replica (ModelRunnerConfig).
struct ReplicaOutputs {
  uint32_t replica_id = 0;
  std::vector<TensorView> outputs;  // buffers must outlive the runner
};

// Called on a replica's device thread when it timed out waiting for input
// tensor_id, before the runner flushes dummy data. Calls of different
// replicas may overlap. A throw is swallowed.
using FlushCallback = std::function<void(std::string_view tensor_id)>;

// Which queues a timeout flush pads, chosen inside a FlushSelectCallback:
// nothing added means every queue, else only the added ones. Valid only
// during the callback. A name that is not one of the runner's queues is
// logged when the flush happens, and every queue padded instead.
class FlushSelection {
 public:
  explicit FlushSelection(mrt_flush_selection *selection) : selection_(selection) {}
  void addInput(const char *name) { check(mrt_flush_selection_add(selection_, MRT_TENSOR_INPUT, name)); }
  void addOutput(const char *name) { check(mrt_flush_selection_add(selection_, MRT_TENSOR_OUTPUT, name)); }

 private:
  mrt_flush_selection *selection_;
};

// As FlushCallback, choosing the queues to pad (the seeds' flush_callback
// with its inputs and outputs). A throw is swallowed: every queue is padded.
using FlushSelectCallback = std::function<void(std::string_view tensor_id, FlushSelection &selection)>;

// ModelRunnerConfig; defaults from mrt_model_runner_config_init.
struct ModelRunnerConfig {
  ModelRunnerConfig() {
    mrt_model_runner_config c;
    mrt_model_runner_config_init(&c);
    assign(c);
  }
  // The scalar fields of a C config (arrays, devices and callbacks are not
  // carried: ModelRunner::config() does not return them).
  static ModelRunnerConfig from(const mrt_model_runner_config &c) {
    ModelRunnerConfig config;
    config.assign(c);
    return config;
  }
  void assign(const mrt_model_runner_config &c) {
    replication_factor = c.replication_factor;
    run_save_programs = c.run_save_programs;
    thread_safe = c.thread_safe;
    check_package_hash = c.check_package_hash;
    timeout_ns = std::chrono::nanoseconds(c.timeout_ns);
    validate_io_params = c.validate_io_params;
    batching_dim = c.batching_dim;
    auto_reset = c.auto_reset;
    max_look_ahead = c.max_look_ahead;
    ring_buffer_size_multiplier = c.ring_buffer_size_multiplier;
    flush_on_waiting_outputs = c.flush_on_waiting_outputs;
    batch_size_timeout_ns = std::chrono::nanoseconds(c.batch_size_timeout_ns);
    data_parallel_timeout_ns = std::chrono::nanoseconds(c.data_parallel_timeout_ns);
    is_batch_size_timeout_enabled = c.is_batch_size_timeout_enabled;
    request_tracepoints_buffer_size = c.request_tracepoints_buffer_size;
  }

  uint32_t replication_factor;
  bool run_save_programs;
  bool thread_safe;  // allow concurrent execute calls
  std::vector<ConstTensorView> frozen_inputs;  // copied at construction (names too)
  std::vector<ReplicaOutputs> replica_to_save_programs_outputs;
  // [replica id] -> device, nullptr entries for automatic choice; the runner
  // keeps its own reference.
  std::vector<const Device *> replica_to_device;
  std::optional<DeviceWaitConfig> device_wait_config;  // nullopt: NO_WAIT
  bool check_package_hash;
  std::chrono::nanoseconds timeout_ns;  // MRT_FOREVER (< 0): wait forever for input
  bool validate_io_params;
  uint32_t batching_dim;  // MRT_BATCHING_DISABLED or the dimension holding the batch
  bool auto_reset;
  int64_t max_look_ahead;  // < 0: unlimited
  uint32_t ring_buffer_size_multiplier;
  bool flush_on_waiting_outputs;
  std::chrono::nanoseconds batch_size_timeout_ns;     // < 0: never
  std::chrono::nanoseconds data_parallel_timeout_ns;  // < 0: never
  bool is_batch_size_timeout_enabled;
  std::size_t request_tracepoints_buffer_size;
  FlushCallback flush_callback;
  FlushSelectCallback flush_select_callback;  // set at most one of the two
};

// Phases of requests in microseconds (counts for statisticsCount).
struct RequestTimes {
  double request_us = 0;
  double read_preparation_us = 0;
  double read_queue_us = 0;
  double computation_us = 0;
};

enum class SimulatedError {
  TILE_EXCEPTION = MRT_SIMULATED_TILE_EXCEPTION,
  MEMORY_PARITY = MRT_SIMULATED_MEMORY_PARITY,
  EXCHANGE_ERROR = MRT_SIMULATED_EXCHANGE_ERROR,
  HOST_LINK_ERROR = MRT_SIMULATED_HOST_LINK_ERROR
};

// A model runner: one device, session and device thread per replica.
// execute/executeAsync validate on the caller's thread and throw
// mrt::Error (MRT_NOT_FOUND for an unknown name, MRT_INVALID_ARGUMENT for a
// wrong size), leaving the runner serving. With config.thread_safe they may
// be called from many threads at once; otherwise calls must not overlap.
// Descriptions and statistics: any thread. Destroying it (destructor,
// close()) runs Save if configured, cancels pending requests
// (MRT_CANCELLED) and must not overlap other calls. Move-only.
class ModelRunner : public detail::OwnedHandle<mrt_model_runner> {
 public:
  ModelRunner() = default;
  explicit ModelRunner(const Model &model, const ModelRunnerConfig &config = {}) {
    const mrt_model *m = model.get();  // before the config owns a callback box
    Config c(config);
    mrt_model_runner *out = nullptr;
    check(mrt_model_runner_create(m, &c.c, &out));
    adoptWith(out, std::move(c));
  }
  explicit ModelRunner(const std::string &popef_path, const ModelRunnerConfig &config = {})
      : ModelRunner(std::vector<std::string>{popef_path}, config) {}
  explicit ModelRunner(const std::vector<std::string> &popef_paths, const ModelRunnerConfig &config = {}) {
    auto paths = detail::cStrings(popef_paths);
    Config c(config);
    mrt_model_runner *out = nullptr;
    check(mrt_model_runner_create_from_files(paths.data(), paths.size(), &c.c, &out));
    adoptWith(out, std::move(c));
  }

  // Runs one request and returns once the outputs are in the caller's buffers.
  // The views (a std::vector, an array, or a braced list written in the
  // call: {{"x", x}}) reach the C API as they are: no allocation.
  void execute(Span<const ConstTensorView> inputs, Span<const TensorView> outputs, unsigned replica_id = 0) {
    check(mrt_model_runner_execute(get(), detail::cViews(inputs), inputs.size(), detail::cViews(outputs),
                                   outputs.size(), replica_id));
  }
  // As above with outputs in memory the library allocates.
  TensorMemory execute(Span<const ConstTensorView> inputs, unsigned replica_id = 0) {
    mrt_tensor_memory *out = nullptr;
    check(mrt_model_runner_execute_alloc(get(), detail::cViews(inputs), inputs.size(), replica_id, &out));
    return TensorMemory::adopt(out);
  }

  // Queues one request; the std::future becomes ready when it is done
  // (get() throws mrt::Error with the request's code and message if it
  // failed). The buffers must stay valid and untouched until then.
  std::future<void> executeAsync(Span<const ConstTensorView> inputs, Span<const TensorView> outputs,
                                 unsigned replica_id = 0) {
    return toStdFuture(submit(inputs, outputs, replica_id));
  }
  // As above with library-allocated outputs, delivered by the std::future.
  std::future<TensorMemory> executeAsync(Span<const ConstTensorView> inputs, unsigned replica_id = 0) {
    mrt_future *future = nullptr;
    mrt_tensor_memory *memory = nullptr;
    check(mrt_model_runner_execute_async_alloc(get(), detail::cViews(inputs), inputs.size(), replica_id, &future,
                                               &memory));
    return toStdFuture(Future::adopt(future), TensorMemory::adopt(memory));
  }
  // The raw mrt::Future of a request (for onReady callbacks, timed waits).
  Future submit(Span<const ConstTensorView> inputs, Span<const TensorView> outputs, unsigned replica_id = 0) {
    mrt_future *future = nullptr;
    check(mrt_model_runner_execute_async(get(), detail::cViews(inputs), inputs.size(), detail::cViews(outputs),
                                         outputs.size(), replica_id, &future));
    return Future::adopt(future);
  }

  // The runner's model (a new reference). Any thread.
  Model model() const {
    mrt_model *out = nullptr;
    check(mrt_model_runner_model(get(), &out));
    return Model::adopt(out);
  }
  // The options the runner runs with: the scalar fields only (frozen
  // inputs, Save outputs, devices, wait config and flush callback are left
  // empty). Any thread.
  ModelRunnerConfig config() const {
    mrt_model_runner_config c;
    mrt_model_runner_config_init(&c);
    check(mrt_model_runner_get_config(get(), &c));
    return ModelRunnerConfig::from(c);
  }

  // What execute takes (inputs without PopEF data, not frozen) and returns.
  std::vector<InputDesc> getExecuteInputs() const { return descs(mrt_model_runner_execute_inputs); }
  std::vector<OutputDesc> getExecuteOutputs() const { return descs(mrt_model_runner_execute_outputs); }
  // Every input (output) of the model.
  std::vector<InputDesc> getModelInputs() const { return descs(mrt_model_runner_model_inputs); }
  std::vector<OutputDesc> getModelOutputs() const { return descs(mrt_model_runner_model_outputs); }

  // The phases of a recent request of replica_id (cur < 0: the last one).
  RequestTimes getTimeTrace(unsigned replica_id = 0, int cur = -1) const {
    return times([&](mrt_request_times *t) { return mrt_model_runner_time_trace(get(), replica_id, cur, t); });
  }
  RequestTimes getMonitoringStatisticsPercentile(double quantile = 0.9, unsigned replica_id = 0) const {
    return times([&](mrt_request_times *t) {
      return mrt_model_runner_statistics_percentile(get(), quantile, replica_id, t);
    });
  }
  RequestTimes getMonitoringStatisticsMean(unsigned replica_id = 0) const {
    return times([&](mrt_request_times *t) { return mrt_model_runner_statistics_mean(get(), replica_id, t); });
  }
  RequestTimes getMonitoringStatisticsTotalCount(unsigned replica_id = 0) const {
    return times([&](mrt_request_times *t) { return mrt_model_runner_statistics_count(get(), replica_id, t); });
  }
  // Replicas served, replica ids 0 .. numReplicas() - 1
  // (mrt_model_runner_num_replicas).
  unsigned numReplicas() const {
    uint32_t count = 0;
    check(mrt_model_runner_num_replicas(get(), &count));
    return count;
  }
  // The modelled cycles of replica_id (mrt_model_runner_device_cycles): its
  // own lane of a device shared by in-model replicas.
  DeviceTime deviceTime(unsigned replica_id = 0) const {
    DeviceTime time;
    check(mrt_model_runner_device_cycles(get(), replica_id, &time.cycles, &time.clock_hz));
    return time;
  }

  // Makes replica_id's simulated device fail once at step step_name of its
  // next Main run (tests and diagnostics).
  void insertSimulatedError(SimulatedError error, const std::string &step_name, unsigned replica_id = 0) {
    check(mrt_model_runner_insert_simulated_error(get(), static_cast<int32_t>(error), step_name.c_str(), replica_id));
  }

  ModelRunner(ModelRunner &&) noexcept = default;
  ModelRunner &operator=(ModelRunner &&other) noexcept {
    if (this != &other) {
      close();
      saveOutputs_ = std::move(other.saveOutputs_);
      handle_ = std::move(other.handle_);
    }
    return *this;
  }
  ~ModelRunner() { close(); }

  // Destroys the runner now (see the class comment), then the Save outputs' arrays it wrote through.
  void close() noexcept {
    handle_.reset();
    saveOutputs_.reset();
  }

 private:
  // The C config and what it points to; the Save outputs' arrays are
  // borrowed by the runner until it is destroyed, so the runner keeps them.
  struct Config {
    explicit Config(const ModelRunnerConfig &config) : keep(std::make_unique<Borrowed>()) {
      mrt_model_runner_config_init(&c);
      c.replication_factor = config.replication_factor;
      c.run_save_programs = config.run_save_programs;
      c.thread_safe = config.thread_safe;
      frozen = cViewsCopy(config.frozen_inputs);
      c.frozen_inputs = frozen.data();
      c.num_frozen_inputs = frozen.size();
      for (const auto &r : config.replica_to_save_programs_outputs) keep->views.push_back(cViewsCopy(r.outputs));
      for (std::size_t i = 0; i < keep->views.size(); ++i) {
        const auto &views = keep->views[i];
        keep->replicas.push_back(
            {config.replica_to_save_programs_outputs[i].replica_id, views.data(), views.size()});
      }
      c.save_programs_outputs = keep->replicas.data();
      c.num_save_programs_outputs = keep->replicas.size();
      for (const Device *d : config.replica_to_device) devices.push_back(d ? d->get() : nullptr);
      c.replica_devices = devices.data();
      c.num_replica_devices = devices.size();
      if (config.device_wait_config) {
        wait = config.device_wait_config->toC();
        c.device_wait_config = &wait;
      }
      c.check_package_hash = config.check_package_hash;
      c.timeout_ns = config.timeout_ns.count();
      c.validate_io_params = config.validate_io_params;
      c.batching_dim = config.batching_dim;
      c.auto_reset = config.auto_reset;
      c.max_look_ahead = config.max_look_ahead;
      c.ring_buffer_size_multiplier = config.ring_buffer_size_multiplier;
      c.flush_on_waiting_outputs = config.flush_on_waiting_outputs;
      c.batch_size_timeout_ns = neverIfMax(config.batch_size_timeout_ns);
      c.data_parallel_timeout_ns = neverIfMax(config.data_parallel_timeout_ns);
      c.is_batch_size_timeout_enabled = config.is_batch_size_timeout_enabled;
      c.request_tracepoints_buffer_size = config.request_tracepoints_buffer_size;
      if (config.flush_callback && config.flush_select_callback) {
        throw Error(MRT_INVALID_ARGUMENT,
                    "config.flush_callback and config.flush_select_callback are both set; set at most one");
      }
      if (config.flush_callback) {
        // Last: from here on the library owns the box (it frees it at
        // destroy, or when create fails).
        c.flush_callback = [](const char *tensor_id, void *user_data) {
          try {
            (*static_cast<FlushCallback *>(user_data))(tensor_id);
          } catch (...) {
          }
        };
        c.flush_user_data = new FlushCallback(config.flush_callback);
        c.flush_user_data_free = &detail::deleteBox<FlushCallback>;
      } else if (config.flush_select_callback) {
        c.flush_select_callback = [](const char *tensor_id, mrt_flush_selection *selection, void *user_data) {
          try {
            FlushSelection chosen(selection);
            (*static_cast<FlushSelectCallback *>(user_data))(tensor_id, chosen);
          } catch (...) {
          }
        };
        c.flush_user_data = new FlushSelectCallback(config.flush_select_callback);
        c.flush_user_data_free = &detail::deleteBox<FlushSelectCallback>;
      }
    }
    static int64_t neverIfMax(std::chrono::nanoseconds t) {
      return t == std::chrono::nanoseconds::max() ? -1 : t.count();
    }
    struct Borrowed {
      std::vector<std::vector<mrt_tensor_view>> views;
      std::vector<mrt_replica_outputs> replicas;
    };
    mrt_model_runner_config c;
    std::vector<mrt_tensor_view> frozen;
    std::vector<mrt_device *> devices;
    mrt_device_wait_config wait;
    std::unique_ptr<Borrowed> keep;
  };

  void adoptWith(mrt_model_runner *runner, Config c) {
    handle_.reset(runner);
    if (!c.keep->replicas.empty()) saveOutputs_ = std::move(c.keep);
  }

  // A copy of the views for arrays the runner borrows past the call.
  template <class View>
  static std::vector<mrt_tensor_view> cViewsCopy(const std::vector<View> &views) {
    const mrt_tensor_view *c = detail::cViews(Span<const View>(views));
    return std::vector<mrt_tensor_view>(c, c + views.size());
  }

  template <class Fn>
  std::vector<DataDesc> descs(Fn fn) const {
    const mrt_data_desc *d = nullptr;
    std::size_t n = 0;
    check(fn(get(), &d, &n));
    std::vector<DataDesc> result;
    for (std::size_t i = 0; i < n; ++i) {
      DataDesc desc;
      desc.name = detail::str(d[i].name);
      desc.size_in_bytes = d[i].size_in_bytes;
      if (d[i].shape) desc.shape.assign(d[i].shape, d[i].shape + d[i].rank);
      desc.data_type = static_cast<DataType>(d[i].data_type);
      desc.popef_contains_tensor_data = d[i].popef_contains_tensor_data;
      result.push_back(std::move(desc));
    }
    return result;
  }

  template <class Fn>
  static RequestTimes times(Fn fn) {
    mrt_request_times t{};
    t.struct_size = sizeof t;
    check(fn(&t));
    return {t.request_us, t.read_preparation_us, t.read_queue_us, t.computation_us};
  }

  // A std::future fed by the request's on_ready callback. The callback's box
  // owns the mrt::Future (to read the failure message) and the outputs, and
  // is freed by the library once the callback has run.
  template <class Value>
  struct Pending {
    std::promise<Value> promise;
    Future future;
    TensorMemory outputs;

    static void ready(mrt_status status, void *user_data) noexcept {
      auto *p = static_cast<Pending *>(user_data);
      try {
        if (status != MRT_OK) {
          p->promise.set_exception(std::make_exception_ptr(Error(status, p->future.errorMessage())));
        } else if constexpr (std::is_void_v<Value>) {
          p->promise.set_value();
        } else {
          p->promise.set_value(std::move(p->outputs));
        }
      } catch (...) {
        // set_* only throws if the promise is already satisfied or out of
        // memory; the waiter then sees a broken promise.
      }
    }
  };
  template <class Value>
  static std::future<Value> startPending(Future future, TensorMemory outputs) {
    using Box = Pending<Value>;
    auto *box = new Box{std::promise<Value>(), std::move(future), std::move(outputs)};
    std::future<Value> result = box->promise.get_future();
    mrt_future *raw = box->future.get();
    check(mrt_future_on_ready(raw, &Box::ready, box, &detail::deleteBox<Box>));
    return result;
  }
  static std::future<void> toStdFuture(Future future) { return startPending<void>(std::move(future), {}); }
  static std::future<TensorMemory> toStdFuture(Future future, TensorMemory outputs) {
    return startPending<TensorMemory>(std::move(future), std::move(outputs));
  }

  std::unique_ptr<Config::Borrowed> saveOutputs_;  // close() (the destructor too) destroys the runner first
};

}  // namespace mrt

// The model-building half: graphs, programs, ops, executables, engines, writing models.
#include "mrt_graph.hpp"
