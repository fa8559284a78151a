// Device pool with cross-process exclusive attach. Each physical IPU has a
// lock file; attaching takes an open-file-description write lock
// (F_OFD_SETLK) on each of the device's IPUs, without waiting. OFD locks are
// released by the kernel when the descriptor is closed, including when the
// process dies, and unlike flock() they can be queried (F_OFD_GETLK) without
// being taken, which is how getFreeDeviceIds() works.
#include "hwsim/device.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "device_state.hpp"
#include "fail.hpp"

namespace hwsim {

using detail::fail;

namespace detail {
DeviceState::~DeviceState() {
  for (int fd : lockFds) ::close(fd);
}
}  // namespace detail

namespace {

std::string lockPath(const std::string &dir, unsigned ipu) { return fmt::format("{}/ipu{}.lock", dir, ipu); }

// The directory is made only when it is missing: a stat of it before every
// open was one more system call per attach (runner creation, issue 14).
int openLockFile(const std::string &dir, unsigned ipu) {
  const std::string path = lockPath(dir, ipu);
  const auto open = [&] { return ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600); };
  int fd = open();
  if (fd < 0 && errno == ENOENT) {
    std::filesystem::create_directories(dir);
    fd = open();
  }
  if (fd < 0) fail(ErrorKind::Unavailable, "cannot open lock file {}: {}", path, std::strerror(errno));
  return fd;
}

struct flock wholeFileWriteLock() {
  struct flock fl;
  std::memset(&fl, 0, sizeof(fl));
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  fl.l_start = 0;
  fl.l_len = 0;
  return fl;
}

std::string defaultLockDir() {
  if (const char *dir = std::getenv("MRT_HWSIM_LOCK_DIR"); dir && *dir) return dir;
  if (const char *run = std::getenv("XDG_RUNTIME_DIR"); run && *run) return std::string(run) + "/mrt-hwsim";
  return fmt::format("/tmp/mrt-hwsim-{}", ::getuid());
}

}  // namespace

// ------------------------------------------------------------------ Device

Device::Device() = default;
Device::~Device() = default;
Device::Device(Device &&) noexcept = default;
Device &Device::operator=(Device &&) noexcept = default;
Device::Device(std::shared_ptr<detail::DeviceState> state) : state_(std::move(state)) {}

namespace {
const detail::DeviceState &need(const std::shared_ptr<detail::DeviceState> &s) {
  if (!s) fail(ErrorKind::FailedPrecondition, "empty Device handle");
  return *s;
}
}  // namespace

unsigned Device::id() const { return need(state_).info.id; }
const Target &Device::getTarget() const { return need(state_).info.target; }
unsigned Device::numIpus() const { return need(state_).info.numIpus; }
const std::vector<unsigned> &Device::ipus() const { return need(state_).info.ipus; }
bool Device::isIpuModel() const { return need(state_).isModel; }

bool Device::attach() {
  need(state_);
  auto &s = *state_;
  std::lock_guard lock(s.mutex);
  if (s.attached) return true;
  if (s.isModel) {
    s.attached = true;
    return true;
  }
  std::vector<int> fds;
  for (unsigned ipu : s.info.ipus) {
    const int fd = openLockFile(s.lockDir, ipu);
    struct flock fl = wholeFileWriteLock();
    if (::fcntl(fd, F_OFD_SETLK, &fl) != 0) {
      const int err = errno;
      ::close(fd);
      for (int f : fds) ::close(f);
      if (err == EAGAIN || err == EACCES) return false;
      fail(ErrorKind::Unavailable, "cannot lock IPU {}: {}", ipu, std::strerror(err));
    }
    fds.push_back(fd);
  }
  s.lockFds = std::move(fds);
  s.attached = true;
  return true;
}

void Device::detach() {
  if (!state_) return;
  std::lock_guard lock(state_->mutex);
  for (int fd : state_->lockFds) ::close(fd);
  state_->lockFds.clear();
  state_->attached = false;
}

bool Device::isAttached() const {
  if (!state_) return false;
  std::lock_guard lock(state_->mutex);
  return state_->attached;
}

RecoveryAction Device::pendingRecovery() const {
  return static_cast<RecoveryAction>(need(state_).pendingRecovery.load());
}

void Device::reset() {
  if (!isAttached()) fail(ErrorKind::FailedPrecondition, "reset: device {} is not attached", id());
  state_->pendingRecovery.store(static_cast<std::uint8_t>(RecoveryAction::None));
}

// ------------------------------------------------------------ SystemConfig

