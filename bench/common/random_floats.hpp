// Benchmark inputs: n floats uniform in [-1, 1) from a fixed seed, so every
// run times the same data.
#pragma once

#include <cstddef>
#include <random>
#include <vector>

inline std::vector<float> randomFloats(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(n);
  for (auto &x : v) x = dist(gen);
  return v;
}
