// Engine options: validation and the MRT_ENGINE_OPTIONS JSON override.
#include <cstdlib>

#include "test_util.hpp"

namespace {

struct EnvGuard {
  explicit EnvGuard(const char *value) { setenv("MRT_ENGINE_OPTIONS", value, 1); }
  ~EnvGuard() { unsetenv("MRT_ENGINE_OPTIONS"); }
};

TEST(Options, EnvironmentOverridesCodeAndAcceptsJsonTypes) {
  EnvGuard env(R"({"debug.instrument": true, "autoReport.executionProfileProgramRunCount": 5, "autoReport.directory": "/tmp/x"})");
  const auto opts = hwsim::resolveEngineOptions({{"debug.instrument", "false"}});
  EXPECT_EQ(opts.at("debug.instrument"), "true");
  EXPECT_EQ(opts.at("autoReport.executionProfileProgramRunCount"), "5");
  EXPECT_EQ(opts.at("autoReport.directory"), "/tmp/x");
  hwsim::Graph g(hwsim::Target::smallIpuModel());
  hwsim::Engine e(g, {});
  EXPECT_TRUE(e.isExecutionProfilingEnabled());
  EXPECT_EQ(e.getEngineOptions().at("debug.instrument"), "true");
}

TEST(Options, MalformedEnvironmentIsInvalidOptionNamingTheVariable) {
  EnvGuard env("{not json");
  try {
    hwsim::resolveEngineOptions({});
    FAIL();
  } catch (const hwsim::InvalidOption &e) {
    EXPECT_EQ(e.option(), "MRT_ENGINE_OPTIONS");
  }
}

TEST(Options, UnknownOptionFromEnvironmentIsNamed) {
  EnvGuard env(R"({"opt.bogus": "1"})");
  try {
    hwsim::resolveEngineOptions({});
    FAIL();
  } catch (const hwsim::InvalidOption &e) {
    EXPECT_EQ(e.option(), "opt.bogus");
  }
}

TEST(Options, AutoReportWritesProfileFiles) {
  const std::string dir = ::testing::TempDir() + "hwsim_autoreport";
  {
    hwsim_test::Harness h;
    auto c = h.output("c", hwsim::Type::S32, {1});
    h.build({h.vertex("Increment", {{"counter", c}})},
            {{"autoReport.outputExecutionProfile", "true"}, {"autoReport.outputGraphProfile", "true"}, {"autoReport.directory", dir}});
    h.engine->run(0);
  }
  for (const char *f : {"/profile_trace.json", "/intervals.csv", "/profile_summary.txt", "/graph_profile.json"}) {
    std::FILE *fp = std::fopen((dir + f).c_str(), "r");
    ASSERT_NE(fp, nullptr) << f;
    std::fseek(fp, 0, SEEK_END);
    EXPECT_GT(std::ftell(fp), 10) << f;
    std::fclose(fp);
  }
}

}  // namespace
