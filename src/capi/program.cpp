// Control programs (include/mrt_c.h, "Programs"): each C constructor makes an
// hwsim program and records what it runs, so that growing a Sequence or a
// Switch can refuse a program that would contain itself (also through a
// function Call) and name both programs. Operand checks are done here too,
// so mistakes are reported where they are made, naming the tensor.
#include <string>
#include <vector>

#include <fmt/format.h>

#include "capi/graph.hpp"

using mrt::Error;
using mrt::ErrorCode;
using namespace mrt::capi;
namespace program = hwsim::program;

namespace {

using Children = std::vector<std::size_t>;

std::uint64_t add(mrt_graph &g, program::Program p, ProgramKind kind, Children children = {}) {
  ProgramEntry e;
  e.program = std::move(p);
  e.kind = kind;
  e.children = std::move(children);
  return addProgram(g, std::move(e));
}

// A body argument where 0 means "nothing": an empty Sequence.
std::optional<std::size_t> optionalProgram(const mrt_graph &g, mrt_program id, const char *argument) {
  if (id == 0) return std::nullopt;
  return indexOf(g, id, IdKind::Program, argument);
}
program::Program programAt(const mrt_graph &g, std::optional<std::size_t> index) {
  return index ? g.programs[*index].program : program::Sequence();
}

// Predicates, switch controls and slot indices: one element read at run time.
const hwsim::Tensor &scalarOf(const mrt_graph &g, mrt_tensor id, const char *argument, bool integerOnly) {
  const hwsim::Tensor &t = tensorOf(g, id, argument).tensor;
  if (t.numElements() != 1) {
    throw Error(ErrorCode::InvalidArgument, "{} {} has {} elements; it must be a scalar", argument,
                describeTensor(g, id), t.numElements());
  }
  if (integerOnly && t.elementType() != hwsim::Type::S32 && t.elementType() != hwsim::Type::U32) {
    throw Error(ErrorCode::InvalidArgument, "{} {} is {}; it must be S32 or U32", argument, describeTensor(g, id),
                hwsim::toString(t.elementType()));
  }
  return t;
}

void requireSameData(const mrt_graph &g, hwsim::Type type, std::uint64_t count, const std::string &what,
                     mrt_tensor tensor, const char *argument) {
  const hwsim::Tensor &t = tensorOf(g, tensor, argument).tensor;
  if (t.elementType() != type || t.numElements() != count) {
    throw Error(ErrorCode::InvalidArgument, "{} moves {} {} elements, but {} {} has {} {} elements", what, count,
                hwsim::toString(type), argument, describeTensor(g, tensor), t.numElements(),
                hwsim::toString(t.elementType()));
  }
}

const StreamEntry &streamOf(const mrt_graph &g, mrt_stream id, bool hostToDevice) {
  const StreamEntry &s = g.streams[indexOf(g, id, IdKind::Stream, "stream")];
  if (s.hostToDevice != hostToDevice) {
    throw Error(ErrorCode::InvalidArgument, "stream 0x{:x} '{}' is a {} FIFO; this copy needs a {} FIFO", id,
                s.handle, s.hostToDevice ? "host-to-device" : "device-to-host",
                hostToDevice ? "host-to-device" : "device-to-host");
  }
  return s;
}

const RemoteBufferEntry &remoteBufferOf(const mrt_graph &g, mrt_remote_buffer id, uint64_t slot,
                                        mrt_tensor slotTensor) {
  const RemoteBufferEntry &b = g.remoteBuffers[indexOf(g, id, IdKind::RemoteBuffer, "buffer")];
  if (slotTensor == 0 && slot >= b.repeats) {
    throw Error(ErrorCode::InvalidArgument, "slot {} is out of range: remote buffer '{}' has {} slots", slot,
                b.handle, b.repeats);
  }
  if (slotTensor != 0) scalarOf(g, slotTensor, "slot_tensor", true);
  return b;
}

}  // namespace

