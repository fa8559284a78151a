#include "popef/executable_check.hpp"

#include <algorithm>
#include <map>
#include <string>

#include <hwsim/error.hpp>

#include "common/error.hpp"
#include "popef/graph_model_builder.hpp"

namespace mrt::popef {

namespace {

std::string describeStream(const hwsim::StreamInfo &stream) {
  return fmt::format("{} x {} elements ({} bytes)", hwsim::toString(stream.type), stream.numElements,
                     stream.numBytes());
}

std::string describeAnchor(const Anchor &anchor) {
  return fmt::format("{} ({} elements, {} bytes)", anchor.tensorInfo().toString(),
                     anchor.tensorInfo().numElements(), anchor.tensorInfo().sizeInBytes());
}

// The checks of one model against one executable; every message starts with
// the model and says in which blob each of the two values was found.
class ExecutableCheck {
 public:
  ExecutableCheck(const Model &model, const hwsim::Executable &exe)
      : model_(model),
        exe_(exe),
        metadataWhere_(model.metadataOrigin(), BlobType::Metadata),
        executableWhere_(model.executable().origin(), BlobType::Executable) {}

  void run() {
    shape();
    programs();
    for (const auto &[index, name] : model_.metadata.programFlow().programsMap()) {
      streamsMovedBy_.emplace(index, exe_.transfers(static_cast<unsigned>(index)).streams);
    }
    for (const Anchor &anchor : model_.metadata.anchors()) {
      if (anchor.useRemoteBuffers()) {
        remoteBufferAnchor(anchor);
      } else {
        streamAnchor(anchor);
      }
    }
    streamsWithoutAnchor();
  }

 private:
  template <typename... Args>
  [[noreturn]] void corrupt(fmt::format_string<Args...> format, Args &&...args) const {
    throw Error(ErrorCode::CorruptModel, "model '{}': {} (metadata: {}; executable: {})",
                model_.metadata.executable(), fmt::format(format, std::forward<Args>(args)...),
                metadataWhere_, executableWhere_);
  }

  void shape() const {
    const Metadata &metadata = model_.metadata;
    if (metadata.replicationFactor() != exe_.replicationFactor()) {
      corrupt("the metadata gives replication factor {}, the executable {}", metadata.replicationFactor(),
              exe_.replicationFactor());
    }
    if (metadata.numIpus() != exe_.numIpus()) {
      corrupt("the metadata gives {} IPUs, the executable needs {}", metadata.numIpus(), exe_.numIpus());
    }
    const auto version = static_cast<std::uint32_t>(exe_.target().ipuVersion);
    if (metadata.ipuVersion() != version) {
      corrupt("the metadata gives IPU version {}, the executable was compiled for {}", metadata.ipuVersion(),
              version);
    }
  }

  // Metadata::validate made sure every index the flow or an anchor uses is
  // in the programs map, so checking the map covers them all.
  void programs() const {
    for (const auto &[index, name] : model_.metadata.programFlow().programsMap()) {
      if (index >= exe_.numPrograms()) {
        corrupt("program {} ('{}') of the programs map is not in the executable, which has {} programs", index,
                name, exe_.numPrograms());
      }
    }
  }

  void streamAnchor(const Anchor &anchor) const {
    const auto &streams = exe_.streams();
    const auto found = std::find_if(streams.begin(), streams.end(),
                                    [&](const hwsim::StreamInfo &s) { return s.handle == anchor.handle(); });
    if (found == streams.end()) {
      corrupt("anchor '{}' names stream '{}', which the executable does not have", anchor.name(),
              anchor.handle());
    }
    const hwsim::StreamInfo &stream = *found;
    const bool toDevice = stream.direction == hwsim::StreamDirection::HostToDevice;
    const TensorType expected = toDevice ? TensorType::INPUT : TensorType::OUTPUT;
    if (anchor.type() != expected) {
      corrupt("anchor '{}' is {} in the metadata but its stream '{}' goes {} in the executable", anchor.name(),
              toString(anchor.type()), stream.handle, toDevice ? "host to device" : "device to host");
    }
    sameData(anchor, stream.type, stream.numElements, [&] {
      return fmt::format("stream '{}' is {}", stream.handle, describeStream(stream));
    });
    const auto index = static_cast<unsigned>(found - streams.begin());
    for (const auto program : anchor.programs()) {
      const auto &moved = streamsMovedBy_.at(program);
      if (!std::binary_search(moved.begin(), moved.end(), index)) {
        corrupt("anchor '{}' says program {} ('{}') moves stream '{}', but that program never moves it",
                anchor.name(), program, programName(program), stream.handle);
      }
    }
  }

