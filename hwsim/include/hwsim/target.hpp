// hwsim::Target: the description of one simulated IPU system, with the rates
// the cost model uses. Sources for every number are in docs/hwsim.md.
#pragma once

#include <cstdint>
#include <string>

namespace hwsim {

enum class IpuVersion : unsigned { Ipu2 = 2, Ipu21 = 21 };

struct Target {
  IpuVersion ipuVersion = IpuVersion::Ipu2;
  std::string name;                 // "GC200", "Bow", "C600", "IPU-Model small"
  unsigned numIpus = 1;
  unsigned tilesPerIpu = 1472;
  std::uint64_t bytesPerTile = 624 * 1024;
  unsigned workerContextsPerTile = 6;
  double clockHz = 1.33e9;

  unsigned numTiles() const { return numIpus * tilesPerIpu; }
  std::uint64_t totalMemoryBytes() const { return bytesPerTile * numTiles(); }

  // Factory functions for the systems hwsim can simulate.
  static Target gc200(unsigned numIpus = 1);
  static Target bow(unsigned numIpus = 1);
  static Target c600(unsigned numIpus = 1);
  static Target smallIpuModel(unsigned numIpus = 1);  // 4 tiles, like createSmallIpuModelDevice
};

// One line a person can read: "2 x GC200 (IPU2), 1472 tiles x 624 KiB, 1.33 GHz".
std::string describe(const Target &target);

}  // namespace hwsim
