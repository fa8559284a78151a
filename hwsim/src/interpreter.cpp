// The program interpreter: walks the compiled program DAG for one replica,
// running compute sets (bulk-synchronous: compute, sync, exchange), copies,
// host transfers and control flow, and adds each step's modelled cycles.
#include <algorithm>
#include <array>
#include <cstring>
#include <iostream>

#include <fmt/format.h>

#include "codelets/registry.hpp"
#include "codelets/type_dispatch.hpp"
#include "engine_impl.hpp"
#include "fail.hpp"
#include "worker_pool.hpp"

namespace hwsim {

using detail::ExeNode;
using detail::fail;
using detail::NodeKind;

namespace {
// Thrown where a run sees stop() (host syncs, compute sets, loop
// iterations); caught by runOne.
struct StopSignal {};
constexpr std::size_t kMaxOperands = 4;
constexpr std::size_t kMaxProfileEvents = 4'000'000;

// Where a vertex operand whose view is not contiguous is gathered or
// scattered, one per field, reused across vertices and runs.
std::vector<std::uint8_t> &vertexScratch(std::size_t field) {
  thread_local std::array<std::vector<std::uint8_t>, kMaxOperands> scratch;
  return scratch[field];
}
}  // namespace

void Engine::Impl::checkRunnable(unsigned program) const {
  if (program >= d->programs.size()) fail(ErrorKind::InvalidArgument, "program {} out of range ({} programs)", program, d->programs.size());
  if (state == State::Faulted) {
    fail(ErrorKind::FailedPrecondition, "the engine hit a device error: reset the device and load() again");
  }
  if (state != State::Loaded) fail(ErrorKind::FailedPrecondition, "run: the engine is not loaded on a device");
}

RunStatus Engine::Impl::runSteps(const std::vector<unsigned> &steps, unsigned replica) {
  try {
    for (const unsigned step : steps) exec(step, replica);
  } catch (const StopSignal &) {
    return RunStatus::Stopped;
  }
  return RunStatus::Completed;
}

void Engine::Impl::addCycles(Replica &rep, std::uint64_t cycles) {
  if (t_stage) {
    t_stage->cycles += cycles;
  } else {
    rep.cycles.store(rep.cycles.load(std::memory_order_relaxed) + cycles, std::memory_order_relaxed);
  }
}

std::uint64_t Engine::Impl::now(const Replica &rep) {
  return rep.cycles.load(std::memory_order_relaxed) + (t_stage ? t_stage->cycles : 0);
}

std::unique_lock<std::mutex> Engine::Impl::callbackLock() {
  return t_stage && t_stage->callbacks ? std::unique_lock<std::mutex>(*t_stage->callbacks) : std::unique_lock<std::mutex>();
}

RunStatus Engine::Impl::runOne(unsigned program, unsigned replica) {
  checkRunnable(program);
  if (stopRequested.load(std::memory_order_acquire)) return RunStatus::Stopped;
  auto &rep = *replicas[replica];
  rep.profileThisRun = profiling.load(std::memory_order_relaxed) && rep.profiledRuns[program] < profileRunLimit;
  if (rep.profileThisRun) ++rep.profiledRuns[program];
  const detail::WorkerPool::RunScope running;
  try {
    exec(d->programs[program], replica);
  } catch (const StopSignal &) {
    return RunStatus::Stopped;
  }
  return RunStatus::Completed;
}

void Engine::Impl::hostSync(unsigned) {
  if (stopRequested.load(std::memory_order_acquire)) throw StopSignal{};
}

// A program that never reaches a host sync (an unbounded loop of compute)
// must stop too, so every compute set and loop iteration looks at the flag.
// Relaxed: the flag publishes no data to this thread (host syncs acquire,
// for the callbacks), and this runs once per step, so it stays one plain load.
void Engine::Impl::checkStop() const {
  if (stopRequested.load(std::memory_order_relaxed)) throw StopSignal{};
}

[[noreturn]] void Engine::Impl::raiseSimulated(std::uint32_t node, unsigned replica) {
  // Fire the first error registered for this step (any tile it runs on).
  auto it = simulatedErrors.lower_bound(ErrorLocation{node, 0});
  const ErrorLocation loc = it->first;
  const DeviceErrorCode code = it->second;
  const RecoveryAction action = recoveryActionFor(code);
  state = State::Faulted;
  if (device) device->pendingRecovery.store(static_cast<std::uint8_t>(action));
  const auto &n = d->nodes[node];
  throw RuntimeError(code, action, loc, replica, true,
                     fmt::format("simulated device error {} at program step {} ({} '{}') on tile {}, replica {}: "
                                 "recovery action {}",
                                 toString(code), node, detail::toString(n.kind), n.name, loc.tile, replica, toString(action)));
}

double Engine::Impl::readScalar(std::uint32_t view, unsigned replica) const {
  const auto &v = d->views[view];
  std::array<std::uint8_t, 8> buf{};
  gather(views[view], base(replica), buf.data());
  return detail::dispatchType(v.type, [&](auto tag) {
    constexpr Type T = decltype(tag)::value;
    detail::Storage<T> x;
    std::memcpy(&x, buf.data(), sizeof(x));
    return detail::toDouble<T>(x);
  });
}

void Engine::Impl::exec(std::uint32_t id, unsigned replica) {
  if (anySimulatedError && nodeHasError[id]) raiseSimulated(id, replica);
  const ExeNode &n = d->nodes[id];
  auto &rep = *replicas[replica];
  const std::uint64_t start = now(rep);
  auto advance = [&](std::uint64_t c) { addCycles(rep, c); };
  bool leaf = true;
  std::uint64_t cost = n.cycles;  // of a leaf
  // Pipelined stages never make copies pending (copyView), and run with none.
  if (mirrors.anyDeferred() && !t_stage) settlePendingCopies(id, replica);
  for (const std::uint32_t m : mirrors.staledBy(id)) rep.freshMirrors[m].store(false, std::memory_order_relaxed);
  if (!matMulRows.staledBy.empty()) {
    for (const std::uint32_t j : matMulRows.staledBy[id]) rep.joinedBs[j].fresh.store(false, std::memory_order_relaxed);
  }
  switch (n.kind) {
    case NodeKind::Sequence:
      leaf = false;
      for (auto c : n.children) exec(c, replica);
      break;
    case NodeKind::Execute:
      checkStop();
      executeComputeSet(n.index, replica);
      break;
    case NodeKind::Copy: copyView(id, replica); break;
    case NodeKind::StreamToTensor: cost = streamToTensor(n, replica); break;
    case NodeKind::TensorToStream: cost = tensorToStream(n, replica); break;
    case NodeKind::RemoteToTensor:
    case NodeKind::TensorToRemote: remoteCopy(n, replica); break;
    case NodeKind::Repeat:
      leaf = false;
      for (std::uint64_t i = 0; i < n.count; ++i) {
        checkStop();
        advance(n.cycles);
        exec(n.children[0], replica);
      }
      break;
    case NodeKind::RepeatWhileTrue:
    case NodeKind::RepeatWhileFalse: {
      leaf = false;
      const bool want = n.kind == NodeKind::RepeatWhileTrue;
      // The condition program may leave a copy to the predicate pending.
      auto predicate = [&] {
        if (mirrors.anyDeferred() && !t_stage) makeCopiesReadBy(id, replica);
        return readScalar(n.view0, replica) != 0.0;
      };
      exec(n.children[0], replica);
      while (predicate() == want) {
        checkStop();
        advance(n.cycles);
        exec(n.children[1], replica);
        exec(n.children[0], replica);
      }
      break;
    }
    case NodeKind::If:
      leaf = false;
      advance(n.cycles);
      exec(n.children[readScalar(n.view0, replica) != 0.0 ? 0 : 1], replica);
      break;
    case NodeKind::Switch: {
      leaf = false;
      advance(n.cycles);
      const auto value = static_cast<std::int64_t>(readScalar(n.view0, replica));
      std::uint32_t body = n.children[0];
      for (std::size_t i = 0; i < n.caseValues.size(); ++i) {
        if (n.caseValues[i] == value) {
          body = n.children[i + 1];
          break;
        }
      }
      exec(body, replica);
      break;
    }
    case NodeKind::Sync:
      if (n.index == static_cast<unsigned>(program::SyncType::Global)) hostSync(replica);
      break;
    case NodeKind::Call:
      leaf = false;
      advance(n.cycles);
      exec(n.children[0], replica);
      break;
    case NodeKind::WriteUndef: break;
    case NodeKind::PrintTensor: printTensor(n, replica); break;
  }
  if (leaf) advance(cost);
  if (rep.profileThisRun && leaf && rep.events.size() < kMaxProfileEvents) {
    rep.events.push_back({id, start, now(rep)});
  }
}

void Engine::Impl::executeComputeSet(std::uint32_t csId, unsigned replica) {
  const auto &chunks = csChunks[csId];
  std::uint8_t *b = base(replica);
  // Inputs whose copies still mirror their sources read the sources
  // (operand_mirrors.hpp), except in pipelined stages.
  const std::atomic<bool> *fresh = t_stage ? nullptr : replicas[replica]->freshMirrors.get();
  auto viaSource = [&](const detail::OperandMirrors::Read &read) { return detail::OperandMirrors::viaSource(read, fresh); };
  auto readAt = [&](std::uint64_t offset, const detail::OperandMirrors::Read &read) {
    return b + detail::OperandMirrors::readOffset(offset, read, fresh);
  };
  const detail::PreparedVertices &prepared = csVertices[csId];
  // MatMul rows (matmul_rows.hpp), not in pipelined stages: their joined
  // b's are made here, on the replica's thread, before any chunk runs.
  Replica &rep = *replicas[replica];
  const std::vector<detail::MatMulRow> &rows = matMulRows.rows[csId];
  const bool byRows = !t_stage && !rows.empty();
  if (byRows) {
    for (const detail::MatMulRow &row : rows) joinB(row, prepared, b, fresh, rep);
  }
  // Vertices [first, end), which split no row.
  auto runVertices = [&](std::uint32_t first, std::uint32_t end) {
    // Every field of a vertex's operands is set before its codelet runs:
    // zeroing the array once per vertex took a quarter of this function's
    // samples in mnist-8 (a rep stos of 160 bytes per vertex).
    std::array<detail::Operand, kMaxOperands> ops{};
    auto row = byRows ? std::lower_bound(rows.begin(), rows.end(), first,
                                         [](const detail::MatMulRow &r, std::uint32_t v) { return r.firstVertex < v; })
                      : rows.end();
    for (std::uint32_t vi = first; vi < end; ++vi) {
      if (row != rows.end() && row->firstVertex == vi) {
        const bool ran = runMatMulRow(*row, nullptr, prepared, b, fresh, rep);
        const std::uint32_t last = vi + row->vertices - 1;
        ++row;
        if (ran) {
          vi = last;
          continue;
        }
      }
      const detail::PreparedVertex &vx = prepared.vertices[vi];
      const detail::PreparedOperand *operands = prepared.operands.data() + vx.firstOperand;
      for (std::size_t f = 0; f < vx.numOperands; ++f) {
        const detail::PreparedOperand &o = operands[f];
        ops[f].type = o.type;
        ops[f].shape = o.shape;
        ops[f].numElements = o.numElements;
        if (o.inPlace) {
          const bool source = o.dir == detail::FieldDir::In && viaSource(o.read);
          ops[f].data = b + (source ? o.read.offset : o.offset);
          ops[f].planePitch = source ? o.read.planePitch : o.planePitch;
        } else {
          std::vector<std::uint8_t> &buffer = vertexScratch(f);
          buffer.resize(views[o.view].bytes + 8);
          ops[f].data = buffer.data();
          ops[f].planePitch = 0;
          if (o.dir != detail::FieldDir::Out) gather(views[o.view], b, buffer.data());
        }
      }
      if (vx.prepared != nullptr) vx.spec->executePrepared(*vx.spec, ops.data(), *vx.attrs, vx.prepared);
      else vx.spec->execute(*vx.spec, ops.data(), *vx.attrs);
      if (!vx.anyScattered) continue;
      for (std::size_t f = 0; f < vx.numOperands; ++f) {
        const detail::PreparedOperand &o = operands[f];
        if (!o.inPlace && o.dir != detail::FieldDir::In) scatter(views[o.view], b, ops[f].data);
      }
    }
  };
  // A run of elementwise vertices is one call on the whole run (elementwise_runs.hpp).
  const auto &runs = csRuns[csId];
  auto runElementwise = [&](std::size_t chunk) {
    for (std::uint32_t ri = runs.chunks[chunk]; ri < runs.chunks[chunk + 1]; ++ri) {
      const auto &run = runs.runs[ri];
      const detail::PreparedVertex &vx = prepared.vertices[run.vertex];
      const detail::PreparedOperand *operands = prepared.operands.data() + vx.firstOperand;
      std::array<detail::Operand, kMaxOperands> ops{};
      for (std::size_t f = 0; f < vx.numOperands; ++f) {
        ops[f].type = operands[f].type;
        ops[f].shape = &run.shape;
        ops[f].numElements = run.numElements;
        ops[f].data = readAt(operands[f].offset, operands[f].read);
      }
      vx.spec->execute(*vx.spec, ops.data(), *vx.attrs);
    }
  };
  // Rows cut into parts (matmul_rows.hpp): a chunk per part. A row that
  // cannot run as GEMMs runs its vertices in its first part's chunk.
  const std::vector<detail::MatMulRowPart> &parts = matMulRows.parts[csId];
  const bool byParts = byRows && !parts.empty();
  auto runPart = [&](std::size_t i) {
    const detail::MatMulRowPart &part = parts[i];
    const detail::MatMulRow &row = rows[part.row];
    if (!runMatMulRow(row, &part, prepared, b, fresh, rep) && part.firstRow == 0) {
      runVertices(row.firstVertex, row.firstVertex + row.vertices);
    }
  };
  auto runChunk = [&](std::size_t chunk) {
    if (byParts) runPart(chunk);
    else if (runs.empty()) runVertices(chunks[chunk], chunks[chunk + 1]);
    else runElementwise(chunk);
  };
  // Chunks exist only with host.threads > 1 (planComputeSets); the gate
  // keeps on the caller what the pool cannot speed up.
  const std::size_t numChunks = byParts ? parts.size() : chunks.size() - 1;
  auto &gate = csGates[csId];
  const unsigned threads = static_cast<unsigned>(std::min<std::size_t>(enginePlan->settings.hostThreads, numChunks));
  using Mode = detail::ParallelGate::Mode;
  Mode mode = numChunks > 1 ? gate.mode(threads) : Mode::Inline;
  if (mode == Mode::CompareCycles) mode = gate.startCycle(detail::wallNs()) ? Mode::Parallel : Mode::Inline;
  if (mode == Mode::Parallel || mode == Mode::TryParallel) {
    const std::uint64_t start = mode == Mode::TryParallel ? detail::wallNs() : 0;
    detail::WorkerPool::instance().parallelFor(numChunks, runChunk, threads);
    if (mode == Mode::TryParallel) gate.recordParallel(detail::wallNs() - start);
    return;
  }
  const std::uint64_t start = mode == Mode::TimeInline ? detail::threadCpuNs() : 0;
  for (std::size_t c = 0; c < numChunks; ++c) runChunk(c);
  if (mode == Mode::TimeInline) gate.recordInline(detail::threadCpuNs() - start);
}

void Engine::Impl::copyView(std::uint32_t node, unsigned replica) {
  std::uint8_t *b = base(replica);
  if (!copyChunks[node].empty()) {
    const std::uint32_t m = mirrors.madeBy(node);
    // A pipelined stage's copy may race with another stage's writes: its
    // copies are not trusted to mirror their sources, nor deferred.
    if (t_stage || !mirrors.deferred(m)) {
      detail::runCopyChunks(b, copyChunks[node]);
    } else {
      replicas[replica]->pendingCopies[m] = 1;
    }
    if (!t_stage) replicas[replica]->freshMirrors[m].store(true, std::memory_order_relaxed);
    return;
  }
  const auto &s = views[d->nodes[node].view0], &t = views[d->nodes[node].view1];
  if (s.contiguous && t.contiguous) {
    if (s.bytes) std::memmove(b + t.offset, b + s.offset, s.bytes);
    return;
  }
  // Stage through a buffer so overlapping source and destination stay correct.
  thread_local std::vector<std::uint8_t> staging;
  staging.resize(s.bytes);
  gather(s, b, staging.data());
  scatter(t, b, staging.data());
}

std::uint64_t Engine::Impl::streamToTensor(const ExeNode &n, unsigned replica) {
  hostSync(replica);
  auto &conn = replicas[replica]->streams[n.index];
  std::uint64_t cost = n.cycles;
  const auto &rv = views[n.view1];
  const auto &info = d->streams[n.index];
  std::uint8_t *b = base(replica);
  // Bytes the host already holds (a prefetch, the stream's own buffer) are
  // scattered straight onto the view; only a callback filling a scattered
  // view needs a buffer of its own first.
  const auto lock = conn.kind == StreamConn::Kind::Callback ? callbackLock() : std::unique_lock<std::mutex>();
  switch (conn.kind) {
    case StreamConn::Kind::None:
      fail(ErrorKind::FailedPrecondition, "stream '{}' (replica {}) is not connected", info.handle, replica);
    case StreamConn::Kind::Callback:
      if (conn.prefetched) {
        scatter(rv, b, conn.prefetchBuffer.get());
        conn.prefetched = false;
        if (ioTiles > 0) cost = prefetchedCost(conn, static_cast<std::uint32_t>(&n - d->nodes.data()), replica);
      } else if (rv.contiguous) {
        conn.callback->fetch(b + rv.offset);
      } else {
        conn.staging.resize(rv.bytes);
        conn.callback->fetch(conn.staging.data());
        scatter(rv, b, conn.staging.data());
      }
      break;
    case StreamConn::Kind::Circular:
      if (conn.cursor + rv.bytes > conn.end) conn.cursor = conn.begin;
      scatter(rv, b, conn.cursor);
      conn.cursor += rv.bytes;
      break;
    case StreamConn::Kind::Fixed:
      scatter(rv, b, conn.begin);
      break;
  }
  if (conn.kind == StreamConn::Kind::Callback) {
    conn.callback->complete();
    if (prefetch && !stopRequested.load(std::memory_order_acquire)) {
      conn.prefetched = conn.callback->prefetch(conn.prefetchBuffer.get()) == StreamCallback::Result::Success;
      // The next transfer leaves the host when this one is done, and takes
      // what a stream copy takes (host sync and link) to land on the IO tiles.
      if (conn.prefetched) conn.prefetchReadyAt = now(*replicas[replica]) + cost + n.cycles;
    }
  }
  return cost;
}

std::uint64_t Engine::Impl::prefetchedCost(const StreamConn &conn, std::uint32_t node, unsigned replica) const {
  // The compute tiles wait only for what of the transfer is still on its
  // way, then take it from the IO tiles over the exchange.
  const std::uint64_t at = now(*replicas[replica]);
  const std::uint64_t wait = conn.prefetchReadyAt > at ? conn.prefetchReadyAt - at : 0;
  return wait + ioExchangeCycles[node];
}

std::uint64_t Engine::Impl::tensorToStream(const ExeNode &n, unsigned replica) {
  hostSync(replica);
  auto &conn = replicas[replica]->streams[n.index];
  const auto &rv = views[n.view0];
  const auto &info = d->streams[n.index];
  if (conn.kind == StreamConn::Kind::None) {
    fail(ErrorKind::FailedPrecondition, "stream '{}' (replica {}) is not connected", info.handle, replica);
  }
  std::uint8_t *b = base(replica);
  std::uint8_t *src = b + rv.offset;
  if (!rv.contiguous) {
    conn.staging.resize(rv.bytes);
    gather(rv, b, conn.staging.data());
    src = conn.staging.data();
  }
  // The host holds the bytes once the transfer is done, so its cycles count
  // before the host hears of them: a client that reads the device's cycles
  // after its request completed sees that request's transfer in them.
  addCycles(*replicas[replica], n.cycles);
  const auto lock = conn.kind == StreamConn::Kind::Callback ? callbackLock() : std::unique_lock<std::mutex>();
  switch (conn.kind) {
    case StreamConn::Kind::None: break;  // refused above
    case StreamConn::Kind::Callback:
      conn.callback->fetch(src);
      conn.callback->complete();
      break;
    case StreamConn::Kind::Circular:
      if (conn.cursor + rv.bytes > conn.end) conn.cursor = conn.begin;
      if (rv.bytes) std::memcpy(conn.cursor, src, rv.bytes);
      conn.cursor += rv.bytes;
      break;
    case StreamConn::Kind::Fixed:
      if (rv.bytes) std::memcpy(conn.begin, src, rv.bytes);
      break;
  }
  return 0;  // counted above
}

void Engine::Impl::remoteCopy(const ExeNode &n, unsigned replica) {
  hostSync(replica);
  const auto &rb = d->remoteBuffers[n.index];
  std::uint64_t slot = n.count;
  if (n.view1 != detail::kNoView) {
    const double s = readScalar(n.view1, replica);
    if (s < 0 || s >= static_cast<double>(rb.repeats)) {
      fail(ErrorKind::InvalidArgument, "remote buffer '{}': slot {} out of range ({} slots)", rb.handle, s, rb.repeats);
    }
    slot = static_cast<std::uint64_t>(s);
  }
  std::uint8_t *mem = replicas[replica]->remote[n.index].data() + slot * rb.slotBytes();
  if (n.kind == NodeKind::RemoteToTensor) scatter(views[n.view0], base(replica), mem);
  else gather(views[n.view0], base(replica), mem);
}

void Engine::Impl::printTensor(const ExeNode &n, unsigned replica) {
  hostSync(replica);
  const auto &v = d->views[n.view0];
  std::vector<std::uint8_t> bytes(views[n.view0].bytes);
  gather(views[n.view0], base(replica), bytes.data());
  std::string text = n.name + ": [";
  detail::dispatchType(v.type, [&](auto tag) {
    constexpr Type T = decltype(tag)::value;
    for (std::uint64_t i = 0; i < v.numElements; ++i) {
      detail::Storage<T> x;
      std::memcpy(&x, bytes.data() + i * sizeof(x), sizeof(x));
      text += fmt::format("{}{}", i ? " " : "", detail::toDouble<T>(x));
    }
  });
  text += "]\n";
  std::ostream &out = printTensorStream ? *printTensorStream : printStream ? *printStream : std::cerr;
  out << text;
}

}  // namespace hwsim
