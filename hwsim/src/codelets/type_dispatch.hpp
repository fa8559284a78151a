// Compile-time mapping from hwsim::Type to host storage and the conversions
// codelets use. Conversions to integer types saturate and map NaN to 0 so no
// input can trigger undefined behaviour.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include <Eigen/Core>

#include "hwsim/types.hpp"

namespace hwsim::detail {

template <Type T> struct StorageOf;
template <> struct StorageOf<Type::BOOL> { using type = std::uint8_t; };
template <> struct StorageOf<Type::U8> { using type = std::uint8_t; };
template <> struct StorageOf<Type::S8> { using type = std::int8_t; };
template <> struct StorageOf<Type::U16> { using type = std::uint16_t; };
template <> struct StorageOf<Type::S16> { using type = std::int16_t; };
template <> struct StorageOf<Type::S32> { using type = std::int32_t; };
template <> struct StorageOf<Type::U32> { using type = std::uint32_t; };
template <> struct StorageOf<Type::F16> { using type = Eigen::half; };
template <> struct StorageOf<Type::F32> { using type = float; };
template <Type T> using Storage = typename StorageOf<T>::type;

template <Type T> using TypeTag = std::integral_constant<Type, T>;

// Calls fn(TypeTag<T>{}) for the runtime type.
template <typename Fn> decltype(auto) dispatchType(Type type, Fn &&fn) {
  switch (type) {
    case Type::BOOL: return fn(TypeTag<Type::BOOL>{});
    case Type::U8: return fn(TypeTag<Type::U8>{});
    case Type::S8: return fn(TypeTag<Type::S8>{});
    case Type::U16: return fn(TypeTag<Type::U16>{});
    case Type::S16: return fn(TypeTag<Type::S16>{});
    case Type::S32: return fn(TypeTag<Type::S32>{});
    case Type::U32: return fn(TypeTag<Type::U32>{});
    case Type::F16: return fn(TypeTag<Type::F16>{});
    case Type::F32: break;
  }
  return fn(TypeTag<Type::F32>{});
}

template <Type T> inline constexpr bool kIsFloat = T == Type::F16 || T == Type::F32;
template <Type T> inline constexpr bool kIsBool = T == Type::BOOL;

template <Type T> double toDouble(Storage<T> v) {
  if constexpr (T == Type::F16) return static_cast<double>(static_cast<float>(v));
  else return static_cast<double>(v);
}

template <Type T> Storage<T> fromDouble(double v) {
  using S = Storage<T>;
  if constexpr (T == Type::BOOL) {
    return static_cast<S>(v != 0.0 ? 1 : 0);
  } else if constexpr (T == Type::F16) {
    return S(static_cast<float>(v));
  } else if constexpr (T == Type::F32) {
    return static_cast<float>(v);
  } else {
    if (std::isnan(v)) return 0;
    constexpr double lo = static_cast<double>(std::numeric_limits<S>::min());
    constexpr double hi = static_cast<double>(std::numeric_limits<S>::max());
    if (v <= lo) return std::numeric_limits<S>::min();
    if (v >= hi) return std::numeric_limits<S>::max();
    return static_cast<S>(v);  // truncates toward zero
  }
}

// Integer arithmetic is done in 64 bits and wrapped back (C++20 defines the
// narrowing conversion as modular), so overflow is defined.
template <Type T> Storage<T> wrapInt(std::int64_t v) { return static_cast<Storage<T>>(v); }

}  // namespace hwsim::detail
