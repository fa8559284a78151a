// Library version queries and the compatibility check.
#include "capi/guard.hpp"

#define MRT_STRINGIFY_(x) #x
#define MRT_STRINGIFY(x) MRT_STRINGIFY_(x)

extern "C" {

MRT_API const char *mrt_version_string(void) noexcept {
  return MRT_STRINGIFY(MRT_VERSION_MAJOR) "." MRT_STRINGIFY(MRT_VERSION_MINOR) "." MRT_STRINGIFY(
      MRT_VERSION_PATCH);
}

MRT_API void mrt_version(int *out_major, int *out_minor, int *out_patch) noexcept {
  if (out_major) *out_major = MRT_VERSION_MAJOR;
  if (out_minor) *out_minor = MRT_VERSION_MINOR;
  if (out_patch) *out_patch = MRT_VERSION_PATCH;
}

MRT_API mrt_status mrt_check_version(int major, int minor) noexcept {
  return mrt::capi::guard(__func__, [&] {
    if (major < 0 || minor < 0)
      throw mrt::Error(mrt::ErrorCode::InvalidArgument,
                       "version {}.{} is not a version (negative part)", major, minor);
    if (major != MRT_VERSION_MAJOR || minor > MRT_VERSION_MINOR)
      throw mrt::Error(mrt::ErrorCode::VersionMismatch,
                       "caller needs libmrt {}.{}, this library is {} (same major and minor >= {} "
                       "required)",
                       major, minor, mrt_version_string(), minor);
  });
}

}  // extern "C"
