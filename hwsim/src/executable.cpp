#include "hwsim/executable.hpp"

#include <algorithm>

#include <xxhash.h>

#include "exe_data.hpp"
#include "fail.hpp"
#include "kept_executables.hpp"
#include "serialize.hpp"

namespace hwsim {

namespace detail {
void ExecutableData::finalize() {
  hostWriteInfos.clear();
  hostReadInfos.clear();
  for (const auto &h : hostCopies) {
    const auto &v = views[h.view];
    HostCopyInfo info{h.handle, v.type, *v.shape, v.numElements * sizeOf(v.type)};
    (h.isRead ? hostReadInfos : hostWriteInfos).push_back(std::move(info));
  }
}
}  // namespace detail

Executable::Executable() = default;
Executable::Executable(std::shared_ptr<const detail::ExecutableData> data) : data_(std::move(data)) {}

namespace {
const detail::ExecutableData &need(const std::shared_ptr<const detail::ExecutableData> &d) {
  if (!d) detail::fail(ErrorKind::FailedPrecondition, "empty Executable");
  return *d;
}
}  // namespace

std::vector<std::uint8_t> Executable::serialize() const { return detail::serializeExecutable(need(data_)); }

void Executable::serialize(std::ostream &out) const {
  const auto bytes = serialize();
  out.write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

Executable Executable::deserialize(std::span<const std::uint8_t> bytes) {
  return Executable(detail::deserializeKept(bytes.data(), bytes.size()));
}

Executable Executable::deserialize(const void *data, std::size_t size) {
  return Executable(detail::deserializeKept(static_cast<const std::uint8_t *>(data), size));
}

Executable Executable::deserialize(const void *data, std::size_t size, std::span<const std::uint8_t> seal) {
  return Executable(detail::deserializeKept(static_cast<const std::uint8_t *>(data), size, seal));
}

Executable Executable::findKept(const void *data, std::size_t size, std::span<const std::uint8_t> seal) {
  return Executable(detail::findKept(static_cast<const std::uint8_t *>(data), size, seal));
}

std::uint64_t Executable::hash() const {
  const auto &d = need(data_);
  std::call_once(d.hashOnce, [&] {
    const auto bytes = detail::serializeExecutable(d);
    d.hashValue = XXH64(bytes.data(), bytes.size(), 0);
  });
  return d.hashValue;
}

const Target &Executable::target() const { return need(data_).target; }
unsigned Executable::replicationFactor() const { return need(data_).replicationFactor; }
unsigned Executable::numIpus() const { return need(data_).target.numIpus * need(data_).replicationFactor; }
unsigned Executable::numPrograms() const { return static_cast<unsigned>(need(data_).programs.size()); }
std::string Executable::programName(unsigned program) const {
  const auto &d = need(data_);
  if (program >= d.programs.size()) detail::fail(ErrorKind::InvalidArgument, "program {} of {}", program, d.programs.size());
  return d.nodes[d.programs[program]].name;
}
const std::vector<StreamInfo> &Executable::streams() const { return need(data_).streams; }
const std::vector<HostCopyInfo> &Executable::hostWrites() const { return need(data_).hostWriteInfos; }
const std::vector<HostCopyInfo> &Executable::hostReads() const { return need(data_).hostReadInfos; }
const std::vector<RemoteBufferInfo> &Executable::remoteBuffers() const { return need(data_).remoteBuffers; }
const OptionFlags &Executable::options() const { return need(data_).options; }
const std::vector<std::uint64_t> &Executable::memoryPerTile() const { return need(data_).tileBytes; }

std::vector<ProgramStepInfo> Executable::programSteps() const {
  const auto &d = need(data_);
  std::vector<ProgramStepInfo> out;
  out.reserve(d.nodes.size());
  for (std::size_t i = 0; i < d.nodes.size(); ++i) {
    out.push_back({static_cast<unsigned>(i), detail::toString(d.nodes[i].kind), d.nodes[i].name,
                   d.nodes[i].cycles});
  }
  return out;
}

namespace {

bool isLoopOrBranch(detail::NodeKind kind) {
  switch (kind) {
    case detail::NodeKind::Repeat:
    case detail::NodeKind::RepeatWhileTrue:
    case detail::NodeKind::RepeatWhileFalse:
    case detail::NodeKind::If:
    case detail::NodeKind::Switch: return true;
    default: return false;
  }
}

ProgramTransfers transfersOf(const detail::ExecutableData &d, unsigned program) {
  // Children precede their parents (validateExecutable), so one backward
  // sweep from the root marks every reachable step, shared ones once.
  // A step may run more than once per run (or not at all) when reached twice
  // or from inside a loop or a branch.
  std::vector<char> reached(d.nodes.size(), 0), notOnce(d.nodes.size(), 0);
  reached[d.programs[program]] = 1;
  ProgramTransfers out;
  for (std::size_t i = d.programs[program] + 1; i-- > 0;) {
    if (!reached[i]) continue;
    const detail::ExeNode &node = d.nodes[i];
    const bool childrenNotOnce = notOnce[i] || isLoopOrBranch(node.kind);
    for (const std::uint32_t child : node.children) {
      if (reached[child] || childrenNotOnce) notOnce[child] = 1;
      reached[child] = 1;
    }
    switch (node.kind) {
      case detail::NodeKind::StreamToTensor:
      case detail::NodeKind::TensorToStream:
        if (notOnce[i] || std::find(out.streams.begin(), out.streams.end(), node.index) != out.streams.end()) {
          out.eachStreamAtMostOnce = false;
        }
        out.streams.push_back(node.index);
        break;
      case detail::NodeKind::RemoteToTensor:
      case detail::NodeKind::TensorToRemote: out.remoteBuffers.push_back(node.index); break;
      default: break;
    }
  }
  for (auto *list : {&out.streams, &out.remoteBuffers}) {
    std::sort(list->begin(), list->end());
    list->erase(std::unique(list->begin(), list->end()), list->end());
  }
  return out;
}

}  // namespace

const ProgramTransfers &Executable::transfers(unsigned program) const {
  const auto &d = need(data_);
  if (program >= d.programs.size()) detail::fail(ErrorKind::InvalidArgument, "program {} of {}", program, d.programs.size());
  return detail::madeOnce(d, d.transfersMade, program, [&] { return transfersOf(d, program); });
}

}  // namespace hwsim
