// mrt.hpp basics (compiled as C++17): errors carry the status code and the
// library's message, moved-from and closed objects throw instead of
// crashing, logging callbacks, models, devices and predicates.
#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "cxx_test_util.hpp"

namespace {

using mrt_cxx_test::LiveCounter;
using mrt_cxx_test::modelPath;

static_assert(!std::is_copy_constructible_v<mrt::Model> && std::is_nothrow_move_constructible_v<mrt::Model>);
static_assert(!std::is_copy_constructible_v<mrt::Session> && std::is_nothrow_move_constructible_v<mrt::Session>);
static_assert(!std::is_copy_constructible_v<mrt::ModelRunner> &&
              std::is_nothrow_move_constructible_v<mrt::ModelRunner>);
static_assert(!std::is_copy_constructible_v<mrt::Future> && !std::is_copy_constructible_v<mrt::TensorMemory>);
static_assert(!std::is_copy_constructible_v<mrt::Device> && !std::is_copy_constructible_v<mrt::DeviceManager>);
static_assert(!std::is_copy_constructible_v<mrt::QueueManager> &&
              !std::is_copy_constructible_v<mrt::AnchorPredicate>);
static_assert(std::is_copy_constructible_v<mrt::InputQueue>, "queues are non-owning views");

TEST(CxxErrors, VersionMatchesTheHeader) {
  EXPECT_NO_THROW(mrt::checkVersion());
  const std::string expected = std::to_string(MRT_VERSION_MAJOR) + "." + std::to_string(MRT_VERSION_MINOR) + "." +
                               std::to_string(MRT_VERSION_PATCH);
  EXPECT_EQ(mrt::versionString(), expected);
  const mrt::Version v = mrt::version();
  EXPECT_EQ(v.major, MRT_VERSION_MAJOR);
  EXPECT_EQ(v.minor, MRT_VERSION_MINOR);
  EXPECT_EQ(v.patch, MRT_VERSION_PATCH);
  EXPECT_EQ(mrt::statusString(MRT_NOT_FOUND), "MRT_NOT_FOUND: not found");
}

TEST(CxxErrors, CheckThrowsTheCodeAndTheLastMessage) {
  EXPECT_NO_THROW(mrt::check(MRT_OK));
  try {
    mrt::Model missing("/nonexistent/model.popef");
    FAIL() << "loading a missing file did not throw";
  } catch (const mrt::Error &e) {
    EXPECT_EQ(e.code(), MRT_NOT_FOUND);
    EXPECT_STREQ(e.what(), mrt_last_error_message());
    EXPECT_NE(std::string(e.what()).find("/nonexistent/model.popef"), std::string::npos) << e.what();
    EXPECT_STREQ(e.codeString(), mrt_status_string(MRT_NOT_FOUND));
    EXPECT_EQ(mrt::lastErrorMessage(), e.what());
  }
}

TEST(CxxErrors, BadArgumentsBecomeErrors) {
  EXPECT_MRT_ERROR(mrt::setLogLevel(static_cast<mrt::LogLevel>(42)), MRT_INVALID_ARGUMENT, "42");
  mrt::Model model(modelPath("mlp"));
  EXPECT_MRT_ERROR(model.tensorData("w3"), MRT_NOT_FOUND, "w3");
  EXPECT_MRT_ERROR(model.anchor("nope"), MRT_NOT_FOUND, "nope");
  struct Triple {
    float a, b, c;
  };
  EXPECT_MRT_ERROR(model.tensorDataAs<Triple>("b2"), MRT_INVALID_ARGUMENT, "40 bytes, not a multiple of 12");
}

TEST(CxxErrors, MovedFromAndClosedObjectsThrowInsteadOfCrashing) {
  mrt::Model model(modelPath("add_one"));
  mrt::Model other = std::move(model);
  EXPECT_FALSE(model);  // NOLINT(bugprone-use-after-move): the point of the test
  EXPECT_TRUE(other);
  EXPECT_MRT_ERROR(model.info(), MRT_FAILED_PRECONDITION, "mrt::Model: used after it was moved from or closed");
  EXPECT_EQ(other.info().executable, "add_one");
  other.close();
  EXPECT_MRT_ERROR(other.anchors(), MRT_FAILED_PRECONDITION, "mrt::Model");
  other.close();  // twice is harmless

  mrt::ModelRunner runner;
  EXPECT_MRT_ERROR(runner.getExecuteInputs(), MRT_FAILED_PRECONDITION, "mrt::ModelRunner");
  mrt::Session session;
  EXPECT_MRT_ERROR(session.runMainPrograms(), MRT_FAILED_PRECONDITION, "mrt::Session");
  mrt::Future future;
  EXPECT_MRT_ERROR(future.isReady(), MRT_FAILED_PRECONDITION, "mrt::Future");
  mrt::TensorMemory memory;
  EXPECT_MRT_ERROR(memory.size(), MRT_FAILED_PRECONDITION, "mrt::TensorMemory");
  mrt::QueueManager queues;
  EXPECT_MRT_ERROR(queues.inputNames(), MRT_FAILED_PRECONDITION, "mrt::QueueManager");
  mrt::AnchorPredicate predicate;
  mrt::Model live(modelPath("add_one"));
  EXPECT_MRT_ERROR(predicate.evaluate(live, "x"), MRT_FAILED_PRECONDITION, "mrt::AnchorPredicate");
  mrt::Device device;
  EXPECT_MRT_ERROR(device.id(), MRT_FAILED_PRECONDITION, "mrt::Device");
}

// Log messages reach the std::function on the logging thread; replacing it
// frees the previous one exactly once.
TEST(CxxLogging, CallbackReceivesMessagesAndIsFreedOnce) {
  std::atomic<int> live{0};
  std::mutex mutex;
  std::vector<std::pair<mrt::LogLevel, std::string>> seen;
  const mrt::LogLevel before = mrt::logLevel();
  mrt::setLogLevel(mrt::LogLevel::Info);
  {
    LiveCounter counter(live);
    mrt::setLogCallback([counter, &mutex, &seen](mrt::LogLevel level, std::string_view message) {
      std::lock_guard<std::mutex> lock(mutex);
      seen.emplace_back(level, std::string(message));
    });
  }
  EXPECT_EQ(live.load(), 1);  // the library holds the only copy
  mrt::logMessage(mrt::LogLevel::Warn, "hello from the C++ wrapper");
  mrt::logMessage(mrt::LogLevel::Debug, "below the level: dropped");
  mrt::setLogCallback(nullptr);
  EXPECT_EQ(live.load(), 0);
  mrt::setLogLevel(before);
  std::lock_guard<std::mutex> lock(mutex);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].first, mrt::LogLevel::Warn);
  EXPECT_NE(seen[0].second.find("hello from the C++ wrapper"), std::string::npos) << seen[0].second;
}

