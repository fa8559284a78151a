// hwsim::Target: the description of one simulated IPU system, with the rates
// the cycle cost model uses. Sources for every number are in docs/hwsim.md.
#pragma once

#include <cstdint>
#include <string>

namespace hwsim {

// Numeric values are serialized: 2 = Mk2 (GC200, Bow), 21 = C600's IPU21.
enum class IpuVersion : unsigned { Ipu2 = 2, Ipu21 = 21 };

struct Target {
  IpuVersion ipuVersion = IpuVersion::Ipu2;
  std::string name = "GC200";       // "GC200", "Bow", "C600", "IPU-Model small"
  unsigned numIpus = 1;
  unsigned tilesPerIpu = 1472;
  std::uint64_t bytesPerTile = 624 * 1024;
  unsigned workerContextsPerTile = 6;
  double clockHz = 1.33e9;

  // ---- rates of the cycle cost model (per tile unless stated) ----
  // Matrix multiply-accumulate throughput of the AMP unit, FLOPs per cycle.
  double f32MatMulFlopsPerCycle = 32;
  double f16MatMulFlopsPerCycle = 128;  // F16 inputs, F32 accumulation
  // Elementwise vector width in elements per cycle (64-bit datapath).
  double f32VectorWidth = 2;
  double f16VectorWidth = 4;
  double intVectorWidth = 1;
  // Extra cycles per element for transcendental functions (exp, log, tanh...).
  double transcendentalCyclesPerElement = 4;
  // Fixed cost of launching one vertex (supervisor spawning workers).
  double vertexOverheadCycles = 40;
  // On-chip exchange: bytes a tile can receive per cycle (GC200: 8 TB/s).
  double exchangeBytesPerCycle = 4;
  // Host link (PCIe Gen4 x16), bytes per second in each direction.
  double hostLinkBytesPerSecond = 31.5e9;
  // IPU-Links: bytes per second one IPU sends to the others, in each
  // direction (10 links of 16 GB/s each way).
  double ipuLinkBytesPerSecond = 160e9;
  // Barrier latencies, in cycles: internal (one IPU), external (between IPUs),
  // host sync (device waits for the host to service a stream).
  double internalSyncCycles = 150;
  double externalSyncCycles = 1500;
  double hostSyncCycles = 6000;

  unsigned numTiles() const { return numIpus * tilesPerIpu; }
  std::uint64_t totalMemoryBytes() const { return bytesPerTile * numTiles(); }
  unsigned ipuOfTile(unsigned tile) const { return tile / tilesPerIpu; }

  // Factory functions for the systems hwsim can simulate.
  static Target gc200(unsigned numIpus = 1);
  static Target bow(unsigned numIpus = 1);
  static Target c600(unsigned numIpus = 1);
  static Target smallIpuModel(unsigned numIpus = 1);  // 4 tiles, like createSmallIpuModelDevice
  // The default target of an IPU version: gc200 for Ipu2, c600 for Ipu21.
  static Target forVersion(IpuVersion version, unsigned numIpus = 1);
};

// One line a person can read: "2 x GC200 (IPU2), 1472 tiles x 624 KiB, 1.33 GHz".
std::string describe(const Target &target);

// True if an executable compiled for `compiled` can be loaded on `device`
// (same IPU version, tiles per IPU and memory per tile, enough IPUs).
bool isCompatible(const Target &compiled, const Target &device);

}  // namespace hwsim
