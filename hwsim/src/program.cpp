#include "hwsim/program.hpp"

#include "fail.hpp"
#include "program_node.hpp"

namespace hwsim {

namespace detail {
const char *toString(NodeKind kind) noexcept {
  static constexpr const char *names[kNumNodeKinds] = {
      "Sequence", "Execute", "Copy", "StreamToTensor", "TensorToStream", "RemoteToTensor",
      "TensorToRemote", "Repeat", "RepeatWhileTrue", "RepeatWhileFalse", "If", "Switch",
      "Sync", "Call", "WriteUndef", "PrintTensor"};
  auto i = static_cast<unsigned>(kind);
  return i < kNumNodeKinds ? names[i] : "?";
}
}  // namespace detail

namespace program {

using detail::NodeKind;
using detail::ProgramNode;

namespace {
std::shared_ptr<ProgramNode> makeNode(NodeKind kind, std::string_view name, std::uint32_t graphId = 0) {
  auto n = std::make_shared<ProgramNode>();
  n->kind = kind;
  n->name = std::string(name);
  n->graphId = graphId;
  return n;
}
void requireValid(const Tensor &t, const char *what) {
  if (!t.valid()) detail::fail(ErrorKind::InvalidArgument, "{}: invalid tensor", what);
}
// True if `target` is `from` or one of its descendants. Sequence::add and
// Switch::add use it to refuse cycles (which would also leak the nodes).
bool reaches(const ProgramNode *from, const ProgramNode *target) {
  if (from == target) return true;
  for (const auto &c : from->children) {
    if (reaches(c.get(), target)) return true;
  }
  return false;
}
void refuseCycle(const Program &child, const ProgramNode *parent) {
  if (reaches(child.node().get(), parent)) {
    detail::fail(ErrorKind::InvalidArgument, "a program cannot contain itself");
  }
}
}  // namespace

Program::Program() : node_(makeNode(NodeKind::Sequence, {})) {}

bool Program::isEmpty() const { return node_->kind == NodeKind::Sequence && node_->children.empty(); }

Program &Program::setDebugName(std::string_view name) {
  node_->name = std::string(name);
  return *this;
}

Sequence::Sequence() : Program(makeNode(NodeKind::Sequence, {})) {}
Sequence::Sequence(std::initializer_list<Program> programs, std::string_view debugName)
    : Program(makeNode(NodeKind::Sequence, debugName)) {
  for (const auto &p : programs) add(p);
}
void Sequence::add(const Program &p) {
  refuseCycle(p, node_.get());
  node_->children.push_back(p.node());
}

Execute::Execute(ComputeSet cs, std::string_view debugName) : Program(makeNode(NodeKind::Execute, debugName, cs.graphId)) {
  node_->index = cs.id;
}

Copy::Copy(const Tensor &src, const Tensor &dst, std::string_view debugName)
    : Program(makeNode(NodeKind::Copy, debugName, src.graphId())) {
  requireValid(src, "Copy source");
  requireValid(dst, "Copy destination");
  node_->t0 = src;
  node_->t1 = dst;
}
Copy::Copy(const DataStream &stream, const Tensor &dst, std::string_view debugName)
    : Program(makeNode(NodeKind::StreamToTensor, debugName, stream.graphId)) {
  requireValid(dst, "Copy destination");
  node_->index = stream.id;
  node_->t1 = dst;
}
Copy::Copy(const Tensor &src, const DataStream &stream, std::string_view debugName)
    : Program(makeNode(NodeKind::TensorToStream, debugName, stream.graphId)) {
  requireValid(src, "Copy source");
  node_->index = stream.id;
  node_->t0 = src;
}
Copy::Copy(const RemoteBuffer &buffer, const Tensor &dst, std::uint64_t repeatIndex, std::string_view debugName)
    : Program(makeNode(NodeKind::RemoteToTensor, debugName, buffer.graphId)) {
  requireValid(dst, "Copy destination");
  node_->index = buffer.id;
  node_->t0 = dst;
  node_->count = repeatIndex;
}
Copy::Copy(const RemoteBuffer &buffer, const Tensor &dst, const Tensor &repeatIndex, std::string_view debugName)
    : Program(makeNode(NodeKind::RemoteToTensor, debugName, buffer.graphId)) {
  requireValid(dst, "Copy destination");
  requireValid(repeatIndex, "Copy slot index");
  node_->index = buffer.id;
  node_->t0 = dst;
  node_->t1 = repeatIndex;
}
Copy::Copy(const Tensor &src, const RemoteBuffer &buffer, std::uint64_t repeatIndex, std::string_view debugName)
    : Program(makeNode(NodeKind::TensorToRemote, debugName, buffer.graphId)) {
  requireValid(src, "Copy source");
  node_->index = buffer.id;
  node_->t0 = src;
  node_->count = repeatIndex;
}
Copy::Copy(const Tensor &src, const RemoteBuffer &buffer, const Tensor &repeatIndex, std::string_view debugName)
    : Program(makeNode(NodeKind::TensorToRemote, debugName, buffer.graphId)) {
  requireValid(src, "Copy source");
  requireValid(repeatIndex, "Copy slot index");
  node_->index = buffer.id;
  node_->t0 = src;
  node_->t1 = repeatIndex;
}

Repeat::Repeat(std::uint64_t count, const Program &body, std::string_view debugName)
    : Program(makeNode(NodeKind::Repeat, debugName)) {
  node_->count = count;
  node_->children = {body.node()};
}

RepeatWhileTrue::RepeatWhileTrue(const Program &cond, const Tensor &predicate, const Program &body,
                                 std::string_view debugName)
    : Program(makeNode(NodeKind::RepeatWhileTrue, debugName, predicate.graphId())) {
  requireValid(predicate, "RepeatWhileTrue predicate");
  node_->t0 = predicate;
  node_->children = {cond.node(), body.node()};
}

RepeatWhileFalse::RepeatWhileFalse(const Program &cond, const Tensor &predicate, const Program &body,
                                   std::string_view debugName)
    : Program(makeNode(NodeKind::RepeatWhileFalse, debugName, predicate.graphId())) {
  requireValid(predicate, "RepeatWhileFalse predicate");
  node_->t0 = predicate;
  node_->children = {cond.node(), body.node()};
}

If::If(const Tensor &predicate, const Program &thenBody, const Program &elseBody, std::string_view debugName)
    : Program(makeNode(NodeKind::If, debugName, predicate.graphId())) {
  requireValid(predicate, "If predicate");
  node_->t0 = predicate;
  node_->children = {thenBody.node(), elseBody.node()};
}

Switch::Switch(const Tensor &control, const Program &defaultBody, std::string_view debugName)
    : Program(makeNode(NodeKind::Switch, debugName, control.graphId())) {
  requireValid(control, "Switch control");
  node_->t0 = control;
  node_->children = {defaultBody.node()};
}
Switch &Switch::add(std::int32_t value, const Program &body) {
  for (auto v : node_->caseValues) {
    if (v == value) detail::fail(ErrorKind::InvalidArgument, "Switch already has a case {}", value);
  }
  refuseCycle(body, node_.get());
  node_->caseValues.push_back(value);
  node_->children.push_back(body.node());
  return *this;
}

Sync::Sync(SyncType type, std::string_view debugName) : Program(makeNode(NodeKind::Sync, debugName)) {
  node_->index = static_cast<unsigned>(type);
}

Call::Call(Function f, std::string_view debugName) : Program(makeNode(NodeKind::Call, debugName, f.graphId)) {
  node_->index = f.id;
}

WriteUndef::WriteUndef(const Tensor &t, std::string_view debugName)
    : Program(makeNode(NodeKind::WriteUndef, debugName, t.graphId())) {
  requireValid(t, "WriteUndef");
  node_->t0 = t;
}

PrintTensor::PrintTensor(std::string_view title, const Tensor &t)
    : Program(makeNode(NodeKind::PrintTensor, title, t.graphId())) {
  requireValid(t, "PrintTensor");
  node_->t0 = t;
}

}  // namespace program
}  // namespace hwsim