TEST(CxxLogging, AThrowingCallbackLosesOnlyItsMessage) {
  const mrt::LogLevel before = mrt::logLevel();
  mrt::setLogLevel(mrt::LogLevel::Warn);
  int calls = 0;
  mrt::setLogCallback([&calls](mrt::LogLevel, std::string_view) {
    ++calls;
    throw std::runtime_error("a log callback that throws");
  });
  EXPECT_NO_THROW(mrt::logMessage(mrt::LogLevel::Err, "one"));
  EXPECT_NO_THROW(mrt::logMessage(mrt::LogLevel::Err, "two"));
  mrt::setLogCallback(nullptr);
  mrt::setLogLevel(before);
  EXPECT_EQ(calls, 2);
}

TEST(CxxModel, InfoAnchorsAndTensorData) {
  mrt::Model model(std::vector<std::string>{modelPath("mlp")});
  const mrt::ModelInfo info = model.info();
  EXPECT_EQ(info.executable, "mlp");
  EXPECT_EQ(info.num_ipus, 1u);
  EXPECT_EQ(info.num_tensor_data, 4u);
  const auto anchors = model.anchors();
  ASSERT_EQ(anchors.size(), info.num_anchors);
  const mrt::AnchorInfo image = model.anchor("image");
  EXPECT_EQ(image.tensor_type, mrt::TensorType::INPUT);
  EXPECT_EQ(image.data_type, mrt::DataType::F32);
  EXPECT_EQ(image.shape, (std::vector<int64_t>{1, 784}));
  EXPECT_EQ(image.size_in_bytes, 784 * 4);
  EXPECT_EQ(image.data_source, mrt::DataSource::NONE);
  EXPECT_EQ(model.anchorByHandle(image.handle).name, "image");
  const mrt::AnchorInfo w1 = model.anchor("w1");
  EXPECT_EQ(w1.data_source, mrt::DataSource::TENSOR_DATA);

  const auto w1_bytes = model.tensorData("w1");
  EXPECT_EQ(w1_bytes.size(), 784u * 128u * 4u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(w1_bytes.data()) % 64, 0u) << "TensorData is 64-byte aligned";
  const auto w1_floats = model.tensorDataAs<float>("w1");
  EXPECT_EQ(w1_floats.size(), 784u * 128u);
  EXPECT_EQ(static_cast<const void *>(w1_floats.data()), static_cast<const void *>(w1_bytes.data()))
      << "borrowed, not copied";
  EXPECT_FALSE(model.executable().empty());
  EXPECT_FALSE(model.programFlow(mrt::ProgramPhase::Main).empty());
  const auto programs = model.programs();
  EXPECT_EQ(programs.size(), info.num_programs);
  for (uint64_t p : model.programFlow(mrt::ProgramPhase::Main)) EXPECT_EQ(programs.count(p), 1u) << p;
  EXPECT_EQ(model.options(mrt::ModelOptions::Engine).size(), info.num_engine_options);
}

