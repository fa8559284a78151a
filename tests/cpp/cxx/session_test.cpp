// mrt::Session and mrt::QueueManager: anchor callbacks and handlers as
// std::function (freed exactly once), exceptions from callbacks rethrown to
// the caller, unbound anchor reports, predicates in the session config, a
// session's queue manager fed by a producer thread while this thread runs
// the programs, a standalone manager driven through transfer(), stop(),
// and the two-phase enqueue (enqueueLock/enqueueComplete).
#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cxx_test_util.hpp"

namespace {

using mrt_cxx_test::boundSession;
using mrt_cxx_test::drain;
using mrt_cxx_test::expectNear;
using mrt_cxx_test::feed;
using mrt_cxx_test::kAddOneN;
using mrt_cxx_test::kClasses;
using mrt_cxx_test::kImage;
using mrt_cxx_test::LiveCounter;
using mrt_cxx_test::mlpReference;
using mrt_cxx_test::modelPath;
using mrt_cxx_test::randomFloats;

TEST(CxxSession, AnchorCallbacksRunAddOneAndAreFreedOnce) {
  std::atomic<int> live{0};
  mrt::Model model(modelPath("add_one_t4"));
  std::vector<float> x(kAddOneN), y(kAddOneN);
  int reads = 0;
  {
    mrt::Session session = boundSession(model);
    {
      LiveCounter counter(live);
      session.setCallbackForAnchor("x", [counter, &x, &reads](void *buffer, uint64_t size) {
        ++reads;
        std::memcpy(buffer, x.data(), size);
      });
    }
    session.setCallbackForAnchor("y", drain(y));
    EXPECT_EQ(live.load(), 1);
    for (unsigned run = 0; run < 20; ++run) {
      x = randomFloats(kAddOneN, run);
      session.runMainPrograms();
      for (std::size_t i = 0; i < kAddOneN; ++i) ASSERT_FLOAT_EQ(y[i], x[i] + 1.0f);
    }
    EXPECT_EQ(reads, 20);
    EXPECT_MRT_ERROR(session.setCallbackForAnchor("nope", feed(x)), MRT_NOT_FOUND, "nope");
    mrt::Session moved = std::move(session);
    EXPECT_MRT_ERROR(session.runMainPrograms(), MRT_FAILED_PRECONDITION, "mrt::Session");  // NOLINT
    // Replacing the binding frees the old callback (once the session no longer needs it).
    moved.setCallbackForAnchor("x", feed(x));
    moved.runMainPrograms();
    EXPECT_EQ(moved.model().info().executable, "add_one");
  }
  EXPECT_EQ(live.load(), 0);
}

TEST(CxxSession, RemoteBufferFromTheCallersBytes) {
  mrt::Model model(modelPath("remote_buffer_t4"));
  mrt::Session session = boundSession(model);
  std::vector<float> x = randomFloats(8, 1), y(8), w(8);
  for (std::size_t i = 0; i < 8; ++i) w[i] = 100.0f + static_cast<float>(i);
  session.setCallbackForAnchor("x", feed(x));
  session.setCallbackForAnchor("y", drain(y));
  session.setRemoteBufferData("w", w.data(), w.size() * sizeof(float));
  session.runMainPrograms();
  for (std::size_t i = 0; i < 8; ++i) EXPECT_FLOAT_EQ(y[i], x[i] + w[i]);
  EXPECT_MRT_ERROR(session.setRemoteBufferData("w", w.data(), 4), MRT_INVALID_ARGUMENT, "takes 32 bytes");
  EXPECT_MRT_ERROR(session.setRemoteBufferData("x", w.data(), 32), MRT_INVALID_ARGUMENT, "remote buffer");
}

TEST(CxxSession, ExplicitProgramsAndUnloading) {
  mrt::Model model = mrt::Model::loadNamed({modelPath("add_one_t4")}, "add_one");
  EXPECT_MRT_ERROR(mrt::Model::loadNamed({modelPath("add_one_t4")}, "mlp"), MRT_NOT_FOUND, "mlp");
  mrt::Session session = boundSession(model);
  std::vector<float> x = randomFloats(kAddOneN, 9), y(kAddOneN);
  session.setCallbackForAnchor("x", feed(x));
  session.setCallbackForAnchor("y", drain(y));
  session.runLoadPrograms();
  session.runPrograms(model.programFlow(mrt::ProgramPhase::Main));
  for (std::size_t i = 0; i < kAddOneN; ++i) EXPECT_FLOAT_EQ(y[i], x[i] + 1.0f);
  session.runSavePrograms();
  EXPECT_MRT_ERROR(session.runPrograms({12345}), MRT_NOT_FOUND, "12345");
  session.unloadFromDevice();
  EXPECT_MRT_ERROR(session.runMainPrograms(), MRT_FAILED_PRECONDITION, "");
}

TEST(CxxSession, HandlersBindFactoryCallbacksForMlp) {
  mrt::Model model(modelPath("mlp_t4"));
  mrt::Session session = boundSession(model);
  std::vector<float> image = randomFloats(kImage, 7, 0.0f, 1.0f), probs(kClasses);
  std::vector<std::string> asked;
  std::atomic<int> live{0};
  {
    LiveCounter counter(live);
    session.setUserInputHandler([counter, &asked, &image](const mrt::AnchorInfo &anchor) -> mrt::AnchorCallback {
      asked.push_back(anchor.name);
      if (anchor.name != "image") return nullptr;  // keep the weights' PopEF binding
      return feed(image);
    });
  }
  EXPECT_EQ(live.load(), 0) << "the factory is not kept after the call";
  std::sort(asked.begin(), asked.end());
  EXPECT_EQ(asked, (std::vector<std::string>{"b1", "b2", "image", "w1", "w2"}));
  auto main = mrt::AnchorPredicate::programFlowMain(model);
  session.setUserOutputHandler([&probs](const mrt::AnchorInfo &) { return drain(probs); }, &main);
  EXPECT_TRUE(session.anchorsNotConnectedToCallbacks(model.programFlow(mrt::ProgramPhase::Main)).empty());
  for (unsigned run = 0; run < 3; ++run) {
    image = randomFloats(kImage, 50 + run, 0.0f, 1.0f);
    session.runMainPrograms();
    expectNear(probs, mlpReference(model, image), 1e-5);
  }
}

TEST(CxxSession, UnboundAnchorsAreReported) {
  mrt::Model model(modelPath("add_one_t4"));
  mrt::Session session = boundSession(model);
  const auto main = model.programFlow(mrt::ProgramPhase::Main);
  const auto unbound = session.anchorsNotConnectedToCallbacks(main);
  std::vector<std::string> names;
  for (const auto &[program, anchors] : unbound) {
    for (const auto &anchor : anchors) names.push_back(anchor.name);
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"x", "y"}));
  EXPECT_MRT_ERROR(session.errorIfAnchorsAreNotConnectedToCallbacks(main), MRT_FAILED_PRECONDITION, "x");
  EXPECT_EQ(session.getUserInputAnchors().size(), 1u);
  EXPECT_EQ(session.getUserOutputAnchors().size(), 1u);
}

