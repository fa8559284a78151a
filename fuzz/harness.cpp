#include "harness.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

namespace mrt_fuzz {

namespace {

std::string g_lockDir;  // the private simulated system's lock files, removed at exit

void removeLockDir() {
  std::error_code ignored;
  std::filesystem::remove_all(g_lockDir, ignored);
}

[[noreturn]] void die(const char *what) {
  std::fprintf(stderr, "mrt-fuzz: %s: %s\n", what, std::strerror(errno));
  std::abort();
}

// $TMPDIR/mrt-fuzz-<uid>/<pid>, made empty. A process that crashed (or a
// libFuzzer -fork child) leaves its directory behind, so the ones of
// processes that are gone are removed first.
std::string makeLockDir() {
  namespace fs = std::filesystem;
  const char *tmp = std::getenv("TMPDIR");
  const fs::path base = fs::path(tmp && *tmp ? tmp : "/tmp") / ("mrt-fuzz-" + std::to_string(::getuid()));
  std::error_code ignored;
  fs::create_directories(base, ignored);
  std::error_code listing;
  for (fs::directory_iterator it(base, listing), end; !listing && it != end; it.increment(listing)) {
    const std::string pid = it->path().filename().string();
    if (!fs::exists(fs::path("/proc") / pid, ignored)) fs::remove_all(it->path(), ignored);
  }
  const fs::path dir = base / std::to_string(::getpid());
  fs::remove_all(dir, ignored);
  if (!fs::create_directories(dir, ignored)) die("cannot make the lock directory");
  return dir.string();
}

}  // namespace

mrt_model *loadModel(const std::uint8_t *data, std::size_t size) {
  // A fresh memfd per input: a mapping the library may still hold of the
  // previous input's file is never truncated under it.
  const int fd = memfd_create("mrt-fuzz.popef", MFD_CLOEXEC);
  if (fd < 0) die("memfd_create");
  for (std::size_t done = 0; done < size;) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) die("write to memfd");
    done += static_cast<std::size_t>(n);
  }
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
  const char *paths[] = {path};
  mrt_model *model = nullptr;
  const mrt_status status = mrt_model_load(paths, 1, &model);
  ::close(fd);  // the library has its own mapping of the file
  checkStatus(status, "mrt_model_load");
  return status == MRT_OK ? model : nullptr;
}

void checkStatus(mrt_status status, const char *call) {
  static const bool verbose = std::getenv("MRT_FUZZ_VERBOSE") != nullptr;
  if (verbose) {
    std::fprintf(stderr, "mrt-fuzz: %s: %s%s%s\n", call, mrt_status_string(status), status ? " - " : "",
                 status ? mrt_last_error_message() : "");
  }
  if (status == MRT_OK) return;
  const char *message = mrt_last_error_message();
  if (status == MRT_INTERNAL) {
    std::fprintf(stderr, "mrt-fuzz: %s returned MRT_INTERNAL (a libmrt bug): %s\n", call,
                 message ? message : "(no message)");
    std::abort();
  }
  if (message == nullptr || *message == '\0') {
    std::fprintf(stderr, "mrt-fuzz: %s failed with %s and no message\n", call, mrt_status_string(status));
    std::abort();
  }
}

}  // namespace mrt_fuzz

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  // Quiet (refusals are the common case and each would log a warning), and
  // a simulated IPU system of the process's own, so that fuzzing never
  // waits for, nor blocks, devices that tests or other fuzzers attach.
  // Anything set in the environment wins.
  setenv("MRT_LOG_LEVEL", "OFF", 0);
  setenv("MRT_HWSIM_IPUS", "4", 0);
  // Host allocations a model asks for are capped below libFuzzer's
  // -rss_limit_mb (2048 in CI), so a lying model is a refusal, not an OOM.
  setenv("MRT_HOST_MEMORY_LIMIT", "1G", 0);
  if (std::getenv("MRT_HWSIM_LOCK_DIR") == nullptr) {
    mrt_fuzz::g_lockDir = mrt_fuzz::makeLockDir();
    setenv("MRT_HWSIM_LOCK_DIR", mrt_fuzz::g_lockDir.c_str(), 1);
    std::atexit(mrt_fuzz::removeLockDir);
  }
  return 0;
}
