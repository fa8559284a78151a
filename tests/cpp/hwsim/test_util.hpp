// Helpers for hwsim tests: build a graph on the small 4-tile model, load it,
// and move typed data in and out through host read/write handles.
#pragma once

#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hwsim/hwsim.hpp"

namespace hwsim_test {

class Harness {
 public:
  explicit Harness(hwsim::Target target = hwsim::Target::smallIpuModel(), unsigned replicas = 1)
      : graph(target, replicas), device(hwsim::DeviceManager::createIpuModelDevice(replicatedTarget(target, replicas))) {}

  static hwsim::Target replicatedTarget(hwsim::Target t, unsigned replicas) {
    t.numIpus *= replicas;
    return t;
  }

  // A variable on `tile` the host can write (handle = name).
  hwsim::Tensor input(const std::string &name, hwsim::Type type, const hwsim::Shape &shape, unsigned tile = 0) {
    auto t = graph.addVariable(type, shape, name);
    graph.setTileMapping(t, tile);
    graph.createHostWrite(name, t);
    return t;
  }
  // A variable on `tile` the host can read (handle = name).
  hwsim::Tensor output(const std::string &name, hwsim::Type type, const hwsim::Shape &shape, unsigned tile = 0) {
    auto t = graph.addVariable(type, shape, name);
    graph.setTileMapping(t, tile);
    graph.createHostRead(name, t);
    return t;
  }
  // One compute set with one vertex on `tile`, as an Execute program.
  hwsim::program::Program vertex(const std::string &codelet, const std::vector<hwsim::Connection> &fields,
                                 unsigned tile = 0, const std::vector<std::pair<std::string, std::vector<double>>> &attrs = {}) {
    auto cs = graph.addComputeSet(codelet);
    auto v = graph.addVertex(cs, codelet, fields, tile);
    for (const auto &[k, vals] : attrs) graph.setInitialValue(v, k, vals);
    return hwsim::program::Execute(cs);
  }

  void build(const std::vector<hwsim::program::Program> &programs, const hwsim::OptionFlags &options = {}) {
    exe = hwsim::compileGraph(graph, programs, options);
    engine = std::make_unique<hwsim::Engine>(exe, options);
    ASSERT_TRUE(device.attach());
    engine->load(device);
  }

  template <typename T> void write(const std::string &name, const std::vector<T> &v) {
    engine->writeTensor(name, v.data(), v.data() + v.size());
  }
  template <typename T> std::vector<T> read(const std::string &name, std::size_t n, unsigned replica = 0) {
    std::vector<T> v(n);
    engine->readTensor(name, v.data(), v.data() + n, replica);
    return v;
  }

  hwsim::Graph graph;
  hwsim::Device device;
  hwsim::Executable exe;
  std::unique_ptr<hwsim::Engine> engine;
};

inline std::vector<float> randomFloats(std::size_t n, float lo, float hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto &x : v) x = dist(rng);
  return v;
}

inline std::vector<std::int32_t> randomInts(std::size_t n, int lo, int hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(lo, hi);
  std::vector<std::int32_t> v(n);
  for (auto &x : v) x = dist(rng);
  return v;
}

inline std::vector<std::uint16_t> toHalf(const std::vector<float> &v) {
  std::vector<std::uint16_t> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = hwsim::floatToHalf(v[i]);
  return out;
}
inline std::vector<float> fromHalf(const std::vector<std::uint16_t> &v) {
  std::vector<float> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = hwsim::halfToFloat(v[i]);
  return out;
}

}  // namespace hwsim_test