TEST(CxxModel, EngineOptionOverridesMakeANewModel) {
  const mrt::Model model(modelPath("add_one"));
  const auto before = model.options(mrt::ModelOptions::Engine);
  const mrt::Model profiled =
      model.withEngineOptions({{"autoReport.all", "true"}, {"autoReport.directory", "/tmp/profile"}});
  auto expected = before;
  expected.emplace_back("autoReport.all", "true");
  expected.emplace_back("autoReport.directory", "/tmp/profile");
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(profiled.options(mrt::ModelOptions::Engine), expected);
  EXPECT_EQ(model.options(mrt::ModelOptions::Engine), before) << "the original model is unchanged";
  EXPECT_EQ(profiled.info().executable, "add_one");
  EXPECT_EQ(profiled.executable().data(), model.executable().data()) << "blobs are shared, not copied";
  // A later value of a key replaces the earlier one.
  const mrt::Model quiet = profiled.withEngineOptions({{"autoReport.all", "false"}});
  EXPECT_EQ(quiet.options(mrt::ModelOptions::Engine).front(), (std::pair<std::string, std::string>{"autoReport.all", "false"}));

  EXPECT_MRT_ERROR(model.withEngineOptions({{"no.such.option", "1"}}), MRT_INVALID_ARGUMENT,
                   "engine option 'no.such.option' = '1'");
  EXPECT_MRT_ERROR(model.withEngineOptions({{"autoReport.all", "maybe"}}), MRT_INVALID_ARGUMENT,
                   "engine option 'autoReport.all' = 'maybe'");
  const char *twice[] = {"autoReport.all", "true", "autoReport.all", "false", nullptr};
  mrt_model *out = nullptr;
  EXPECT_EQ(mrt_model_with_engine_options(model.get(), twice, &out), MRT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mrt_last_error_message()).find("options[2]: engine option 'autoReport.all' is given twice"),
            std::string::npos)
      << mrt_last_error_message();
  const char *noValue[] = {"autoReport.all", nullptr};
  EXPECT_EQ(mrt_model_with_engine_options(model.get(), noValue, &out), MRT_INVALID_ARGUMENT);
  EXPECT_EQ(mrt_model_with_engine_options(nullptr, nullptr, &out), MRT_INVALID_ARGUMENT);
  EXPECT_EQ(mrt_model_with_engine_options(model.get(), nullptr, nullptr), MRT_INVALID_ARGUMENT);
  EXPECT_EQ(out, nullptr);
  // No options: a copy with the same options.
  ASSERT_EQ(mrt_model_with_engine_options(model.get(), nullptr, &out), MRT_OK);
  EXPECT_EQ(mrt::Model::adopt(out).options(mrt::ModelOptions::Engine), before);
}

