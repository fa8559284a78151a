// Queues of the layer: SpscRingBuffer, RingMemoryPool and allocateQueueStorage
// (header-only; the library no longer has its own pool), and a session's
// QueueManager fed through enqueueLock/enqueueComplete (the ring's own
// slots, filled in place) from pool memory by a producer thread while this
// thread runs the programs, with a full ring and misuse.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "compat_test_util.hpp"
#include "model_runtime/ModelRuntime.hpp"

using namespace model_runtime;

namespace {

class CompatEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { compat_test::usePrivateSystem(); }
};
const ::testing::Environment *const kEnvironment = ::testing::AddGlobalTestEnvironment(new CompatEnvironment);

void expectInvalid(int64_t blob_size, int64_t num_blobs, const std::string &fragment) {
  try {
    RingMemoryPool pool(blob_size, num_blobs);
    ADD_FAILURE() << "accepted blob_size " << blob_size << " num_blobs " << num_blobs;
  } catch (const std::invalid_argument &e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(CompatRingMemoryPool, CyclesOverDistinctAlignedNonOverlappingBlobs) {
  constexpr int64_t kBlobSize = 100, kBlobs = 3;
  RingMemoryPool pool(kBlobSize, kBlobs);
  const IMemoryPool &generic = pool;
  EXPECT_EQ(generic.blobSize(), kBlobSize);
  EXPECT_EQ(pool.numBlobs(), kBlobs);
  std::set<std::uintptr_t> blobs;
  std::uintptr_t first = 0;
  for (int64_t i = 0; i < kBlobs; ++i) {
    auto *blob = static_cast<unsigned char *>(pool.getMemoryBlob());
    if (i == 0) first = reinterpret_cast<std::uintptr_t>(blob);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(blob) % RingMemoryPool::kBlobAlignment, 0u);
    std::memset(blob, int(i), kBlobSize);  // ASan: each blob holds blob_size bytes
    blobs.insert(reinterpret_cast<std::uintptr_t>(blob));
  }
  EXPECT_EQ(blobs.size(), std::size_t(kBlobs));
  for (auto it = std::next(blobs.begin()); it != blobs.end(); ++it) EXPECT_GE(*it - *std::prev(it), 128u);
  // Wraps around: the first blob again, still holding what was written.
  auto *again = static_cast<unsigned char *>(pool.getMemoryBlob());
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(again), first);
  EXPECT_EQ(again[kBlobSize - 1], 0);
  // A move keeps the blobs and the position.
  RingMemoryPool moved(std::move(pool));
  EXPECT_EQ(moved.numBlobs(), kBlobs);
  EXPECT_EQ(static_cast<unsigned char *>(moved.getMemoryBlob())[0], 1);
}

TEST(CompatRingMemoryPool, RefusesBadSizesByValue) {
  expectInvalid(0, 1, "blob_size 0");
  expectInvalid(8, -2, "num_blobs -2");
  expectInvalid(INT64_MAX, 4, "do not fit");
}

TEST(CompatQueues, LockedEntriesFromPoolMemoryRunAddOne) {
  auto model = popef::createModel({compat_test::modelPath("add_one")});
  Session session(std::move(model), SessionConfig{LaunchPolicy::Immediate});
  QueueManager *manager = session.createQueueManager();
  InputQueue &in = manager->inputQueue("x");
  OutputQueue &out = manager->outputQueue("y");
  const int64_t bytes = int64_t(compat_test::kAddOneN * sizeof(float));
  RingMemoryPool inputs = allocateQueueStorage(in, 2);
  EXPECT_EQ(inputs.blobSize(), bytes);
  EXPECT_EQ(inputs.numBlobs(), in.numBuffers() + 2);
  EXPECT_THROW(allocateQueueStorage(out, -1), std::invalid_argument);

  // A second lock returns the same entry.
  EXPECT_EQ(out.enqueueLock(), out.enqueueLock());
  out.enqueueLock()->data_size = 0;  // leave it locked but unused: the producer relocks it

  // One output buffer per round, kept until its write completes.
  constexpr int kRounds = 12;
  std::vector<std::vector<float>> xs(kRounds), ys(kRounds, std::vector<float>(compat_test::kAddOneN));
  std::atomic<int> started{0}, read{0}, written{0};
  std::thread producer([&] {
    for (int r = 0; r < kRounds; ++r) {
      xs[r] = compat_test::randomFloats(compat_test::kAddOneN, unsigned(r));
      // Pool blobs are reused numBlobs() entries later: one blob per ring
      // entry plus two, so a blob is consumed before it is refilled.
      auto *blob = static_cast<uint8_t *>(inputs.getMemoryBlob());
      std::memcpy(blob, xs[r].data(), std::size_t(bytes));
      InputData *entry = in.enqueueLock();
      entry->data = blob;
      entry->data_size = bytes;
      entry->readStartCallback = [&started] { ++started; };
      entry->readCompleteCallback = [&read] { ++read; };
      in.enqueueComplete();
      OutputData *slot = out.enqueueLock();
      slot->data = reinterpret_cast<uint8_t *>(ys[r].data());
      slot->data_size = bytes;
      slot->writeCompleteCallback = [&written] { ++written; };
      out.enqueueComplete();
    }
  });
  for (int r = 0; r < kRounds; ++r) session.runMainPrograms();
  producer.join();
  EXPECT_EQ(written.load(), kRounds);
  EXPECT_GE(started.load(), kRounds);
  EXPECT_GE(read.load(), kRounds);
  for (int r = 0; r < kRounds; ++r) {
    for (std::size_t i = 0; i < compat_test::kAddOneN; ++i) ASSERT_EQ(ys[r][i], xs[r][i] + 1.0f) << r << "," << i;
  }
  manager->flushAll();
  manager->disconnectAll();
  manager->resetAll();
}