MRT_API mrt_status mrt_program_sequence(mrt_graph *graph, const mrt_program *programs, size_t num_programs,
                                        const char *name, mrt_program *out) noexcept {
  return changeGraph("mrt_program_sequence", graph, [&](mrt_graph &g) {
    requireNotNull(out, "out");
    if (num_programs > 0) requireNotNull(programs, "programs");
    Children children;
    program::Sequence seq;
    seq.setDebugName(nameOf(name));
    for (std::size_t i = 0; i < num_programs; ++i) {
      const std::string argument = fmt::format("programs[{}]", i);
      children.push_back(indexOf(g, programs[i], IdKind::Program, argument.c_str()));
      seq.add(g.programs[children.back()].program);
    }
    ProgramEntry e;
    e.program = seq;
    e.kind = ProgramKind::Sequence;
    e.sequence = seq;
    e.children = std::move(children);
    *out = addProgram(g, std::move(e));
  });
}

MRT_API mrt_status mrt_program_sequence_add(mrt_graph *graph, mrt_program sequence, mrt_program program) noexcept {
  return changeGraph("mrt_program_sequence_add", graph, [&](mrt_graph &g) {
    const std::size_t parent = indexOf(g, sequence, IdKind::Program, "sequence");
    const std::size_t child = indexOf(g, program, IdKind::Program, "program");
    ProgramEntry &p = g.programs[parent];
    if (p.kind != ProgramKind::Sequence) {
      throw Error(ErrorCode::InvalidArgument, "sequence 0x{:x} is not a Sequence program", sequence);
    }
    refuseCycle(g, parent, child);
    p.sequence->add(g.programs[child].program);
    p.children.push_back(child);
  });
}

MRT_API mrt_status mrt_program_execute(mrt_graph *graph, mrt_compute_set compute_set, const char *name,
                                       mrt_program *out) noexcept {
  return changeGraph("mrt_program_execute", graph, [&](mrt_graph &g) {
    requireNotNull(out, "out");
    const hwsim::ComputeSet cs = g.computeSets[indexOf(g, compute_set, IdKind::ComputeSet, "compute_set")];
    *out = add(g, program::Execute(cs, nameOf(name)), ProgramKind::Execute);
  });
}

MRT_API mrt_status mrt_program_copy(mrt_graph *graph, mrt_tensor source, mrt_tensor destination, const char *name,
                                    mrt_program *out) noexcept {
  return changeGraph("mrt_program_copy", graph, [&](mrt_graph &g) {
    requireNotNull(out, "out");
    const hwsim::Tensor &src = tensorOf(g, source, "source").tensor;
    const hwsim::Tensor &dst = tensorOf(g, destination, "destination").tensor;
    requireSameData(g, src.elementType(), src.numElements(), "the copy from " + describeTensor(g, source),
                    destination, "destination");
    refuseConstantDestination(g, destination, "destination");
    *out = add(g, program::Copy(src, dst, nameOf(name)), ProgramKind::Copy);
  });
}

MRT_API mrt_status mrt_program_copy_from_stream(mrt_graph *graph, mrt_stream stream, mrt_tensor destination,
                                                const char *name, mrt_program *out) noexcept {
  return changeGraph("mrt_program_copy_from_stream", graph, [&](mrt_graph &g) {
    requireNotNull(out, "out");
    const StreamEntry &s = streamOf(g, stream, true);
    requireSameData(g, s.type, s.numElements, fmt::format("stream '{}'", s.handle), destination, "destination");
    refuseConstantDestination(g, destination, "destination");
    *out = add(g, program::Copy(s.stream, tensorOf(g, destination, "destination").tensor, nameOf(name)),
               ProgramKind::Copy);
  });
}

MRT_API mrt_status mrt_program_copy_to_stream(mrt_graph *graph, mrt_tensor source, mrt_stream stream,
                                              const char *name, mrt_program *out) noexcept {
  return changeGraph("mrt_program_copy_to_stream", graph, [&](mrt_graph &g) {
    requireNotNull(out, "out");
    const StreamEntry &s = streamOf(g, stream, false);
    requireSameData(g, s.type, s.numElements, fmt::format("stream '{}'", s.handle), source, "source");
    *out = add(g, program::Copy(tensorOf(g, source, "source").tensor, s.stream, nameOf(name)), ProgramKind::Copy);
  });
}

