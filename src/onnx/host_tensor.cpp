#include "onnx/host_tensor.hpp"

#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.hpp"

namespace mrt::onnx {

using TP = ::onnx::TensorProto;

std::int64_t saturatingInt64(double v) {
  constexpr double kTwoTo63 = 9223372036854775808.0;
  if (std::isnan(v)) return 0;
  if (v >= kTwoTo63) return std::numeric_limits<std::int64_t>::max();
  if (v < -kTwoTo63) return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(v);
}

std::size_t numElements(const Dims &dims) {
  std::size_t n = 1;
  for (const auto d : dims) n *= static_cast<std::size_t>(d < 0 ? 0 : d);
  return n;
}

std::string toString(const Dims &dims) { return fmt::format("[{}]", fmt::join(dims, ", ")); }

hwsim::Shape toShape(const Dims &dims) {
  hwsim::Shape shape;
  for (const auto d : dims) shape.push_back(static_cast<std::size_t>(d));
  return shape;
}

Dims toDims(const hwsim::Shape &shape) {
  Dims dims;
  for (const auto d : shape) dims.push_back(static_cast<std::int64_t>(d));
  return dims;
}

std::string typeName(std::int32_t onnxType) {
  if (TP::DataType_IsValid(onnxType)) return TP::DataType_Name(static_cast<TP::DataType>(onnxType));
  return std::to_string(onnxType);
}

namespace {

std::size_t byteSize(std::int32_t type) {
  switch (type) {
    case TP::BOOL: case TP::INT8: case TP::UINT8: return 1;
    case TP::INT16: case TP::UINT16: case TP::FLOAT16: case TP::BFLOAT16: return 2;
    case TP::INT32: case TP::UINT32: case TP::FLOAT: return 4;
    case TP::INT64: case TP::UINT64: case TP::DOUBLE: return 8;
    default: return 0;
  }
}

template <typename T>
double load(const char *p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return static_cast<double>(v);
}

double fromRaw(const char *p, std::int32_t type) {
  switch (type) {
    case TP::BOOL: return load<std::uint8_t>(p) != 0 ? 1.0 : 0.0;
    case TP::INT8: return load<std::int8_t>(p);
    case TP::UINT8: return load<std::uint8_t>(p);
    case TP::INT16: return load<std::int16_t>(p);
    case TP::UINT16: return load<std::uint16_t>(p);
    case TP::FLOAT16: {
      std::uint16_t bits;
      std::memcpy(&bits, p, 2);
      return hwsim::halfToFloat(bits);
    }
    case TP::BFLOAT16: {
      std::uint16_t bits;
      std::memcpy(&bits, p, 2);
      const std::uint32_t wide = static_cast<std::uint32_t>(bits) << 16;
      float f;
      std::memcpy(&f, &wide, 4);
      return f;
    }
    case TP::INT32: return load<std::int32_t>(p);
    case TP::UINT32: return load<std::uint32_t>(p);
    case TP::FLOAT: return load<float>(p);
    case TP::INT64: return load<std::int64_t>(p);
    case TP::UINT64: return load<std::uint64_t>(p);
    case TP::DOUBLE: return load<double>(p);
    default: return 0;
  }
}

}  // namespace

HostTensor fromProto(const TP &tensor) {
  HostTensor t;
  t.type = tensor.data_type();
  for (const auto d : tensor.dims()) {
    if (d < 0) throw Error(ErrorCode::CorruptModel, "tensor '{}': negative dimension {}", tensor.name(), d);
    t.dims.push_back(d);
  }
  const std::size_t elementSize = byteSize(t.type);
  if (elementSize == 0) {
    throw Error(ErrorCode::Unimplemented, "tensor '{}': element type {} is not supported", tensor.name(),
                typeName(t.type));
  }
  const std::size_t n = numElements(t.dims);
  // Guard the allocation below against dimensions a corrupt file made up.
  if (n > (std::size_t{1} << 34)) {
    throw Error(ErrorCode::CorruptModel, "tensor '{}': {} elements ({}) is implausibly large", tensor.name(), n,
                toString(t.dims));
  }
  auto mismatch = [&](std::size_t got, const char *field) {
    return Error(ErrorCode::CorruptModel, "tensor '{}' {} {}: {} holds {} values, expected {}", tensor.name(),
                 typeName(t.type), toString(t.dims), field, got, n);
  };
  t.values.reserve(n);
  if (tensor.has_raw_data()) {
    const std::string &raw = tensor.raw_data();
    if (raw.size() != n * elementSize) throw mismatch(raw.size() / elementSize, "raw_data");
    for (std::size_t i = 0; i < n; ++i) t.values.push_back(fromRaw(raw.data() + i * elementSize, t.type));
    return t;
  }
  auto take = [&](const auto &field, const char *fieldName) {
    if (static_cast<std::size_t>(field.size()) != n) throw mismatch(static_cast<std::size_t>(field.size()), fieldName);
    for (const auto v : field) t.values.push_back(static_cast<double>(v));
  };
  switch (t.type) {
    case TP::FLOAT: take(tensor.float_data(), "float_data"); break;
    case TP::DOUBLE: take(tensor.double_data(), "double_data"); break;
    case TP::INT64: take(tensor.int64_data(), "int64_data"); break;
    case TP::UINT32: case TP::UINT64: take(tensor.uint64_data(), "uint64_data"); break;
    case TP::FLOAT16: case TP::BFLOAT16: {
      // Half values travel as their bit patterns in int32_data.
      if (static_cast<std::size_t>(tensor.int32_data_size()) != n) throw mismatch(tensor.int32_data_size(), "int32_data");
      for (const auto bits : tensor.int32_data()) {
        const std::uint16_t b = static_cast<std::uint16_t>(bits);
        char raw[2];
        std::memcpy(raw, &b, 2);
        t.values.push_back(fromRaw(raw, t.type));
      }
      break;
    }
    default: take(tensor.int32_data(), "int32_data"); break;
  }
  return t;
}

std::optional<hwsim::Type> deviceType(std::int32_t onnxType) {
  switch (onnxType) {
    case TP::FLOAT: return hwsim::Type::F32;
    case TP::FLOAT16: return hwsim::Type::F16;
    case TP::INT32: case TP::INT64: return hwsim::Type::S32;
    case TP::UINT32: case TP::UINT64: return hwsim::Type::U32;
    case TP::DOUBLE: return hwsim::Type::F32;
    case TP::INT16: return hwsim::Type::S16;
    case TP::UINT16: return hwsim::Type::U16;
    case TP::INT8: return hwsim::Type::S8;
    case TP::UINT8: return hwsim::Type::U8;
    case TP::BOOL: return hwsim::Type::BOOL;
    default: return std::nullopt;
  }
}

namespace {

template <typename T>
void storeInt(std::vector<std::uint8_t> &out, std::size_t i, double v, const std::string &name) {
  if (v < static_cast<double>(std::numeric_limits<T>::min()) || v > static_cast<double>(std::numeric_limits<T>::max())) {
    throw Error(ErrorCode::Unimplemented, "constant '{}': value {} at element {} does not fit the device's 32-bit "
                                          "or narrower integers", name, v, i);
  }
  const T x = static_cast<T>(v);
  std::memcpy(out.data() + i * sizeof(T), &x, sizeof(T));
}

}  // namespace

std::vector<std::uint8_t> toDeviceBytes(const HostTensor &t, hwsim::Type type, const std::string &name) {
  std::vector<std::uint8_t> out(t.values.size() * hwsim::sizeOf(type));
  for (std::size_t i = 0; i < t.values.size(); ++i) {
    const double v = t.values[i];
    switch (type) {
      case hwsim::Type::F32: {
        const float f = static_cast<float>(v);
        std::memcpy(out.data() + i * 4, &f, 4);
        break;
      }
      case hwsim::Type::F16: {
        const std::uint16_t h = hwsim::floatToHalf(static_cast<float>(v));
        std::memcpy(out.data() + i * 2, &h, 2);
        break;
      }
      case hwsim::Type::BOOL: out[i] = v != 0 ? 1 : 0; break;
      case hwsim::Type::U8: storeInt<std::uint8_t>(out, i, v, name); break;
      case hwsim::Type::S8: storeInt<std::int8_t>(out, i, v, name); break;
      case hwsim::Type::U16: storeInt<std::uint16_t>(out, i, v, name); break;
      case hwsim::Type::S16: storeInt<std::int16_t>(out, i, v, name); break;
      case hwsim::Type::S32: storeInt<std::int32_t>(out, i, v, name); break;
      case hwsim::Type::U32: storeInt<std::uint32_t>(out, i, v, name); break;
    }
  }
  return out;
}

void convertValues(std::vector<double> &values, std::int32_t onnxType) {
  for (double &v : values) {
    switch (onnxType) {
      case TP::FLOAT: v = static_cast<float>(v); break;
      case TP::FLOAT16: v = hwsim::halfToFloat(hwsim::floatToHalf(static_cast<float>(v))); break;
      case TP::DOUBLE: break;
      case TP::BOOL: v = v != 0 ? 1 : 0; break;
      default: v = std::isfinite(v) ? std::trunc(v) : 0; break;
    }
  }
}

HostTensor transposedMatrix(const HostTensor &t, std::size_t offset, std::int64_t rows, std::int64_t cols) {
  HostTensor out{t.type, {cols, rows}, std::vector<double>(static_cast<std::size_t>(rows * cols))};
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c) {
      out.values[static_cast<std::size_t>(c * rows + r)] = t.values[offset + static_cast<std::size_t>(r * cols + c)];
    }
  }
  return out;
}

