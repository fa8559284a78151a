// Wrong state, wrong names and unsupported models: clear errors that name
// the value, and a session that stays usable afterwards.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "popef/package_hash.hpp"
#include "session_test_util.hpp"

namespace mrt {
namespace {

using namespace session_test;
using ::testing::HasSubstr;

TEST(SessionErrorsTest, WrongStateIsFailedPrecondition) {
  const auto model = exampleModel("add_one");
  Session session(model);
  for (const auto &call : std::vector<std::function<void()>>{
           [&] { session.runMainPrograms(); }, [&] { session.runLoadPrograms(); },
           [&] { session.runSavePrograms(); }, [&] { session.runPrograms({0}); },
           [&] { session.unloadFromDevice(); }, [&] { session.reload(); }}) {
    const Error error = captureError(call);
    EXPECT_EQ(error.code(), ErrorCode::FailedPrecondition);
    EXPECT_THAT(error.what(), HasSubstr("add_one"));
    EXPECT_THAT(error.what(), HasSubstr("bindToDevice()"));
  }
  EXPECT_FALSE(session.isStopped());
  session.stop();  // nothing loaded: nothing to stop
  EXPECT_FALSE(session.isStopped());

  // Still usable: bind, run.
  session.bindToDevice(smallDevice(model));
  std::vector<float> x(16, 1.0f), y(16);
  session.setCallbackForAnchor("x", readFrom(x));
  // y is not connected: the run says which anchor of which program.
  const Error missing = captureError([&] { session.runMainPrograms(); });
  EXPECT_EQ(missing.code(), ErrorCode::FailedPrecondition);
  EXPECT_THAT(missing.what(), HasSubstr("program 0 ('main'): 'y'"));
  const auto notConnected = session.anchorsNotConnectedToCallbacks({0});
  ASSERT_EQ(notConnected.size(), 1u);
  ASSERT_EQ(notConnected.at(0).size(), 1u);
  EXPECT_EQ(notConnected.at(0)[0]->handle(), "y");
  session.setCallbackForAnchor("y", writeTo(y));
  session.errorIfAnchorsAreNotConnectedToCallbacks({0});
  session.runMainPrograms();
  EXPECT_EQ(y, std::vector<float>(16, 2.0f));
}

TEST(SessionErrorsTest, UnknownNamesAreNotFound) {
  const auto model = exampleModel("add_one");
  Session session(model);
  session.bindToDevice(smallDevice(model));
  const Error anchor = captureError([&] { session.setCallbackForAnchor("nope", [](void *) {}); });
  EXPECT_EQ(anchor.code(), ErrorCode::NotFound);
  EXPECT_THAT(anchor.what(), HasSubstr("'nope'"));
  const Error program = captureError([&] { session.runPrograms({0, 7}); });
  EXPECT_EQ(program.code(), ErrorCode::NotFound);
  EXPECT_THAT(program.what(), HasSubstr("program 7"));
  EXPECT_EQ(captureError([&] { session.anchorsNotConnectedToCallbacks({9}); }).code(), ErrorCode::NotFound);
  EXPECT_EQ(captureError([&] { session.bindToDevice(nullptr); }).code(), ErrorCode::InvalidArgument);
  // Usable afterwards.
  std::vector<float> x(16, 4.0f), y(16);
  session.setCallbackForAnchor("x", readFrom(x));
  session.setCallbackForAnchor("y", writeTo(y));
  session.runPrograms({0});
  EXPECT_EQ(y, std::vector<float>(16, 5.0f));
}

TEST(SessionErrorsTest, RemoteBufferAnchorWithoutDataIsRejected) {
  const auto model = exampleModel("remote_buffer");
  popef::ModelParts parts = partsOf(*model);
  parts.tensorData.clear();
  std::vector<popef::Anchor> anchors = parts.metadata.anchors();
  for (auto &anchor : anchors) anchor.setDataSource(popef::DataSource::None);
  parts.metadata.setAnchors(anchors);
  const auto withoutData = std::make_shared<const popef::Model>(std::move(parts));
  const Error error = captureError([&] { Session session(withoutData); });
  EXPECT_EQ(error.code(), ErrorCode::InvalidArgument);
  EXPECT_THAT(error.what(), HasSubstr("anchor 'w'"));
}

TEST(SessionErrorsTest, PackageHashMismatchUnlessTheCheckIsOff) {
  const auto model = exampleModel("add_one");
  popef::ModelParts parts = partsOf(*model);
  parts.metadata.setPackageHash("some-other-runtime");
  const auto other = std::make_shared<const popef::Model>(std::move(parts));
  const Error error = captureError([&] { Session session(other); });
  EXPECT_EQ(error.code(), ErrorCode::VersionMismatch);
  EXPECT_THAT(error.what(), HasSubstr("some-other-runtime"));
  EXPECT_THAT(error.what(), HasSubstr(popef::runtimePackageHash()));
  SessionConfig config;
  config.check_package_hash = false;
  Session session(other, config);
  session.bindToDevice(smallDevice(other));
  std::vector<float> x(16, 0.5f), y(16);
  session.setCallbackForAnchor("x", readFrom(x));
  session.setCallbackForAnchor("y", writeTo(y));
  session.runMainPrograms();
  EXPECT_EQ(y, std::vector<float>(16, 1.5f));
}

TEST(SessionErrorsTest, BadConfigIsInvalidArgument) {
  SessionConfig config;
  config.max_look_ahead = "soon";
  const Error error = captureError([&] { Session session(exampleModel("add_one"), config); });
  EXPECT_EQ(error.code(), ErrorCode::InvalidArgument);
  EXPECT_THAT(error.what(), HasSubstr("'soon'"));
  config.max_look_ahead = "3";
  Session fine(exampleModel("add_one"), config);
  EXPECT_EQ(captureError([] { Session session(std::shared_ptr<const popef::Model>{}); }).code(),
            ErrorCode::InvalidArgument);
}

}  // namespace
}  // namespace mrt