MRT_API mrt_status mrt_program_copy_from_remote_buffer(mrt_graph *graph, mrt_remote_buffer buffer,
                                                       mrt_tensor destination, uint64_t slot, mrt_tensor slot_tensor,
                                                       const char *name, mrt_program *out) noexcept {
  return changeGraph("mrt_program_copy_from_remote_buffer", graph, [&](mrt_graph &g) {
    requireNotNull(out, "out");
    const RemoteBufferEntry &b = remoteBufferOf(g, buffer, slot, slot_tensor);
    requireSameData(g, b.type, b.numElements, fmt::format("a slot of remote buffer '{}'", b.handle), destination,
                    "destination");
    refuseConstantDestination(g, destination, "destination");
    const hwsim::Tensor &dst = tensorOf(g, destination, "destination").tensor;
    program::Copy copy = slot_tensor != 0
                             ? program::Copy(b.buffer, dst, tensorOf(g, slot_tensor, "slot_tensor").tensor, nameOf(name))
                             : program::Copy(b.buffer, dst, slot, nameOf(name));
    *out = add(g, std::move(copy), ProgramKind::Copy);
  });
}

MRT_API mrt_status mrt_program_copy_to_remote_buffer(mrt_graph *graph, mrt_tensor source, mrt_remote_buffer buffer,
                                                     uint64_t slot, mrt_tensor slot_tensor, const char *name,
                                                     mrt_program *out) noexcept {
  return changeGraph("mrt_program_copy_to_remote_buffer", graph, [&](mrt_graph &g) {
    requireNotNull(out, "out");
    const RemoteBufferEntry &b = remoteBufferOf(g, buffer, slot, slot_tensor);
    requireSameData(g, b.type, b.numElements, fmt::format("a slot of remote buffer '{}'", b.handle), source,
                    "source");
    const hwsim::Tensor &src = tensorOf(g, source, "source").tensor;
    program::Copy copy = slot_tensor != 0
                             ? program::Copy(src, b.buffer, tensorOf(g, slot_tensor, "slot_tensor").tensor, nameOf(name))
                             : program::Copy(src, b.buffer, slot, nameOf(name));
    *out = add(g, std::move(copy), ProgramKind::Copy);
  });
}

MRT_API mrt_status mrt_program_repeat(mrt_graph *graph, uint64_t count, mrt_program body, const char *name,
                                      mrt_program *out) noexcept {
  return changeGraph("mrt_program_repeat", graph, [&](mrt_graph &g) {
    requireNotNull(out, "out");
    const std::size_t b = indexOf(g, body, IdKind::Program, "body");
    *out = add(g, program::Repeat(count, g.programs[b].program, nameOf(name)), ProgramKind::Repeat, {b});
  });
}

MRT_API mrt_status mrt_program_repeat_while(mrt_graph *graph, mrt_program condition, mrt_tensor predicate,
                                            mrt_program body, bool while_true, const char *name,
                                            mrt_program *out) noexcept {
  return changeGraph("mrt_program_repeat_while", graph, [&](mrt_graph &g) {
    requireNotNull(out, "out");
    const std::size_t c = indexOf(g, condition, IdKind::Program, "condition");
    const std::size_t b = indexOf(g, body, IdKind::Program, "body");
    const hwsim::Tensor &p = scalarOf(g, predicate, "predicate", false);
    const program::Program &cp = g.programs[c].program;
    const program::Program &bp = g.programs[b].program;
    program::Program loop = while_true ? program::Program(program::RepeatWhileTrue(cp, p, bp, nameOf(name)))
                                       : program::Program(program::RepeatWhileFalse(cp, p, bp, nameOf(name)));
    *out = add(g, std::move(loop), ProgramKind::RepeatWhile, {c, b});
  });
}

MRT_API mrt_status mrt_program_if(mrt_graph *graph, mrt_tensor predicate, mrt_program then_body,
                                  mrt_program else_body, const char *name, mrt_program *out) noexcept {
  return changeGraph("mrt_program_if", graph, [&](mrt_graph &g) {
    requireNotNull(out, "out");
    const hwsim::Tensor &p = scalarOf(g, predicate, "predicate", false);
    const std::size_t t = indexOf(g, then_body, IdKind::Program, "then_body");
    const auto e = optionalProgram(g, else_body, "else_body");
    Children children{t};
    if (e) children.push_back(*e);
    *out = add(g, program::If(p, g.programs[t].program, programAt(g, e), nameOf(name)), ProgramKind::If,
               std::move(children));
  });
}