TEST(CxxModel, MoveAssignmentReleasesTheOldHandle) {
  mrt::Model a(modelPath("add_one"));
  mrt::Model b(modelPath("mlp"));
  a = std::move(b);  // add_one is destroyed here (ASan: no leak, no double free)
  EXPECT_EQ(a.info().executable, "mlp");
  a = std::move(a);  // self-move keeps it
  EXPECT_TRUE(a);
  mrt_model *raw = a.release();
  EXPECT_FALSE(a);
  mrt::Model adopted = mrt::Model::adopt(raw);
  EXPECT_EQ(adopted.info().executable, "mlp");
}

TEST(CxxModel, BlobTypesAreNamedAsPopefSpellsThem) {
  EXPECT_STREQ(mrt::blobTypeName(mrt::BlobType::Metadata), "Metadata");
  EXPECT_STREQ(mrt::blobTypeName(mrt::BlobType::Executable), "Executable");
  EXPECT_STREQ(mrt::blobTypeName(mrt::BlobType::TensorData), "TensorData");
  EXPECT_STREQ(mrt::blobTypeName(mrt::BlobType::FeedData), "FeedData");
  EXPECT_STREQ(mrt::blobTypeName(mrt::BlobType::Opaque), "Opaque");
  EXPECT_STREQ(mrt::blobTypeName(static_cast<mrt::BlobType>(6)), "Unknown");
}

TEST(CxxDevices, SystemAndAttachedDevices) {
  mrt::DeviceManager manager;
  EXPECT_EQ(manager.ipuHardwareVersion(), 2);
  const auto devices = manager.devices();
  ASSERT_EQ(devices.size(), manager.deviceCount());
  ASSERT_EQ(devices.size(), 7u);  // 4 single IPUs, 2 pairs, 1 group of 4
  EXPECT_EQ(devices[6].num_ipus, 4);
  EXPECT_EQ(devices[0].target_name, "GC200");

  mrt::Device one = manager.getDevice(1);
  EXPECT_EQ(one.numIpus(), 1);
  EXPECT_EQ(one.ipuVersion(), 2);
  const int64_t id = one.id();
  EXPECT_FALSE(manager.deviceInfo(static_cast<std::size_t>(id)).is_free);
  // The group of 4 holds every IPU, so it cannot be had while `one` is held.
  EXPECT_FALSE(manager.tryGetDevice(4).has_value());
  EXPECT_MRT_ERROR(manager.getDevice(4), MRT_UNAVAILABLE, "");
  EXPECT_MRT_ERROR(manager.getDevice(3), MRT_INVALID_ARGUMENT, "3");
  EXPECT_MRT_ERROR(manager.getDevice(1, {{"noSuchOption", "1"}}), MRT_INVALID_ARGUMENT, "noSuchOption");
  one.close();  // releases the IPU
  EXPECT_TRUE(manager.deviceInfo(static_cast<std::size_t>(id)).is_free);
  std::optional<mrt::Device> all = manager.tryGetDevice(4, {{"ipuLinkDomainSize", "4"}});
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(all->numIpus(), 4);

  mrt::Model model(modelPath("add_one_t4"));
  mrt::Device small = manager.createSmallIpuModelDevice(model);
  EXPECT_EQ(small.id(), -1);
  manager.close();  // devices do not need their manager
  EXPECT_EQ(small.numIpus(), 1);
}