namespace {
// Runs `call`, expecting mrt::Error with `code` and `fragment` in its message.
template <class Call>
void expectError(Call call, mrt_status code, const std::string &fragment) {
  try {
    call();
    ADD_FAILURE() << "no error; expected " << mrt_status_string(code);
  } catch (const mrt::Error &e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}
}  // namespace

// enqueueLock hands out the ring's own slots in turn and blocks while the
// ring is full; misuse throws mrt::Error with the C API's code and reason.
TEST(CompatQueues, EnqueueLockHandsOutRingSlotsBlocksWhenFullAndRefusesMisuse) {
  Session session(popef::createModel({compat_test::modelPath("add_one")}), SessionConfig{LaunchPolicy::Immediate});
  QueueManager *manager = session.createQueueManager();
  InputQueue &in = manager->inputQueue("x");
  OutputQueue &out = manager->outputQueue("y");
  const int64_t bytes = int64_t(compat_test::kAddOneN * sizeof(float));
  const std::size_t ring = std::size_t(in.numBuffers());
  ASSERT_GE(ring, 2u);
  expectError([&] { in.enqueueComplete(); }, MRT_FAILED_PRECONDITION, "input queue 'x': no entry is locked");

  // A bad size keeps the entry locked; enqueue and flush meanwhile are refused.
  std::vector<std::vector<float>> xs;
  for (std::size_t r = 0; r <= ring; ++r) xs.push_back(compat_test::randomFloats(compat_test::kAddOneN, unsigned(r)));
  InputData *first = in.enqueueLock();
  first->data = reinterpret_cast<const uint8_t *>(xs[0].data());
  first->data_size = 3;
  expectError([&] { in.enqueueComplete(); }, MRT_INVALID_ARGUMENT, "3 bytes is not a positive multiple");
  EXPECT_EQ(in.enqueueLock(), first);
  EXPECT_EQ(first->data_size, 3);
  expectError([&] { in.enqueue(xs[0].data(), bytes); }, MRT_FAILED_PRECONDITION, "an entry is locked");
  expectError([&] { manager->flushAll(); }, MRT_FAILED_PRECONDITION, "an entry is locked");
  std::atomic<int> read{0};
  first->data_size = bytes;
  first->readCompleteCallback = [&read] { ++read; };
  in.enqueueComplete();

  // The rest of the ring: each lock a fresh entry of its own slot.
  std::set<InputData *> entries{first};
  for (std::size_t r = 1; r < ring; ++r) {
    InputData *entry = in.enqueueLock();
    EXPECT_EQ(entry->data, nullptr);
    EXPECT_EQ(entry->data_size, 0);
    entry->data = reinterpret_cast<const uint8_t *>(xs[r].data());
    entry->data_size = bytes;
    in.enqueueComplete();
    entries.insert(entry);
  }
  EXPECT_EQ(entries.size(), ring);

  // Full: the next lock waits for the device to free the first slot.
  std::atomic<InputData *> wrapped{nullptr};
  std::thread producer([&] { wrapped = in.enqueueLock(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(wrapped.load(), nullptr);
  std::vector<float> y(compat_test::kAddOneN);
  out.enqueue(y.data(), bytes);
  session.runMainPrograms();
  producer.join();
  EXPECT_EQ(read.load(), 1);
  for (std::size_t i = 0; i < compat_test::kAddOneN; ++i) ASSERT_EQ(y[i], xs[0][i] + 1.0f) << i;
  ASSERT_EQ(wrapped.load(), first);  // the first slot again, emptied
  EXPECT_EQ(first->data, nullptr);
  EXPECT_FALSE(first->readCompleteCallback);
  first->data = reinterpret_cast<const uint8_t *>(xs[ring].data());
  first->data_size = bytes;
  in.enqueueComplete();
  for (std::size_t r = 1; r <= ring; ++r) {
    OutputData *slot = out.enqueueLock();
    slot->data = reinterpret_cast<uint8_t *>(y.data());
    slot->data_size = bytes;
    out.enqueueComplete();
    session.runMainPrograms();
    for (std::size_t i = 0; i < compat_test::kAddOneN; ++i) ASSERT_EQ(y[i], xs[r][i] + 1.0f) << r << "," << i;
  }

  // Disconnected: locking throws MRT_CANCELLED; a reset makes it usable.
  manager->disconnectAll();
  expectError([&] { in.enqueueLock(); }, MRT_CANCELLED, "input queue 'x' is disconnected");
  expectError([&] { out.enqueueLock(); }, MRT_CANCELLED, "output queue 'y' is disconnected");
  manager->resetAll();
  InputData *again = in.enqueueLock();
  again->data = reinterpret_cast<const uint8_t *>(xs[1].data());
  again->data_size = bytes;
  in.enqueueComplete();
  out.enqueue(y.data(), bytes);
  session.runMainPrograms();
  for (std::size_t i = 0; i < compat_test::kAddOneN; ++i) ASSERT_EQ(y[i], xs[1][i] + 1.0f) << i;
}

TEST(CompatQueues, RingSizeMultipliersSizeTheRings) {
  auto model = popef::createModel({compat_test::modelPath("mlp")});
  // The factories: Main anchors get the selected value, Load ones the other.
  const auto byMain = ring_size_multiplier_factory::ringSizeMultForMainProgs(*model, 5, 1);
  const auto byLoad = ring_size_multiplier_factory::ringSizeMultForProgs(model->metadata.programFlow().load(), 4);
  for (const auto &anchor : model->metadata.anchors()) {
    const bool weight = anchor.name() != "image" && anchor.name() != "probs";
    EXPECT_EQ(byMain(anchor), weight ? 1 : 5) << anchor.name();
    EXPECT_EQ(byLoad(anchor), weight ? 4 : 1) << anchor.name();
  }

  std::shared_ptr<popef::Model> addOne = popef::createModel({compat_test::modelPath("add_one")});
  Session session(addOne, SessionConfig{LaunchPolicy::Immediate});
  const int64_t defaultBuffers = session.createQueueManager()->inputQueue("x").numBuffers();
  QueueManager *manager =
      session.createQueueManager(ring_size_multiplier_factory::ringSizeMultForMainProgs(*addOne, defaultBuffers + 3));
  EXPECT_EQ(manager->inputQueue("x").numBuffers(), defaultBuffers + 3);  // batch 1
  EXPECT_EQ(manager->outputQueue("y").numBuffers(), defaultBuffers + 3);
  EXPECT_THROW(session.createQueueManager(RingSizeMultiplierProdType()), std::invalid_argument);
  try {
    session.createQueueManager([](const popef::Anchor &anchor) -> int64_t { return anchor.name() == "y" ? 0 : 2; });
    ADD_FAILURE() << "a multiplier of 0 was accepted";
  } catch (const mrt::Error &e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("('y'): the multiplier must be at least 1, got 0"), std::string::npos) << message;
  }
  // The manager of before stays usable.
  EXPECT_EQ(manager->inputQueue("x").numBuffers(), defaultBuffers + 3);
  // Every anchor its own multiplier: x and y, both of the Main program, differ.
  QueueManager *perAnchor =
      session.createQueueManager([](const popef::Anchor &anchor) -> int64_t { return anchor.name() == "x" ? 2 : 3; });
  EXPECT_EQ(perAnchor->inputQueue("x").numBuffers(), 2);
  EXPECT_EQ(perAnchor->outputQueue("y").numBuffers(), 3);
}

TEST(CompatSpscRingBuffer, LocksResetsTimeoutsAndMisuse) {
  EXPECT_THROW(SpscRingBuffer<int>(0, "empty"), std::invalid_argument);
  std::atomic<int> timeouts{0};
  SpscRingBuffer<int> rb(
      2, "rb", [&timeouts](SpscRingBuffer<int> *ring) {
        if (++timeouts == 3) ring->invalidate();  // the consumer gives up after three timeouts
      },
      std::chrono::milliseconds(2));
  EXPECT_EQ(rb.numBuffers(), 2u);
  EXPECT_EQ(rb.label(), "rb");
  EXPECT_FALSE(rb.readAvailable());
  EXPECT_THROW(rb.writeComplete(), std::logic_error);
  EXPECT_THROW(rb.readComplete(), std::logic_error);

  int *slot = rb.writeLock();
  EXPECT_EQ(rb.writeLock(), slot);  // the same buffer until writeComplete
  *slot = 7;
  rb.writeComplete();
  rb.write(8);
  EXPECT_TRUE(rb.readAvailable());
  // Several read locks, then readReset puts them back in order.
  EXPECT_EQ(rb.readLock(), 7);
  EXPECT_EQ(rb.readLock(), 8);
  EXPECT_FALSE(rb.readAvailable());
  rb.readReset();
  EXPECT_EQ(rb.readLock(), 7);
  rb.readComplete();
  EXPECT_EQ(rb.readLock(), 8);
  rb.readComplete();
  EXPECT_NE(rb.getState("state of ").find("rb: 0/2 written"), std::string::npos) << rb.getState("");

  // Nothing written: readLock calls the timeout callback until it invalidates.
  (void)rb.readLock();
  EXPECT_FALSE(rb.isValid());
  EXPECT_EQ(timeouts.load(), 3);
  EXPECT_NE(rb.getState("").find("invalidated"), std::string::npos);
  rb.reset();
  EXPECT_TRUE(rb.isValid());
  rb.write(1);
  EXPECT_EQ(rb.readLock(), 1);
}
