// hwsim programs: the control program run by Engine::run(), as in Poplar's
// poplar::program namespace. Programs are cheap value handles sharing their
// node; a program may appear in several places (it is a DAG, not a copy).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hwsim/graph.hpp"
#include "hwsim/tensor.hpp"

namespace hwsim {
namespace detail {
struct ProgramNode;
}

namespace program {

class Program {
 public:
  Program();  // an empty Sequence
  bool isEmpty() const;
  // A name shown in profiles, traces and simulated error locations.
  Program &setDebugName(std::string_view name);
  const std::shared_ptr<detail::ProgramNode> &node() const { return node_; }

 protected:
  explicit Program(std::shared_ptr<detail::ProgramNode> node) : node_(std::move(node)) {}
  std::shared_ptr<detail::ProgramNode> node_;
};

class Sequence : public Program {
 public:
  Sequence();
  Sequence(std::initializer_list<Program> programs, std::string_view debugName = {});
  void add(const Program &p);
};

// Runs every vertex of a compute set (compute phase, then an internal sync).
class Execute : public Program {
 public:
  explicit Execute(ComputeSet cs, std::string_view debugName = {});
};

// Copies elements (element counts and types must match):
//   tensor -> tensor (on-device exchange), stream -> tensor, tensor -> stream
//   (host syncs), remote buffer slot <-> tensor. A remote slot index is either a
//   fixed value or read at run time from a scalar U32/S32 tensor.
class Copy : public Program {
 public:
  Copy(const Tensor &src, const Tensor &dst, std::string_view debugName = {});
  Copy(const DataStream &stream, const Tensor &dst, std::string_view debugName = {});
  Copy(const Tensor &src, const DataStream &stream, std::string_view debugName = {});
  Copy(const RemoteBuffer &buffer, const Tensor &dst, std::uint64_t repeatIndex = 0,
       std::string_view debugName = {});
  Copy(const RemoteBuffer &buffer, const Tensor &dst, const Tensor &repeatIndex,
       std::string_view debugName = {});
  Copy(const Tensor &src, const RemoteBuffer &buffer, std::uint64_t repeatIndex = 0,
       std::string_view debugName = {});
  Copy(const Tensor &src, const RemoteBuffer &buffer, const Tensor &repeatIndex,
       std::string_view debugName = {});
};

class Repeat : public Program {
 public:
  Repeat(std::uint64_t count, const Program &body, std::string_view debugName = {});
};

// Runs cond, then while the scalar predicate is true (non-zero) runs body and cond.
class RepeatWhileTrue : public Program {
 public:
  RepeatWhileTrue(const Program &cond, const Tensor &predicate, const Program &body,
                  std::string_view debugName = {});
};
class RepeatWhileFalse : public Program {
 public:
  RepeatWhileFalse(const Program &cond, const Tensor &predicate, const Program &body,
                   std::string_view debugName = {});
};

// Runs thenBody if the scalar predicate is non-zero, else elseBody.
class If : public Program {
 public:
  If(const Tensor &predicate, const Program &thenBody, const Program &elseBody = Sequence(),
     std::string_view debugName = {});
};

// Runs the case whose value equals the scalar S32/U32 control, else the default.
class Switch : public Program {
 public:
  explicit Switch(const Tensor &control, const Program &defaultBody = Sequence(),
                  std::string_view debugName = {});
  Switch &add(std::int32_t value, const Program &body);
};

enum class SyncType : std::uint8_t { Internal = 0, External = 1, Global = 2 };
class Sync : public Program {
 public:
  explicit Sync(SyncType type, std::string_view debugName = {});
};

class Call : public Program {
 public:
  explicit Call(Function f, std::string_view debugName = {});
};

// Declares the tensor's contents dead (a liveness hint; costs nothing).
class WriteUndef : public Program {
 public:
  explicit WriteUndef(const Tensor &t, std::string_view debugName = {});
};

// Prints "title: [v0 v1 ...]" to the engine's print-tensor stream.
class PrintTensor : public Program {
 public:
  PrintTensor(std::string_view title, const Tensor &t);
};

}  // namespace program
}  // namespace hwsim
