// Engine: streams (callbacks, circular and fixed buffers, prefetch), host
// reads/writes, remote buffers, simulated errors and recovery, profiling.
#include <algorithm>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "test_util.hpp"

namespace {

using hwsim::Type;
using hwsim_test::Harness;
namespace p = hwsim::program;

// add_one over a stream: in -> x -> x+1 -> out, N floats per transfer.
struct AddOne {
  explicit AddOne(std::size_t size, unsigned repeats = 1) : n(size) {
    auto x = h.graph.addVariable(Type::F32, {n}, "x");
    h.graph.setTileMapping(x, 1);
    auto one = h.graph.addConstant(Type::F32, {1}, 1.0, "one");
    h.graph.setTileMapping(one, 1);
    auto in = h.graph.addHostToDeviceFIFO("in", Type::F32, n);
    auto out = h.graph.addDeviceToHostFIFO("out", Type::F32, n);
    auto cs = h.graph.addComputeSet("add_one");
    h.graph.addVertex(cs, "Add", {{"in0", x}, {"in1", one}, {"out", x}}, 1);
    h.build({p::Repeat(repeats, p::Sequence{p::Copy(in, x), p::Execute(cs), p::Copy(x, out)})});
  }
  std::size_t n;
  Harness h;
};

TEST(Streams, CallbacksRunInProgramOrderWithTheRightBytes) {
  AddOne m(5, 3);
  std::vector<std::string> calls;
  int batch = 0;
  std::vector<float> results;
  m.h.engine->connectStreamToCallback("in", [&](void *p) {
    calls.push_back("in");
    auto *f = static_cast<float *>(p);
    for (std::size_t i = 0; i < 5; ++i) f[i] = static_cast<float>(batch * 10 + static_cast<int>(i));
    ++batch;
  });
  m.h.engine->connectStreamToCallback("out", [&](void *p) {
    calls.push_back("out");
    auto *f = static_cast<float *>(p);
    results.insert(results.end(), f, f + 5);
  });
  EXPECT_EQ(m.h.engine->run(0), hwsim::RunStatus::Completed);
  EXPECT_EQ(calls, (std::vector<std::string>{"in", "out", "in", "out", "in", "out"}));
  std::vector<float> want;
  for (int b = 0; b < 3; ++b)
    for (int i = 0; i < 5; ++i) want.push_back(static_cast<float>(b * 10 + i + 1));
  EXPECT_EQ(results, want);
  EXPECT_EQ(m.h.engine->listStreams(), (std::vector<std::string>{"in+", "out-"}));
}

// A client that reads the device's cycles once its output has arrived (as a
// runner's caller does when its request completes) sees the whole run, the
// output transfer included, whichever thread it is on.
TEST(Streams, TheCyclesSeenWhenAnOutputArrivesIncludeItsTransfer) {
  AddOne m(5);
  m.h.engine->connectStreamToCallback("in", [](void *p) { std::fill_n(static_cast<float *>(p), 5, 0.0f); });
  std::uint64_t seen = 0;
  m.h.engine->connectStreamToCallback("out", [&](void *) { seen = m.h.engine->deviceCycles(0); });
  const std::uint64_t loaded = m.h.engine->deviceCycles(0);
  EXPECT_EQ(m.h.engine->run(0), hwsim::RunStatus::Completed);
  EXPECT_GT(seen, loaded);
  EXPECT_EQ(seen, m.h.engine->deviceCycles(0));
}

TEST(Streams, CircularAndFixedBuffers) {
  AddOne m(2, 3);
  std::vector<float> in = {1, 2, 3, 4};  // two transfers, then wraps
  std::vector<float> out(6, 0);
  m.h.engine->connectStream("in", in.data(), in.data() + in.size());
  m.h.engine->connectStream("out", out.data(), out.data() + out.size());
  m.h.engine->run(0);
  EXPECT_EQ(out, (std::vector<float>{2, 3, 4, 5, 2, 3}));
  float fixedOut[2] = {0, 0};
  m.h.engine->connectStream("out", fixedOut);
  m.h.engine->run(0);
  // The input cursor persists across runs: {3,4}, wrap to {1,2}, then {3,4}.
  EXPECT_EQ(fixedOut[0], 4);
  EXPECT_EQ(fixedOut[1], 5);
}

class CountingCallback : public hwsim::StreamCallback {
 public:
  Result prefetch(void *p) override {
    ++prefetches;
    if (!ready) return Result::NotAvailable;
    fill(p);
    return Result::Success;
  }
  void fetch(void *p) override {
    ++fetches;
    fill(p);
  }
  void complete() override { ++completes; }
  void invalidatePrefetched() override { ++invalidations; }
  void fill(void *p) {
    auto *f = static_cast<float *>(p);
    f[0] = f[1] = static_cast<float>(next++);
  }
  bool ready = true;
  int next = 0, prefetches = 0, fetches = 0, completes = 0, invalidations = 0;
};

TEST(Streams, PrefetchSuppliesTheNextTransfer) {
  AddOne m(2, 4);
  auto cb = std::make_unique<CountingCallback>();
  auto *raw = cb.get();
  m.h.engine->connectStreamToCallback("in", 0, std::move(cb));
  std::vector<float> out(8);
  m.h.engine->connectStream("out", out.data(), out.data() + out.size());
  m.h.engine->run(0);
  EXPECT_EQ(raw->fetches, 1);  // only the first transfer is fetched; the rest were prefetched
  EXPECT_EQ(raw->prefetches, 4);
  EXPECT_EQ(raw->completes, 4);
  EXPECT_EQ(out, (std::vector<float>{1, 1, 2, 2, 3, 3, 4, 4}));
  m.h.engine->load(m.h.device);  // the 5th value was prefetched and is now dropped
  EXPECT_EQ(raw->invalidations, 1);
}

// A stream into a tensor made of two variables, the second first (its
// bytes scattered over the arena, out of order), then back out: each kind of
// source lands every element where it belongs.
struct ScatteredStream {
  explicit ScatteredStream(unsigned repeats, const hwsim::OptionFlags &options = {}) {
    auto a = h.graph.addVariable(Type::F32, {3}, "a");
    auto b = h.graph.addVariable(Type::F32, {2}, "b");
    h.graph.setTileMapping(a, 1);
    h.graph.setTileMapping(b, 2);
    auto in = h.graph.addHostToDeviceFIFO("in", Type::F32, 5);
    auto out = h.graph.addDeviceToHostFIFO("out", Type::F32, 5);
    const auto scattered = hwsim::concat({b, a});
    h.build({p::Repeat(repeats, p::Sequence{p::Copy(in, scattered), p::Copy(scattered, out)})}, options);
  }
  Harness h;
};

class FiveFloats : public hwsim::StreamCallback {
 public:
  Result prefetch(void *p) override {
    fill(p);
    return Result::Success;
  }
  void fetch(void *p) override { fill(p); }
  void complete() override {}
  void fill(void *p) {
    auto *f = static_cast<float *>(p);
    for (int i = 0; i < 5; ++i) f[i] = static_cast<float>(next * 10 + i);
    ++next;
  }
  int next = 0;
};

TEST(Streams, EverySourceLandsOnAScatteredTensor) {
  const std::vector<float> transfers = {0, 1, 2, 3, 4, 10, 11, 12, 13, 14, 20, 21, 22, 23, 24};
  {
    SCOPED_TRACE("fixed buffer");
    ScatteredStream m(2);
    std::vector<float> in = {5, 6, 7, 8, 9};
    std::vector<float> out(10);
    m.h.engine->connectStream("in", in.data());
    m.h.engine->connectStream("out", out.data(), out.data() + out.size());
    m.h.engine->run(0);
    EXPECT_EQ(out, (std::vector<float>{5, 6, 7, 8, 9, 5, 6, 7, 8, 9}));
  }
  {
    SCOPED_TRACE("circular buffer, wrapping");
    ScatteredStream m(3);
    std::vector<float> in(transfers.begin(), transfers.begin() + 10);
    std::vector<float> out(15);
    m.h.engine->connectStream("in", in.data(), in.data() + in.size());
    m.h.engine->connectStream("out", out.data(), out.data() + out.size());
    m.h.engine->run(0);
    EXPECT_EQ(out, (std::vector<float>{0, 1, 2, 3, 4, 10, 11, 12, 13, 14, 0, 1, 2, 3, 4}));
  }
  for (const bool prefetch : {false, true}) {
    SCOPED_TRACE(prefetch ? "callback, prefetched" : "callback, fetched");
    ScatteredStream m(3, {{"exchange.enablePrefetch", prefetch ? "true" : "false"}});
    m.h.engine->connectStreamToCallback("in", 0, std::make_unique<FiveFloats>());
    std::vector<float> out(15);
    m.h.engine->connectStream("out", out.data(), out.data() + out.size());
    m.h.engine->run(0);
    EXPECT_EQ(out, transfers);
  }
}

TEST(Streams, UnconnectedStreamIsAFailedPrecondition) {
  AddOne m(2);
  try {
    m.h.engine->run(0);
    FAIL();
  } catch (const hwsim::Error &e) {
    EXPECT_EQ(e.kind(), hwsim::ErrorKind::FailedPrecondition);
    EXPECT_NE(std::string(e.what()).find("stream 'in' (replica 0) is not connected"), std::string::npos);
  }
  EXPECT_THROW(m.h.engine->connectStreamToCallback("nope", [](void *) {}), hwsim::Error);
}

TEST(HostAccess, SizeMismatchAndUnknownHandle) {
  Harness h;
  h.input("x", Type::F32, {4});
  h.build({});
  std::vector<float> three(3);
  try {
    h.engine->writeTensor("x", three.data(), three.data() + 3);
    FAIL();
  } catch (const hwsim::Error &e) {
    EXPECT_EQ(e.kind(), hwsim::ErrorKind::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("expected 16 bytes, got 12"), std::string::npos) << e.what();
  }
  EXPECT_THROW(h.engine->readTensor("x", three.data(), three.data() + 3), hwsim::Error);  // x is write-only
  EXPECT_EQ(h.exe.hostWrites().size(), 1u);
  EXPECT_EQ(h.exe.hostWrites()[0].numBytes, 16u);
}

TEST(HostAccess, RunBeforeLoadIsAFailedPrecondition) {
  hwsim::Graph g(hwsim::Target::smallIpuModel());
  hwsim::Engine e(g, {p::Sequence()});
  try {
    e.run(0);
    FAIL();
  } catch (const hwsim::Error &err) {
    EXPECT_EQ(err.kind(), hwsim::ErrorKind::FailedPrecondition);
  }
  auto dev = hwsim::DeviceManager::createSmallIpuModelDevice();
  EXPECT_THROW(e.load(dev), hwsim::Error);  // not attached
  ASSERT_TRUE(dev.attach());
  e.load(dev);
  EXPECT_EQ(e.run(0), hwsim::RunStatus::Completed);
  EXPECT_THROW(e.run(1), hwsim::Error);
}

TEST(RemoteBuffers, SlotsByIndexAndByTensor) {
  Harness h;
  auto w = h.output("w", Type::F32, {3});
  auto idx = h.input("idx", Type::U32, {1});
  auto rb = h.graph.addRemoteBuffer("weights", Type::F32, 3, 4);
  h.build({p::Copy(rb, w, 2), p::Copy(rb, w, idx)});
  for (std::uint64_t s = 0; s < 4; ++s) {
    std::vector<float> v = {float(s), float(s) + 0.5f, float(s) * 2};
    h.engine->copyToRemoteBuffer(v.data(), "weights", s);
  }
  h.engine->run(0);
  EXPECT_EQ(h.read<float>("w", 3), (std::vector<float>{2, 2.5f, 4}));
  h.write("idx", std::vector<std::uint32_t>{3});
  h.engine->run(1);
  EXPECT_EQ(h.read<float>("w", 3), (std::vector<float>{3, 3.5f, 6}));
  std::vector<float> back(3);
  h.engine->copyFromRemoteBuffer("weights", back.data(), 1);
  EXPECT_EQ(back, (std::vector<float>{1, 1.5f, 2}));
  EXPECT_THROW(h.engine->copyFromRemoteBuffer("weights", back.data(), 4), hwsim::Error);
  h.write("idx", std::vector<std::uint32_t>{9});
  EXPECT_THROW(h.engine->run(1), hwsim::Error);
  ASSERT_EQ(h.exe.remoteBuffers().size(), 1u);
  EXPECT_EQ(h.exe.remoteBuffers()[0].repeats, 4u);
}

TEST(RemoteBuffers, DeviceWritesThenHostReads) {
  Harness h;
  auto x = h.input("x", Type::S32, {2});
  auto rb = h.graph.addRemoteBuffer("store", Type::S32, 2, 2);
  h.build({p::Copy(x, rb, 1)});
  h.write("x", std::vector<std::int32_t>{7, 8});
  h.engine->run(0);
  std::vector<std::int32_t> back(2);
  h.engine->copyFromRemoteBuffer("store", back.data(), 1);
  EXPECT_EQ(back, (std::vector<std::int32_t>{7, 8}));
}

TEST(SimulatedErrors, RaiseWithRecoveryActionThenRunAgainAfterResetAndReload) {
  Harness h;
  auto x = h.input("x", Type::F32, {4}, 2);
  auto y = h.output("y", Type::F32, {4}, 2);
  auto cs = h.graph.addComputeSet("relu_cs");
  h.graph.addVertex(cs, "Relu", {{"in", x}, {"out", y}}, 2);
  h.build({p::Execute(cs)});
  const auto locations = h.engine->getSimulatedErrorLocations("Relu");
  ASSERT_EQ(locations.size(), 1u);
  EXPECT_EQ(locations[0].tile, 2u);
  EXPECT_EQ(h.engine->getSimulatedErrorLocations("relu_cs"), locations);
  h.engine->insertSimulatedError(hwsim::DeviceErrorCode::TileException, locations[0]);
  h.write("x", std::vector<float>{-1, 2, -3, 4});
  try {
    h.engine->run(0);
    FAIL() << "expected a simulated error";
  } catch (const hwsim::RuntimeError &e) {
    EXPECT_EQ(e.kind(), hwsim::ErrorKind::DeviceError);
    EXPECT_TRUE(e.isSimulated());
    EXPECT_EQ(e.code(), hwsim::DeviceErrorCode::TileException);
    EXPECT_EQ(e.recoveryAction(), hwsim::RecoveryAction::IpuReset);
    EXPECT_EQ(e.location(), locations[0]);
    EXPECT_NE(std::string(e.what()).find("IPU_RESET"), std::string::npos);
  }
  EXPECT_EQ(h.device.pendingRecovery(), hwsim::RecoveryAction::IpuReset);
  EXPECT_THROW(h.engine->run(0), hwsim::Error);       // faulted until reloaded
  EXPECT_THROW(h.engine->load(h.device), hwsim::Error);  // device needs its reset first
  h.device.reset();
  h.engine->clearSimulatedErrors();
  h.engine->load(h.device);
  h.write("x", std::vector<float>{-1, 2, -3, 4});
  EXPECT_EQ(h.engine->run(0), hwsim::RunStatus::Completed);
  EXPECT_EQ(h.read<float>("y", 4), (std::vector<float>{0, 2, 0, 4}));
  EXPECT_THROW(h.engine->eraseSimulatedError(locations[0]), hwsim::Error);
}

TEST(Profiling, SummaryIntervalsAndTrace) {
  AddOne m(64, 2);
  std::vector<float> buf(64);
  m.h.engine->connectStream("in", buf.data(), buf.data() + buf.size());
  m.h.engine->connectStream("out", buf.data(), buf.data() + buf.size());
  std::ostringstream none;
  EXPECT_THROW(m.h.engine->reportIntervals(none), hwsim::Error);
  m.h.engine->enableExecutionProfiling();
  const auto t0 = m.h.engine->getTimeStamp();
  m.h.engine->run(0);
  const auto t1 = m.h.engine->getTimeStamp();
  EXPECT_GT(t1.deviceCycles, t0.deviceCycles);
  EXPECT_NE(hwsim::Engine::reportTiming(t0, t1).find("cycles"), std::string::npos);

  std::ostringstream csv;
  m.h.engine->reportIntervals(csv);
  std::istringstream lines(csv.str());
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line, "begin,end,compute_tiles,exchange_tiles,sync_tiles");
  int rows = 0;
  std::uint64_t lastEnd = 0;
  while (std::getline(lines, line)) {
    std::uint64_t b = 0, e = 0;
    ASSERT_EQ(std::sscanf(line.c_str(), "%lu,%lu", &b, &e), 2);
    EXPECT_GE(b, lastEnd);
    EXPECT_GT(e, b);
    lastEnd = e;
    ++rows;
  }
  EXPECT_EQ(rows, 6);  // 2 x (stream in, execute, stream out)