TEST(CxxPredicates, PrebuiltUserAndCombined) {
  mrt::Model model(modelPath("mlp"));
  using P = mrt::AnchorCallbackPolicy;
  auto main = mrt::AnchorPredicate::programFlowMain(model);
  EXPECT_EQ(main.kind(), mrt::PredicateKind::AnchorCallback);
  EXPECT_EQ(main.evaluateAs<P>(model, model.anchor("image").handle), P::BIND_USER_CB);

  std::atomic<int> live{0};
  std::atomic<int> calls{0};
  mrt::AnchorPredicate user;
  {
    LiveCounter counter(live);
    user = mrt::AnchorPredicate::fromFunction([counter, &calls](const mrt::AnchorInfo &anchor) {
      ++calls;
      return anchor.name == "image" ? P::SKIP_CB : P::BIND_EMPTY_CB;
    });
  }
  EXPECT_EQ(live.load(), 1);
  EXPECT_EQ(user.evaluateAs<P>(model, model.anchor("image").handle), P::SKIP_CB);
  EXPECT_EQ(user.evaluateAs<P>(model, model.anchor("probs").handle), P::BIND_EMPTY_CB);
  EXPECT_EQ(calls.load(), 2);

  auto both = mrt::AnchorPredicate::andBind(P::BIND_USER_CB, P::SKIP_CB, {&main, &user});
  user.close();  // the combination keeps its own reference
  EXPECT_EQ(live.load(), 1);
  EXPECT_EQ(both.evaluateAs<P>(model, model.anchor("image").handle), P::SKIP_CB);
  both.close();
  EXPECT_EQ(live.load(), 0) << "the user function is freed with the last user of the predicate";

  using D = mrt::PopefDataUsagePolicy;
  auto weights = mrt::AnchorPredicate::anchorsPolicies<D>({{model.anchor("w1").handle, D::USE_USER_DATA}},
                                                          D::USE_POPEF_DATA_IF_ANY);
  EXPECT_EQ(weights.kind(), mrt::PredicateKind::PopefDataUsage);
  EXPECT_EQ(weights.evaluateAs<D>(model, model.anchor("w1").handle), D::USE_USER_DATA);
  EXPECT_EQ(weights.evaluateAs<D>(model, model.anchor("w2").handle), D::USE_POPEF_DATA_IF_ANY);
  EXPECT_MRT_ERROR(weights.evaluateAs<P>(model, "w1"), MRT_INVALID_ARGUMENT, "other kind");
  EXPECT_MRT_ERROR(weights.evaluate(model, "no_such_handle"), MRT_NOT_FOUND, "no_such_handle");
  EXPECT_MRT_ERROR(mrt::AnchorPredicate::orBind(P::BIND_USER_CB, P::SKIP_CB, {&weights}), MRT_INVALID_ARGUMENT, "");
}

// An exception thrown by a user predicate reaches the caller unchanged.
TEST(CxxPredicates, ExceptionsFromAUserPredicateAreRethrown) {
  mrt::Model model(modelPath("mlp"));
  struct Oops : std::runtime_error {
    using std::runtime_error::runtime_error;
  };
  auto throwing = mrt::AnchorPredicate::fromFunction([](const mrt::AnchorInfo &anchor) -> mrt::AnchorCallbackPolicy {
    throw Oops("predicate failed on " + anchor.name);
  });
  try {
    throwing.evaluate(model, model.anchor("image").handle);
    FAIL() << "did not throw";
  } catch (const Oops &e) {
    EXPECT_STREQ(e.what(), "predicate failed on image");
  }
  // The next call on this thread is not confused by it.
  EXPECT_MRT_ERROR(model.anchor("zzz"), MRT_NOT_FOUND, "zzz");
}

}  // namespace