std::optional<Dims> broadcastDims(const Dims &a, const Dims &b) {
  const std::size_t rank = std::max(a.size(), b.size());
  Dims out(rank);
  for (std::size_t i = 0; i < rank; ++i) {
    const std::int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const std::int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

HostTensor broadcastTo(const HostTensor &t, const Dims &to) {
  HostTensor out{t.type, to, std::vector<double>(numElements(to))};
  const std::size_t rank = to.size();
  const std::size_t offset = rank - t.dims.size();
  // The source stride of each output dimension (0 where t is broadcast).
  std::vector<std::size_t> stride(rank, 0);
  std::size_t s = 1;
  for (std::size_t i = t.dims.size(); i-- > 0;) {
    stride[i + offset] = t.dims[i] == 1 ? 0 : s;
    s *= static_cast<std::size_t>(t.dims[i]);
  }
  std::vector<std::size_t> index(rank, 0);
  for (std::size_t flat = 0; flat < out.values.size(); ++flat) {
    std::size_t src = 0;
    for (std::size_t d = 0; d < rank; ++d) src += index[d] * stride[d];
    out.values[flat] = t.values[src];
    for (std::size_t d = rank; d-- > 0;) {
      if (++index[d] < static_cast<std::size_t>(to[d])) break;
      index[d] = 0;
    }
  }
  return out;
}

std::size_t normalizeAxis(std::int64_t axis, std::size_t rank, const std::string &what) {
  const auto r = static_cast<std::int64_t>(rank);
  if (axis < -r || axis >= r) {
    throw Error(ErrorCode::CorruptModel, "{}: axis {} is out of range for rank {}", what, axis, rank);
  }
  return static_cast<std::size_t>(axis < 0 ? axis + r : axis);
}

}  // namespace mrt::onnx
