// PopEF file images in memory (include/mrt_c.h, "Writing models"): a model
// written into a caller's buffer, and a model loaded from one. The bytes are
// exactly those of the file mrt_model_write() writes.
#include <memory>
#include <span>

#include "capi/guard.hpp"
#include "capi/model.hpp"
#include "popef/reader.hpp"
#include "popef/writer.hpp"

namespace {

using mrt::Error;
using mrt::ErrorCode;
using mrt::capi::requireNotNull;
namespace popef = mrt::popef;

}  // namespace

extern "C" {

MRT_API mrt_status mrt_model_write_to_memory(const mrt_model *model, void *buffer, size_t buffer_size,
                                             size_t *out_size) noexcept {
  return mrt::capi::guard(__func__, [&] {
    const popef::Model &m = *mrt::capi::modelOf(model, "model");
    requireNotNull(out_size, "out_size");
    const std::uint64_t size = popef::modelFileSize(m);
    if (buffer != nullptr) {
      if (buffer_size < size) {
        throw Error(ErrorCode::InvalidArgument,
                    "buffer_size {} is too small: model '{}' takes {} bytes", buffer_size,
                    m.metadata.executable(), size);
      }
      popef::Writer writer(std::make_unique<popef::SpanSink>(
          std::span(static_cast<std::byte *>(buffer), static_cast<std::size_t>(size))));
      writer.writeModel(m);
      writer.close();
    }
    *out_size = static_cast<size_t>(size);
  });
}

MRT_API mrt_status mrt_model_load_from_memory(const void *data, size_t size,
                                              mrt_model **out) noexcept {
  return mrt::capi::guard(__func__, [&] {
    requireNotNull(data, "data");
    requireNotNull(out, "out");
    auto model = popef::loadModelFromMemory(std::span(static_cast<const std::byte *>(data), size));
    *out = new mrt_model{std::move(model)};
  });
}

}  // extern "C"
