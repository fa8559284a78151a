// hwsim::Executable: a compiled graph and its programs, ready to load on a
// device. Immutable and cheap to copy (shared). Serializes to a FlatBuffers
// buffer (schema: hwsim/schema/executable.fbs) that deserialize() verifies
// structurally and semantically before use: corrupt bytes give a
// CorruptExecutable error naming the offset or the inconsistency, never a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "hwsim/options.hpp"
#include "hwsim/target.hpp"
#include "hwsim/types.hpp"

namespace hwsim {

namespace detail {
struct ExecutableData;
}

enum class StreamDirection : std::uint8_t { HostToDevice = 0, DeviceToHost = 1 };

// A host FIFO (data stream). Each Copy of it moves numElements elements.
struct StreamInfo {
  std::string handle;
  StreamDirection direction = StreamDirection::HostToDevice;
  Type type = Type::F32;
  std::uint64_t numElements = 0;
  std::uint64_t numBytes() const { return numElements * sizeOf(type); }
};

// A handle for Engine::readTensor (hostReads) or Engine::writeTensor (hostWrites).
struct HostCopyInfo {
  std::string handle;
  Type type = Type::F32;
  std::vector<std::size_t> shape;
  std::uint64_t numBytes = 0;
};

struct RemoteBufferInfo {
  std::string handle;
  Type type = Type::F32;
  std::uint64_t numElements = 0;  // per slot
  std::uint64_t repeats = 1;      // number of slots
  std::uint64_t slotBytes() const { return numElements * sizeOf(type); }
};

// One node of the compiled program DAG. Its index is the "programId" of
// Engine::getSimulatedErrorLocations.
// What one program moves between host and device, anywhere in its step DAG
// (branches and loop bodies included): indices into streams() and
// remoteBuffers(). Sorted, without duplicates.
struct ProgramTransfers {
  std::vector<unsigned> streams;
  std::vector<unsigned> remoteBuffers;
  // Whether a run of the program copies each of its streams at most once:
  // no stream is copied by two steps, or by a step inside a loop or a branch
  // or reached twice (a shared step or function). A thread that feeds the
  // streams may then run the program whenever each holds one transfer.
  bool eachStreamAtMostOnce = true;
};

struct ProgramStepInfo {
  unsigned id = 0;
  std::string kind;  // "Execute", "Copy", "StreamToTensor", ...
  std::string name;  // debug name, or the compute set / stream name
  // Modelled cycles of one execution of this step itself (its children
  // excluded): compute, exchange and sync, host transfers at the target's
  // host link rate. Static: fixed by the compiler's cost model.
  std::uint64_t cycles = 0;
};

class Executable {
 public:
  Executable();  // empty: valid() is false
  bool valid() const { return data_ != nullptr; }

  std::vector<std::uint8_t> serialize() const;
  void serialize(std::ostream &out) const;
  // Throws CorruptExecutable if the bytes fail the FlatBuffers verifier or
  // describe an inconsistent executable. The bytes are copied. The process
  // keeps the last few executables loaded with their bytes: loading equal
  // bytes again returns an Executable sharing the kept one's data, after a
  // comparison of every byte (hwsim/src/kept_executables.hpp).
  static Executable deserialize(std::span<const std::uint8_t> bytes);
  static Executable deserialize(const void *data, std::size_t size);
  // For a loader that verified the bytes inside a container of its own (a
  // PopEF blob, whose checksum covers them): `seal`, opaque here, is kept
  // with the bytes, so that findKept() can later tell it that equal bytes
  // were verified under an equal seal. Give a seal only for bytes verified.
  static Executable deserialize(const void *data, std::size_t size, std::span<const std::uint8_t> seal);
  // The executable kept from bytes equal to these under a seal equal to
  // `seal` (a comparison of every byte); an empty Executable if none is, and
  // for an empty seal.
  static Executable findKept(const void *data, std::size_t size, std::span<const std::uint8_t> seal);

  // xxHash64 of the canonical serialization: equal executables hash equal,
  // across processes and after a serialize/deserialize round trip.
  std::uint64_t hash() const;

  const Target &target() const;  // the per-replica target
  unsigned replicationFactor() const;
  unsigned numIpus() const;       // target().numIpus * replicationFactor()
  unsigned numPrograms() const;
  std::string programName(unsigned program) const;
  const std::vector<StreamInfo> &streams() const;
  const std::vector<HostCopyInfo> &hostWrites() const;
  const std::vector<HostCopyInfo> &hostReads() const;
  const std::vector<RemoteBufferInfo> &remoteBuffers() const;
  const OptionFlags &options() const;  // the options it was compiled with
  // Bytes used on each tile of one replica (variables, vertex state, code).
  const std::vector<std::uint64_t> &memoryPerTile() const;
  std::vector<ProgramStepInfo> programSteps() const;
  // Throws InvalidArgument for a program index >= numPrograms(). Made at
  // the first call and kept with the executable (shared by its copies).
  const ProgramTransfers &transfers(unsigned program) const;

  const detail::ExecutableData &data() const { return *data_; }
  explicit Executable(std::shared_ptr<const detail::ExecutableData> data);

 private:
  std::shared_ptr<const detail::ExecutableData> data_;
};

}  // namespace hwsim