TEST(CxxSession, TensorDataPredicateInTheConfig) {
  mrt::Model model(modelPath("mlp_t4"));
  using D = mrt::PopefDataUsagePolicy;
  std::atomic<int> live{0};
  mrt::SessionConfig config;
  mrt::AnchorPredicate user_w1;
  {
    LiveCounter counter(live);
    user_w1 = mrt::AnchorPredicate::fromFunction([counter](const mrt::AnchorInfo &anchor) {
      return anchor.name == "w1" ? D::USE_USER_DATA : D::USE_POPEF_DATA_IF_ANY;
    });
  }
  config.pred_tensor_data = &user_w1;
  {
    mrt::Session session(model, config);
    user_w1.close();  // the session keeps its own reference
    EXPECT_EQ(live.load(), 1);
    std::vector<std::string> names;
    for (const auto &anchor : session.getUserInputAnchors()) names.push_back(anchor.name);
    std::sort(names.begin(), names.end());
    EXPECT_EQ(names, (std::vector<std::string>{"image", "w1"}));
  }
  EXPECT_EQ(live.load(), 0);
}

// An exception from an anchor callback stops the session and comes out of
// the run call unchanged; reload() makes the session usable again.
TEST(CxxSession, ExceptionsFromCallbacksAreRethrownByTheRun) {
  mrt::Model model(modelPath("add_one_t4"));
  mrt::Session session = boundSession(model);
  std::vector<float> x(kAddOneN, 1.5f), y(kAddOneN);
  session.setCallbackForAnchor("x", [](void *, uint64_t) { throw std::out_of_range("no input today"); });
  session.setCallbackForAnchor("y", drain(y));
  EXPECT_THROW(
      {
        try {
          session.runMainPrograms();
        } catch (const std::out_of_range &e) {
          EXPECT_STREQ(e.what(), "no input today");
          throw;
        }
      },
      std::out_of_range);
  EXPECT_TRUE(session.isStopped());
  EXPECT_MRT_ERROR(session.runMainPrograms(), MRT_FAILED_PRECONDITION, "");
  session.setCallbackForAnchor("x", feed(x));
  session.reload();
  session.runMainPrograms();
  EXPECT_FLOAT_EQ(y[0], 2.5f);

  // A factory that throws: the handler call rethrows it.
  EXPECT_THROW(session.setUserInputHandler([](const mrt::AnchorInfo &) -> mrt::AnchorCallback {
    throw std::logic_error("factory failed");
  }),
               std::logic_error);
}