  std::ostringstream trace;
  m.h.engine->writeTrace(trace);
  const auto j = nlohmann::json::parse(trace.str());
  // Perfetto reads integer thread ids, one thread per phase, named by
  // thread_name metadata events.
  int complete = 0;
  std::map<int, std::string> threadNames;
  std::map<std::string, int> eventsByPhase;
  for (const auto &ev : j["traceEvents"]) {
    if (ev["ph"] == "M" && ev["name"] == "thread_name") threadNames[ev["tid"].get<int>()] = ev["args"]["name"];
    if (ev["ph"] != "X") continue;
    ++complete;
    ASSERT_TRUE(ev["tid"].is_number_integer()) << ev.dump();
    ++eventsByPhase[threadNames.at(ev["tid"].get<int>())];
    EXPECT_EQ(ev["cat"], threadNames.at(ev["tid"].get<int>()));
  }
  EXPECT_EQ(complete, 6);
  EXPECT_EQ(threadNames, (std::map<int, std::string>{{1, "compute"}, {2, "exchange"}, {3, "sync"}, {4, "host"},
                                                      {5, "control"}}));
  EXPECT_EQ(eventsByPhase, (std::map<std::string, int>{{"compute", 2}, {"host", 4}}));

  std::ostringstream summary;
  m.h.engine->printProfileSummary(summary);
  EXPECT_NE(summary.str().find("add_one"), std::string::npos) << summary.str();
  EXPECT_NE(summary.str().find("busiest tile 1"), std::string::npos) << summary.str();
  EXPECT_NE(summary.str().find("by phase: compute "), std::string::npos) << summary.str();
  EXPECT_NE(summary.str().find(", exchange 0 (0.0%), sync 0 (0.0%), host "), std::string::npos) << summary.str();
}

TEST(PrintTensor, WritesTitleAndValues) {
  Harness h;
  auto x = h.input("x", Type::S32, {3});
  h.build({p::PrintTensor("x is", x)});
  std::ostringstream out;
  h.engine->setPrintTensorStream(out);
  h.write("x", std::vector<std::int32_t>{1, -2, 3});
  h.engine->run(0);
  EXPECT_EQ(out.str(), "x is: [1 -2 3]\n");
}

TEST(Engine, ExecutableDescribesStreamsAndPrograms) {
  AddOne m(3);
  const auto &s = m.h.exe.streams();
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].handle, "in");
  EXPECT_EQ(s[0].direction, hwsim::StreamDirection::HostToDevice);
  EXPECT_EQ(s[0].numBytes(), 12u);
  EXPECT_EQ(s[1].direction, hwsim::StreamDirection::DeviceToHost);
  EXPECT_EQ(m.h.exe.numPrograms(), 1u);
  EXPECT_EQ(m.h.exe.numIpus(), 1u);
  EXPECT_FALSE(m.h.exe.programSteps().empty());
}

}  // namespace
