// hwsim errors. Every failure hwsim reports is an hwsim::Error (or a subclass)
// whose kind() says which category it is, so the layer above can map it to its
// own status codes without parsing messages. Messages name the bad value:
// "tile 3: needs 700000 bytes, has 638976".
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

namespace hwsim {

enum class ErrorKind : std::uint8_t {
  InvalidArgument,     // a bad argument to an API call (wrong size, index out of range)
  InvalidOption,       // an unknown or malformed engine/compile option (Poplar invalid_option)
  GraphError,          // an ill-formed graph or program (shapes, types, unmapped tensors)
  LinkError,           // the graph does not fit: a tile over its memory (Poplar link_error)
  NotFound,            // no stream / handle / remote buffer / device of that name or id
  FailedPrecondition,  // a call in the wrong state (not loaded, stopped, needs reset)
  CorruptExecutable,   // serialized executable bytes failed verification
  DeviceError,         // a (simulated) hardware error during run: see RuntimeError
  Unavailable,         // the device is attached by someone else / cannot be attached
  ProfilingDisabled,   // a profile was requested but execution profiling is off
};

const char *toString(ErrorKind kind) noexcept;

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string &message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const noexcept { return kind_; }

 private:
  ErrorKind kind_;
};

// Poplar's invalid_option: names the option in the message and in option().
class InvalidOption : public Error {
 public:
  InvalidOption(std::string option, const std::string &message)
      : Error(ErrorKind::InvalidOption, message), option_(std::move(option)) {}
  const std::string &option() const noexcept { return option_; }

 private:
  std::string option_;
};

// Poplar's link_error for a tile over its memory: carries the numbers.
class LinkError : public Error {
 public:
  LinkError(unsigned tile, std::uint64_t bytesNeeded, std::uint64_t bytesAvailable,
            const std::string &message)
      : Error(ErrorKind::LinkError, message),
        tile_(tile), needed_(bytesNeeded), available_(bytesAvailable) {}
  unsigned tile() const noexcept { return tile_; }
  std::uint64_t bytesNeeded() const noexcept { return needed_; }
  std::uint64_t bytesAvailable() const noexcept { return available_; }

 private:
  unsigned tile_;
  std::uint64_t needed_, available_;
};

// A corrupt serialized executable: offset is the byte offset the verifier
// blames (0 when the problem is semantic rather than structural).
class CorruptExecutable : public Error {
 public:
  CorruptExecutable(std::uint64_t offset, const std::string &message)
      : Error(ErrorKind::CorruptExecutable, message), offset_(offset) {}
  std::uint64_t offset() const noexcept { return offset_; }

 private:
  std::uint64_t offset_;
};

}  // namespace hwsim
