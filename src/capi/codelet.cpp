// The built-in codelet library in the C API (include/mrt_c.h, "Compute sets,
// vertices and codelets"): discovery for bindings and tools, and name lookup
// for the graph calls.
#include "capi/codelet.hpp"

#include <string>
#include <strings.h>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "capi/guard.hpp"
#include "capi/sized_struct.hpp"

namespace mrt::capi {

namespace {

const std::vector<hwsim::CodeletInfo> &library() { return hwsim::codeletInfos(); }

template <typename Items>
std::string namesOf(const Items &items) {
  std::vector<std::string> names;
  for (const auto &item : items) names.emplace_back(item.name);
  return names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", "));
}

const hwsim::CodeletInfo &codeletAt(std::size_t index) {
  if (index >= library().size()) {
    throw Error(ErrorCode::InvalidArgument, "codelet index {} is out of range: there are {} codelets", index,
                library().size());
  }
  return library()[index];
}

}  // namespace

std::size_t codeletIndexOf(const char *name, const char *argument) {
  requireNotNull(name, argument);
  for (std::size_t i = 0; i < library().size(); ++i) {
    if (std::string_view(library()[i].name) == name) return i;
  }
  for (const auto &c : library()) {
    if (strcasecmp(c.name, name) == 0) {
      throw Error(ErrorCode::NotFound, "{} '{}' is not a codelet; did you mean '{}'?", argument, name, c.name);
    }
  }
  throw Error(ErrorCode::NotFound, "{} '{}' is not a codelet; the codelets are {}", argument, name,
              namesOf(library()));
}

const hwsim::CodeletField &codeletField(std::size_t codelet, const char *field, const char *argument) {
  requireNotNull(field, argument);
  const auto &c = codeletAt(codelet);
  for (const auto &f : c.fields) {
    if (std::string_view(f.name) == field) return f;
  }
  throw Error(ErrorCode::NotFound, "codelet {} has no field '{}'; its fields are {}", c.name, field,
              namesOf(c.fields));
}

const hwsim::CodeletAttribute &codeletAttribute(std::size_t codelet, const char *attribute, const char *argument) {
  requireNotNull(attribute, argument);
  const auto &c = codeletAt(codelet);
  for (const auto &a : c.attributes) {
    if (std::string_view(a.name) == attribute) return a;
  }
  throw Error(ErrorCode::NotFound, "codelet {} has no attribute '{}'; its attributes are {}", c.name, attribute,
              namesOf(c.attributes));
}

}  // namespace mrt::capi

using mrt::Error;
using mrt::ErrorCode;
using namespace mrt::capi;

MRT_API size_t mrt_codelet_count(void) noexcept { return hwsim::codeletInfos().size(); }

MRT_API mrt_status mrt_codelet_get_info(size_t index, mrt_codelet_info *out_info) noexcept {
  return guard("mrt_codelet_get_info", [&] {
    const auto &c = codeletAt(index);
    mrt_codelet_info info{};
    info.name = c.name;
    info.description = c.description;
    info.num_fields = c.fields.size();
    info.num_attributes = c.attributes.size();
    fillSized(out_info, info, MRT_CODELET_INFO_V1_SIZE, "out_info");
  });
}

MRT_API mrt_status mrt_codelet_field(size_t index, size_t field, const char **out_name,
                                     int32_t *out_direction) noexcept {
  return guard("mrt_codelet_field", [&] {
    requireNotNull(out_name, "out_name");
    requireNotNull(out_direction, "out_direction");
    const auto &c = codeletAt(index);
    if (field >= c.fields.size()) {
      throw Error(ErrorCode::InvalidArgument, "field {} is out of range: codelet {} has {} fields", field, c.name,
                  c.fields.size());
    }
    *out_name = c.fields[field].name;
    *out_direction = static_cast<int32_t>(c.fields[field].direction);
  });
}

MRT_API mrt_status mrt_codelet_attribute(size_t index, size_t attribute, const char **out_name,
                                         const double **out_defaults, size_t *out_num_defaults) noexcept {
  return guard("mrt_codelet_attribute", [&] {
    requireNotNull(out_name, "out_name");
    requireNotNull(out_defaults, "out_defaults");
    requireNotNull(out_num_defaults, "out_num_defaults");
    const auto &c = codeletAt(index);
    if (attribute >= c.attributes.size()) {
      throw Error(ErrorCode::InvalidArgument, "attribute {} is out of range: codelet {} has {} attributes",
                  attribute, c.name, c.attributes.size());
    }
    const auto &a = c.attributes[attribute];
    *out_name = a.name;
    *out_defaults = a.defaults;
    *out_num_defaults = a.numDefaults;
  });
}

static_assert(static_cast<int>(hwsim::FieldDirection::In) == MRT_FIELD_IN);
static_assert(static_cast<int>(hwsim::FieldDirection::Out) == MRT_FIELD_OUT);
static_assert(static_cast<int>(hwsim::FieldDirection::InOut) == MRT_FIELD_INOUT);
