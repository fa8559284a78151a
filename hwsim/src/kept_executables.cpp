#include "kept_executables.hpp"

#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

#include "mib_limit.hpp"
#include "serialize.hpp"

namespace hwsim::detail {

namespace {

class KeptExecutables {
 public:
  static KeptExecutables &instance() {
    static auto *kept = new KeptExecutables;  // never destroyed: loads may run during static destruction
    return *kept;
  }

  std::shared_ptr<const ExecutableData> find(const std::uint8_t *bytes, std::size_t size) {
    std::lock_guard lock(mutex_);
    for (std::size_t i = entries_.size(); i-- > 0;) {
      if (entries_[i].bytes.size() != size || std::memcmp(entries_[i].bytes.data(), bytes, size) != 0) continue;
      Entry hit = std::move(entries_[i]);
      entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(i));
      std::shared_ptr<const ExecutableData> data = hit.data;
      entries_.push_back(std::move(hit));  // now the most recent
      return data;
    }
    return nullptr;
  }

  void keep(const std::uint8_t *bytes, std::size_t size, std::shared_ptr<const ExecutableData> data) {
    if (size > limit_) return;
    Entry entry{std::vector<std::uint8_t>(bytes, bytes + size), std::move(data)};
    std::lock_guard lock(mutex_);
    for (const Entry &e : entries_) {
      if (e.bytes == entry.bytes) return;  // another thread loaded it meanwhile
    }
    bytes_ += size;
    entries_.push_back(std::move(entry));
    while (entries_.size() > kKeptExecutables || bytes_ > limit_) {
      bytes_ -= entries_.front().bytes.size();
      entries_.erase(entries_.begin());
    }
  }

 private:
  KeptExecutables() : limit_(mibLimitFromEnvironment("MRT_HWSIM_KEPT_EXECUTABLES_MIB", 1024, kKeptExecutableBytes)) {}

  const std::size_t limit_;  // of the entries' bytes
  struct Entry {
    std::vector<std::uint8_t> bytes;  // the verified copy a hit is compared with
    std::shared_ptr<const ExecutableData> data;
  };
  std::mutex mutex_;
  std::vector<Entry> entries_;  // least recently loaded first
  std::size_t bytes_ = 0;       // of the entries' bytes
};

}  // namespace

std::shared_ptr<const ExecutableData> deserializeKept(const std::uint8_t *bytes, std::size_t size) {
  if (bytes == nullptr) return deserializeExecutable(bytes, size);  // fails, naming the truncation
  KeptExecutables &kept = KeptExecutables::instance();
  if (auto data = kept.find(bytes, size)) return data;
  std::shared_ptr<const ExecutableData> data = deserializeExecutable(bytes, size);
  kept.keep(bytes, size, data);
  return data;
}

}  // namespace hwsim::detail
