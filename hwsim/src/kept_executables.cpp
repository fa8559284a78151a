#include "kept_executables.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

#include <support/process_singleton.hpp>

#include "mib_limit.hpp"
#include "serialize.hpp"

namespace hwsim::detail {

namespace {

class KeptExecutables {
 public:
  static KeptExecutables &instance() { return support::processSingleton<KeptExecutables>(); }
  std::mutex &mutex() { return mutex_; }

  // With `sealed`, only an entry kept under an equal seal matches; else any
  // entry of equal bytes does, and adopts `seal` if one is given.
  std::shared_ptr<const ExecutableData> find(const std::uint8_t *bytes, std::size_t size,
                                             std::span<const std::uint8_t> seal, bool sealed) {
    std::lock_guard lock(mutex_);
    for (std::size_t i = entries_.size(); i-- > 0;) {
      Entry &entry = entries_[i];
      if (entry.bytes.size() != size) continue;
      if (sealed && !std::equal(seal.begin(), seal.end(), entry.seal.begin(), entry.seal.end())) continue;
      if (std::memcmp(entry.bytes.data(), bytes, size) != 0) continue;
      if (!sealed && !seal.empty()) entry.seal.assign(seal.begin(), seal.end());
      Entry hit = std::move(entry);
      entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(i));
      std::shared_ptr<const ExecutableData> data = hit.data;
      entries_.push_back(std::move(hit));  // now the most recent
      return data;
    }
    return nullptr;
  }

  std::size_t limit() const { return limit_; }

  // `bytes`: the very bytes `data` was verified from.
  void keep(std::vector<std::uint8_t> bytes, std::shared_ptr<const ExecutableData> data,
            std::span<const std::uint8_t> seal) {
    const std::size_t size = bytes.size();
    if (size > limit_) return;
    Entry entry{std::move(bytes), std::move(data), {seal.begin(), seal.end()}};
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

  KeptExecutables() : limit_(mibLimitFromEnvironment("MRT_HWSIM_KEPT_EXECUTABLES_MIB", 1024, kKeptExecutableBytes)) {}

 private:
  const std::size_t limit_;  // of the entries' bytes
  struct Entry {
    std::vector<std::uint8_t> bytes;  // the verified copy a hit is compared with
    std::shared_ptr<const ExecutableData> data;
    std::vector<std::uint8_t> seal;  // the loader's, if one gave it
  };
  std::mutex mutex_;
  std::vector<Entry> entries_;  // least recently loaded first
  std::size_t bytes_ = 0;       // of the entries' bytes
};

}  // namespace

std::shared_ptr<const ExecutableData> deserializeKept(const std::uint8_t *bytes, std::size_t size,
                                                      std::span<const std::uint8_t> seal) {
  if (bytes == nullptr) return deserializeExecutable(bytes, size);  // fails, naming the truncation
  KeptExecutables &kept = KeptExecutables::instance();
  // A hit returns what was verified from bytes equal to these, whatever
  // they change to meanwhile (a file mapped while it is rewritten).
  if (auto data = kept.find(bytes, size, seal, false)) return data;
  if (size > kept.limit()) return deserializeExecutable(bytes, size);
  // Copied first, so that what is kept is exactly what was verified (the
  // vector's storage, from operator new, is aligned as the verifier needs).
  std::vector<std::uint8_t> copy(bytes, bytes + size);
  std::shared_ptr<const ExecutableData> data = deserializeOwnCopy(copy.data(), size);
  kept.keep(std::move(copy), data, seal);
  return data;
}

std::shared_ptr<const ExecutableData> findKept(const std::uint8_t *bytes, std::size_t size,
                                               std::span<const std::uint8_t> seal) {
  if (bytes == nullptr || seal.empty()) return nullptr;  // an empty seal seals nothing
  return KeptExecutables::instance().find(bytes, size, seal, true);
}

}  // namespace hwsim::detail