SystemConfig SystemConfig::parse(const std::string &text) {
  SystemConfig c;
  const auto x = text.find('x');
  const std::string count = text.substr(0, x);
  const std::string version = x == std::string::npos ? "2" : text.substr(x + 1);
  auto number = [&](const std::string &s) -> unsigned {
    if (s.empty() || s.size() > 4 || s.find_first_not_of("0123456789") != std::string::npos) {
      fail(ErrorKind::InvalidArgument, "MRT_HWSIM_IPUS '{}': expected N or NxV (e.g. 8 or 2x21)", text);
    }
    return static_cast<unsigned>(std::stoul(s));
  };
  c.numIpus = number(count);
  const unsigned v = number(version);
  if (c.numIpus == 0 || c.numIpus > 256) fail(ErrorKind::InvalidArgument, "MRT_HWSIM_IPUS '{}': 1 to 256 IPUs", text);
  if (v != 2 && v != 21) fail(ErrorKind::InvalidArgument, "MRT_HWSIM_IPUS '{}': IPU version must be 2 or 21", text);
  c.ipuVersion = static_cast<IpuVersion>(v);
  return c;
}

SystemConfig SystemConfig::fromEnvironment() {
  SystemConfig c;
  if (const char *ipus = std::getenv("MRT_HWSIM_IPUS"); ipus && *ipus) c = parse(ipus);
  if (const char *dir = std::getenv("MRT_HWSIM_LOCK_DIR"); dir && *dir) c.lockDirectory = dir;
  return c;
}

std::string SystemConfig::resolvedLockDirectory() const {
  return lockDirectory.empty() ? defaultLockDir() : lockDirectory;
}

// ----------------------------------------------------------- DeviceManager

DeviceManager DeviceManager::createDeviceManager() { return DeviceManager(SystemConfig::fromEnvironment()); }

DeviceManager::DeviceManager(SystemConfig config) : config_(std::move(config)) {
  if (config_.numIpus == 0) fail(ErrorKind::InvalidArgument, "a system needs at least one IPU");
  lockDir_ = config_.resolvedLockDirectory();
  unsigned id = 0;
  for (unsigned size = 1; size <= config_.numIpus; size *= 2) {
    for (unsigned first = 0; first + size <= config_.numIpus; first += size) {
      DeviceInfo info;
      info.id = id++;
      info.numIpus = size;
      for (unsigned i = 0; i < size; ++i) info.ipus.push_back(first + i);
      info.target = Target::forVersion(config_.ipuVersion, size);
      infos_.push_back(std::move(info));
    }
  }
}

std::vector<DeviceInfo> DeviceManager::getDeviceInfos() const { return infos_; }

Device DeviceManager::getDevice(unsigned id) const {
  if (id >= infos_.size()) fail(ErrorKind::NotFound, "no device {} (the system has {} device ids)", id, infos_.size());
  auto s = std::make_shared<detail::DeviceState>();
  s->info = infos_[id];
  s->lockDir = lockDir_;
  return Device(std::move(s));
}

std::vector<Device> DeviceManager::getDevices(unsigned numIpus) const {
  std::vector<Device> out;
  for (const auto &info : infos_) {
    if (info.numIpus == numIpus) out.push_back(getDevice(info.id));
  }
  return out;
}

bool DeviceManager::isFree(unsigned id) const {
  if (id >= infos_.size()) fail(ErrorKind::NotFound, "no device {} (the system has {} device ids)", id, infos_.size());
  for (unsigned ipu : infos_[id].ipus) {
    const int fd = openLockFile(lockDir_, ipu);
    struct flock fl = wholeFileWriteLock();
    const int rc = ::fcntl(fd, F_OFD_GETLK, &fl);
    ::close(fd);
    if (rc != 0 || fl.l_type != F_UNLCK) return false;
  }
  return true;
}

std::vector<unsigned> DeviceManager::getFreeDeviceIds() const {
  std::vector<unsigned> out;
  for (const auto &info : infos_) {
    if (isFree(info.id)) out.push_back(info.id);
  }
  return out;
}

Device DeviceManager::createIpuModelDevice(const Target &target) {
  auto s = std::make_shared<detail::DeviceState>();
  s->isModel = true;
  s->info.id = 0;
  s->info.numIpus = target.numIpus;
  for (unsigned i = 0; i < target.numIpus; ++i) s->info.ipus.push_back(i);
  s->info.target = target;
  return Device(std::move(s));
}

Device DeviceManager::createSmallIpuModelDevice(unsigned numIpus) {
  return createIpuModelDevice(Target::smallIpuModel(numIpus));
}

}  // namespace hwsim