  void remoteBufferAnchor(const Anchor &anchor) const {
    const RemoteBufferInfo &info = *anchor.remoteBuffer();
    const auto &buffers = exe_.remoteBuffers();
    const auto found = std::find_if(buffers.begin(), buffers.end(),
                                    [&](const hwsim::RemoteBufferInfo &b) { return b.handle == info.name; });
    if (found == buffers.end()) {
      corrupt("anchor '{}' lives in remote buffer '{}', which the executable does not have", anchor.name(),
              info.name);
    }
    if (anchor.type() != TensorType::INPUT) {
      corrupt("anchor '{}' lives in remote buffer '{}' but is {}; the host fills remote buffers, so it must "
              "be INPUT",
              anchor.name(), info.name, toString(anchor.type()));
    }
    if (static_cast<std::uint64_t>(info.repeats) != found->repeats) {
      corrupt("anchor '{}' gives remote buffer '{}' {} slots in the metadata, the executable {}", anchor.name(),
              info.name, info.repeats, found->repeats);
    }
    // The anchor holds the buffer's whole content: every slot, in order.
    const std::uint64_t elements = found->numElements * found->repeats;
    sameData(anchor, found->type, elements, [&] {
      return fmt::format("remote buffer '{}' is {} x {} slots of {} elements ({} bytes)", info.name,
                         hwsim::toString(found->type), found->repeats, found->numElements,
                         elements * hwsim::sizeOf(found->type));
    });
  }

  // describe() names the executable's side ("stream 'x' is ..."), formatted
  // only for the message: every creation checks every anchor.
  template <class Describe>
  void sameData(const Anchor &anchor, hwsim::Type type, std::uint64_t elements, Describe describe) const {
    const TensorInfo &info = anchor.tensorInfo();
    if (info.dataType() != toDataType(type) || static_cast<std::uint64_t>(info.numElements()) != elements) {
      corrupt("anchor '{}' is {} in the metadata but its {} in the executable", anchor.name(),
              describeAnchor(anchor), describe());
    }
  }

  // A flow program that moves a stream nobody is told about would stop at
  // that stream forever (or fail): the model must name it.
  void streamsWithoutAnchor() const {
    const ProgramFlow &flow = model_.metadata.programFlow();
    for (const auto *phase : {&flow.load(), &flow.main(), &flow.save()}) {
      for (const auto program : *phase) {
        for (const unsigned index : streamsMovedBy_.at(program)) {
          const std::string &handle = exe_.streams()[index].handle;
          const Anchor *anchor = model_.metadata.findAnchorByHandle(handle);
          if (anchor == nullptr) {
            corrupt("program {} ('{}') moves stream '{}', which no anchor names", program, programName(program),
                    handle);
          }
          const auto &listed = anchor->programs();
          if (std::find(listed.begin(), listed.end(), program) == listed.end()) {
            corrupt("program {} ('{}') moves stream '{}', but anchor '{}' does not list that program", program,
                    programName(program), handle, anchor->name());
          }
        }
      }
    }
  }

  const std::string &programName(ProgramFlow::ProgramIndexType program) const {
    return model_.metadata.programFlow().programsMap().at(program);
  }

  const Model &model_;
  const hwsim::Executable &exe_;
  const BlobWhere metadataWhere_;
  const BlobWhere executableWhere_;
  // Program index (of the programs map) -> the streams it moves, sorted.
  std::map<ProgramFlow::ProgramIndexType, std::vector<unsigned>> streamsMovedBy_;
};

}  // namespace

hwsim::Executable readExecutable(const Model &model) {
  const ExecutableBlob &blob = model.executable();
  if (blob.kept().valid()) return blob.kept();
  const auto bytes = blob.bytes();
  try {
    return hwsim::Executable::deserialize(bytes.data(), bytes.size(), blob.seal());
  } catch (const hwsim::Error &error) {
    throw Error(ErrorCode::CorruptModel, "model '{}': {}: {}", model.metadata.executable(),
                describe(model.executable().origin(), BlobType::Executable), error.what());
  }
}

void checkAgainstExecutable(const Model &model, const hwsim::Executable &executable) {
  ExecutableCheck(model, executable).run();
}

void checkAgainstExecutable(const Model &model) { checkAgainstExecutable(model, readExecutable(model)); }

}  // namespace mrt::popef