// A session's queue manager: a producer thread enqueues inputs and output
// buffers with completion callbacks while this thread runs Main.
TEST(CxxQueues, SessionQueueManagerServesAddOne) {
  constexpr int kRequests = 100;
  mrt::Model model(modelPath("add_one_t4"));
  mrt::Session session = boundSession(model);
  mrt::QueueManagerConfig config;
  config.ring_size_multiplier = 3;
  mrt::QueueManager queues = session.createQueueManager(config);
  EXPECT_EQ(queues.inputNames(), std::vector<std::string>{"x"});
  EXPECT_EQ(queues.outputNames(), std::vector<std::string>{"y"});
  mrt::InputQueue x = queues.input("x");
  mrt::OutputQueue y = queues.outputs().at("y");
  const mrt::QueueInfo info = x.info();
  EXPECT_EQ(info.name, "x");
  EXPECT_EQ(info.size_in_bytes, int64_t(kAddOneN * sizeof(float)));
  EXPECT_EQ(info.num_buffers, 3);
  EXPECT_TRUE(info.connected);
  EXPECT_MRT_ERROR(queues.input("nope"), MRT_NOT_FOUND, "nope");

  std::vector<std::vector<float>> in(kRequests), out(kRequests, std::vector<float>(kAddOneN));
  for (int r = 0; r < kRequests; ++r) in[r] = randomFloats(kAddOneN, unsigned(r));
  std::atomic<int> live{0}, starts{0}, reads{0}, writes{0};
  std::thread producer([&] {
    for (int r = 0; r < kRequests; ++r) {
      LiveCounter counter(live);
      x.enqueue(mrt::Span<const float>(in[r]), [counter, &starts] { ++starts; }, [&reads] { ++reads; });
      y.enqueue(mrt::Span<float>(out[r]), [counter, &writes] { ++writes; });
    }
  });
  for (int r = 0; r < kRequests; ++r) session.runMainPrograms();
  producer.join();
  EXPECT_EQ(starts.load(), kRequests);
  EXPECT_EQ(reads.load(), kRequests);
  EXPECT_EQ(writes.load(), kRequests);
  // Entries are freed when their ring slot is reused, at the latest with the manager.
  EXPECT_LE(live.load(), 2 * 3);
  for (int r = 0; r < kRequests; ++r) {
    for (std::size_t i = 0; i < kAddOneN; ++i) ASSERT_FLOAT_EQ(out[r][i], in[r][i] + 1.0f);
  }
  EXPECT_MRT_ERROR(x.enqueue(in[0].data(), 3), MRT_INVALID_ARGUMENT, "");

  // The session goes first: the manager is detached, its calls fail cleanly.
  session.close();
  EXPECT_MRT_ERROR(x.enqueue(mrt::Span<const float>(in[0])), MRT_FAILED_PRECONDITION, "session was destroyed");
  EXPECT_EQ(queues.inputNames(), std::vector<std::string>{"x"});
  queues.close();
  EXPECT_EQ(live.load(), 0) << "every entry's callbacks freed exactly once";
}

// Destroying the manager first: the session's runs no longer wait for it,
// and callbacks bound afterwards feed the session again.
TEST(CxxQueues, ManagerDestroyedBeforeItsSession) {
  mrt::Model model(modelPath("add_one_t4"));
  mrt::Session session = boundSession(model);
  {
    mrt::QueueManager queues = session.createQueueManager();
    mrt::QueueManager second = session.createQueueManager();  // replaces the first, which stays valid
    EXPECT_EQ(queues.inputNames(), std::vector<std::string>{"x"});
  }
  session.runMainPrograms();  // zeros in, outputs dropped: returns without waiting
  std::vector<float> x = randomFloats(kAddOneN, 11), y(kAddOneN);
  session.setCallbackForAnchor("x", feed(x));
  session.setCallbackForAnchor("y", drain(y));
  session.runMainPrograms();
  for (std::size_t i = 0; i < kAddOneN; ++i) EXPECT_FLOAT_EQ(y[i], x[i] + 1.0f);
}