MRT_API mrt_status mrt_program_switch(mrt_graph *graph, mrt_tensor control, mrt_program default_body,
                                      const char *name, mrt_program *out) noexcept {
  return changeGraph("mrt_program_switch", graph, [&](mrt_graph &g) {
    requireNotNull(out, "out");
    const hwsim::Tensor &c = scalarOf(g, control, "control", true);
    const auto d = optionalProgram(g, default_body, "default_body");
    program::Switch sw(c, programAt(g, d), nameOf(name));
    ProgramEntry e;
    e.program = sw;
    e.kind = ProgramKind::Switch;
    e.switchProgram = sw;
    if (d) e.children.push_back(*d);
    *out = addProgram(g, std::move(e));
  });
}

MRT_API mrt_status mrt_program_switch_add_case(mrt_graph *graph, mrt_program switch_program, int32_t value,
                                               mrt_program body) noexcept {
  return changeGraph("mrt_program_switch_add_case", graph, [&](mrt_graph &g) {
    const std::size_t s = indexOf(g, switch_program, IdKind::Program, "switch_program");
    const std::size_t b = indexOf(g, body, IdKind::Program, "body");
    ProgramEntry &sw = g.programs[s];
    if (sw.kind != ProgramKind::Switch) {
      throw Error(ErrorCode::InvalidArgument, "switch_program 0x{:x} is not a Switch program", switch_program);
    }
    refuseCycle(g, s, b);
    try {
      sw.switchProgram->add(value, g.programs[b].program);
    } catch (const hwsim::Error &) {
      throw Error(ErrorCode::InvalidArgument, "switch_program 0x{:x} already has a case {}", switch_program, value);
    }
    sw.children.push_back(b);
  });
}

MRT_API mrt_status mrt_program_sync(mrt_graph *graph, int32_t sync_type, const char *name,
                                    mrt_program *out) noexcept {
  return changeGraph("mrt_program_sync", graph, [&](mrt_graph &g) {
    requireNotNull(out, "out");
    if (sync_type < MRT_SYNC_INTERNAL || sync_type > MRT_SYNC_GLOBAL) {
      throw Error(ErrorCode::InvalidArgument, "sync_type {} is not an mrt_sync_type (0 internal, 1 external, 2 global)",
                  sync_type);
    }
    *out = add(g, program::Sync(static_cast<program::SyncType>(sync_type), nameOf(name)), ProgramKind::Sync);
  });
}

MRT_API mrt_status mrt_program_call(mrt_graph *graph, mrt_function function, const char *name,
                                    mrt_program *out) noexcept {
  return changeGraph("mrt_program_call", graph, [&](mrt_graph &g) {
    requireNotNull(out, "out");
    const FunctionEntry &f = g.functions[indexOf(g, function, IdKind::Function, "function")];
    *out = add(g, program::Call(f.function, nameOf(name)), ProgramKind::Call, {f.body});
  });
}

MRT_API mrt_status mrt_program_write_undef(mrt_graph *graph, mrt_tensor tensor, const char *name,
                                           mrt_program *out) noexcept {
  return changeGraph("mrt_program_write_undef", graph, [&](mrt_graph &g) {
    requireNotNull(out, "out");
    *out = add(g, program::WriteUndef(tensorOf(g, tensor, "tensor").tensor, nameOf(name)), ProgramKind::WriteUndef);
  });
}

MRT_API mrt_status mrt_program_print_tensor(mrt_graph *graph, const char *title, mrt_tensor tensor,
                                            mrt_program *out) noexcept {
  return changeGraph("mrt_program_print_tensor", graph, [&](mrt_graph &g) {
    requireNotNull(out, "out");
    *out = add(g, program::PrintTensor(nameOf(title), tensorOf(g, tensor, "tensor").tensor),
               ProgramKind::PrintTensor);
  });
}

static_assert(static_cast<int>(program::SyncType::Internal) == MRT_SYNC_INTERNAL);
static_assert(static_cast<int>(program::SyncType::External) == MRT_SYNC_EXTERNAL);
static_assert(static_cast<int>(program::SyncType::Global) == MRT_SYNC_GLOBAL);
