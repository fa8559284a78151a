// A C++ application built with find_package(mrt) and the header-only wrapper.
#include <iostream>
#include <string>

#include <mrt.hpp>

int main() {
  mrt::checkVersion();
  try {
    mrt::check(mrt_check_version(MRT_VERSION_MAJOR + 1, 0));
    std::cerr << "a mismatched version did not throw\n";
    return 1;
  } catch (const mrt::Error &e) {
    if (e.code() != MRT_VERSION_MISMATCH ||
        std::string(e.what()).find("caller needs libmrt") == std::string::npos) {
      std::cerr << "unexpected error: " << e.what() << "\n";
      return 1;
    }
  }
  std::cout << "find_package consumer: libmrt " << mrt::versionString() << "\n";
  return 0;
}