TEST(CxxQueues, StopWakesARunWaitingForInput) {
  mrt::Model model(modelPath("add_one_t4"));
  mrt::Session session = boundSession(model);
  // The timeout callback (on the thread running the programs) tells the
  // stopper that the run is blocked waiting for input.
  std::atomic<bool> waiting{false};
  mrt::QueueManagerConfig config;
  config.timeout = std::chrono::milliseconds(5);
  config.timeout_callback = [&waiting](std::string_view, mrt::TensorType, int64_t) { waiting = true; };
  mrt::QueueManager queues = session.createQueueManager(config);
  std::thread stopper([&session, &waiting] {
    while (!waiting) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    session.stop();
  });
  EXPECT_MRT_ERROR(session.runMainPrograms(), MRT_CANCELLED, "");
  stopper.join();
  EXPECT_TRUE(session.isStopped());
  EXPECT_FALSE(queues.input("x").info().connected);
  session.reload();
  EXPECT_TRUE(queues.input("x").info().connected);
}

// A standalone manager: this test plays the device with transfer(); the
// timeout callback (which flushes) is freed once, with the manager.
TEST(CxxQueues, StandaloneManagerTransfersAndTimesOut) {
  mrt::Model model(modelPath("add_one_t4"));
  std::atomic<int> live{0}, timeouts{0};
  {
    mrt::QueueManagerConfig config;
    config.timeout = std::chrono::milliseconds(20);
    mrt::QueueManager *self = nullptr;
    {
      LiveCounter counter(live);
      config.timeout_callback = [counter, &timeouts, &self](std::string_view anchor, mrt::TensorType direction,
                                                            int64_t bytes_done) {
        EXPECT_EQ(anchor, "x");
        EXPECT_EQ(direction, mrt::TensorType::INPUT);
        EXPECT_EQ(bytes_done, 0);
        ++timeouts;
        self->input("x").flush();  // lets the transfer go on with zeros
      };
    }
    mrt::QueueManager queues(model, config);
    self = &queues;
    config.timeout_callback = nullptr;
    EXPECT_EQ(live.load(), 1);

    const auto values = randomFloats(kAddOneN, 3);
    queues.input("x").enqueue(values.data(), int64_t(values.size() * sizeof(float)));
    std::vector<float> device(kAddOneN, -1.0f);
    queues.transfer("x", device.data());
    EXPECT_EQ(device, values);
    queues.transfer("x", device.data());  // nothing queued: times out, flushed with zeros
    EXPECT_GE(timeouts.load(), 1);
    EXPECT_EQ(device, std::vector<float>(kAddOneN, 0.0f));

    // Disconnected: enqueue fails and the device gets zeros; reset reconnects.
    mrt::InputQueue x = queues.input("x");
    x.disconnect();
    EXPECT_FALSE(x.info().connected);
    EXPECT_MRT_ERROR(x.enqueue(values.data(), int64_t(values.size() * sizeof(float))), MRT_CANCELLED, "");
    x.reset();
    x.enqueue(values.data(), int64_t(values.size() * sizeof(float)));
    queues.transfer("x", device.data());
    EXPECT_EQ(device, values);
  }
  EXPECT_EQ(live.load(), 0);
}

// enqueueLock hands out the entry of the ring's next slot to fill in place
// (C callbacks: function pointers and user data); enqueueComplete publishes
// it, and refuses without a lock.
TEST(CxxQueues, EnqueueLockFillsTheRingsSlotInPlace) {
  mrt::Model model(modelPath("add_one_t4"));
  mrt::QueueManager queues(model);
  mrt::InputQueue x = queues.input("x");
  mrt::OutputQueue y = queues.output("y");
  EXPECT_MRT_ERROR(x.enqueueComplete(), MRT_FAILED_PRECONDITION, "input queue 'x': no entry is locked");
  const auto values = randomFloats(kAddOneN, 5);
  const int64_t bytes = int64_t(values.size() * sizeof(float));
  int read = 0;
  mrt_input_queue_entry &in = x.enqueueLock();
  EXPECT_EQ(in.slot, 0);
  EXPECT_EQ(&x.enqueueLock(), &in);
  in.data = values.data();
  in.size_bytes = bytes;
  in.read_complete_fn = [](void *count) { ++*static_cast<int *>(count); };
  in.user_data = &read;
  x.enqueueComplete();
  EXPECT_EQ(x.enqueueLock().slot, 1);  // the next slot, left locked

  std::vector<float> out(kAddOneN, -1.0f);
  mrt_output_queue_entry &slot = y.enqueueLock();
  slot.data = out.data();
  slot.size_bytes = bytes;
  y.enqueueComplete();
  std::vector<float> device(kAddOneN);
  queues.transfer("x", device.data());
  EXPECT_EQ(device, values);
  EXPECT_EQ(read, 1);
  queues.transfer("y", device.data());
  EXPECT_EQ(out, values);
}

}  // namespace
