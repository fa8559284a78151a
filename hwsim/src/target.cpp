#include "hwsim/target.hpp"

#include <fmt/format.h>

namespace hwsim {

namespace {
Target make(IpuVersion version, const char *name, unsigned numIpus, unsigned tiles, double clockHz) {
  Target t;
  t.ipuVersion = version;
  t.name = name;
  t.numIpus = numIpus;
  t.tilesPerIpu = tiles;
  t.clockHz = clockHz;
  return t;
}
}  // namespace

// GC200 and Bow share the Mk2 tile; Bow only runs it faster (docs/hwsim.md).
Target Target::gc200(unsigned numIpus) { return make(IpuVersion::Ipu2, "GC200", numIpus, 1472, 1.33e9); }
Target Target::bow(unsigned numIpus) { return make(IpuVersion::Ipu2, "Bow", numIpus, 1472, 1.85e9); }
Target Target::c600(unsigned numIpus) {
  // C600: 280 TFLOPS F16 from 1472 tiles x 128 FLOPs/cycle gives ~1.5 GHz.
  return make(IpuVersion::Ipu21, "C600", numIpus, 1472, 1.5e9);
}
Target Target::smallIpuModel(unsigned numIpus) {
  return make(IpuVersion::Ipu2, "IPU-Model small", numIpus, 4, 1.33e9);
}
Target Target::forVersion(IpuVersion version, unsigned numIpus) {
  return version == IpuVersion::Ipu21 ? c600(numIpus) : gc200(numIpus);
}

std::string describe(const Target &target) {
  return fmt::format("{} x {} (IPU{}), {} tiles x {} KiB, {:.2f} GHz", target.numIpus, target.name,
                     static_cast<unsigned>(target.ipuVersion), target.tilesPerIpu,
                     target.bytesPerTile / 1024, target.clockHz / 1e9);
}

bool isCompatible(const Target &compiled, const Target &device) {
  return compiled.ipuVersion == device.ipuVersion && compiled.tilesPerIpu == device.tilesPerIpu &&
         compiled.bytesPerTile == device.bytesPerTile && device.numIpus >= compiled.numIpus;
}

}  // namespace hwsim
