// Tensor views, tile mapping, and data moved through views by Copy programs.
#include <numeric>

#include "test_util.hpp"

namespace {

using hwsim::Type;
using hwsim_test::Harness;

TEST(Views, SliceIndexReshapeTransposeConcatSelectTheRightElements) {
  Harness h;
  auto x = h.input("x", Type::S32, {4, 6});
  auto out = h.output("out", Type::S32, {6, 4});
  auto col = h.output("col", Type::S32, {4, 2});
  auto cat = h.output("cat", Type::S32, {2, 6});
  auto flat = h.output("flat", Type::S32, {3});
  namespace p = hwsim::program;
  h.build({p::Sequence{p::Copy(x.transpose(), out), p::Copy(x.slice(2, 4, 1), col),
                       p::Copy(hwsim::concat({x[3].reshape({1, 6}), x.slice(0, 1)}), cat),
                       p::Copy(x.flatten().slice(10, 13), flat)}});
  std::vector<std::int32_t> v(24);
  std::iota(v.begin(), v.end(), 0);
  h.write("x", v);
  h.engine->run(0);
  std::vector<std::int32_t> t(24);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 6; ++c) t[c * 4 + r] = r * 6 + c;
  EXPECT_EQ(h.read<std::int32_t>("out", 24), t);
  EXPECT_EQ(h.read<std::int32_t>("col", 8), (std::vector<std::int32_t>{2, 3, 8, 9, 14, 15, 20, 21}));
  EXPECT_EQ(h.read<std::int32_t>("cat", 12), (std::vector<std::int32_t>{18, 19, 20, 21, 22, 23, 0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(h.read<std::int32_t>("flat", 3), (std::vector<std::int32_t>{10, 11, 12}));
}

TEST(Views, ConcatAlongInnerDimension) {
  Harness h;
  auto a = h.input("a", Type::F32, {2, 2});
  auto b = h.input("b", Type::F32, {2, 1});
  auto out = h.output("out", Type::F32, {2, 3});
  h.build({hwsim::program::Copy(hwsim::concat({a, b}, 1), out)});
  h.write("a", std::vector<float>{1, 2, 3, 4});
  h.write("b", std::vector<float>{9, 8});
  h.engine->run(0);
  EXPECT_EQ(h.read<float>("out", 6), (std::vector<float>{1, 2, 9, 3, 4, 8}));
}

TEST(Views, BadArgumentsThrowInvalidArgument) {
  hwsim::Graph g(hwsim::Target::smallIpuModel());
  auto x = g.addVariable(Type::F32, {4, 6});
  auto expectInvalid = [](auto &&fn) {
    try {
      fn();
      FAIL() << "expected an error";
    } catch (const hwsim::Error &e) {
      EXPECT_EQ(e.kind(), hwsim::ErrorKind::InvalidArgument);
    }
  };
  expectInvalid([&] { (void)x.slice(3, 7, 0); });
  expectInvalid([&] { (void)x.slice(0, 1, 2); });
  expectInvalid([&] { (void)x.reshape({5, 5}); });
  expectInvalid([&] { (void)hwsim::concat({x, g.addVariable(Type::S32, {4, 6})}); });
  expectInvalid([&] { g.setTileMapping(x, 4); });
}

TEST(TileMapping, LinearSpreadAndOverwrite) {
  hwsim::Graph g(hwsim::Target::smallIpuModel());
  auto x = g.addVariable(Type::F32, {10});
  g.mapLinearly(x, 2);
  EXPECT_EQ(g.getTileMapping(x), (std::vector<hwsim::TileInterval>{{0, 4, 0}, {4, 8, 1}, {8, 10, 2}}));
  g.setTileMapping(x.slice(3, 5), 3);
  EXPECT_EQ(g.getTileMapping(x), (std::vector<hwsim::TileInterval>{{0, 3, 0}, {3, 5, 3}, {5, 8, 1}, {8, 10, 2}}));
  EXPECT_EQ(g.getTileMapping(x.slice(4, 6)), (std::vector<hwsim::TileInterval>{{0, 1, 3}, {1, 2, 1}}));
}

TEST(Graph, HandlesMustBeUnique) {
  hwsim::Graph g(hwsim::Target::smallIpuModel());
  g.addHostToDeviceFIFO("in", Type::F32, 4);
  EXPECT_THROW(g.addDeviceToHostFIFO("in", Type::F32, 4), hwsim::Error);
  EXPECT_THROW(g.addRemoteBuffer("in", Type::F32, 4), hwsim::Error);
  EXPECT_THROW(g.addVertex(g.addComputeSet("cs"), "NoSuchCodelet"), hwsim::Error);
}

}  // namespace
