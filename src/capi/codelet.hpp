// Looking up built-in codelets, their fields and attributes by the names a
// C caller gives, with NOT_FOUND messages that list what exists.
#pragma once

#include <cstddef>

#include <hwsim/codelets.hpp>

namespace mrt::capi {

// The index of codelet `name` in hwsim::codeletInfos(); NotFound suggesting
// a name that differs only in case, or listing every codelet.
std::size_t codeletIndexOf(const char *name, const char *argument);

// The field of a codelet; NotFound listing the codelet's fields.
const hwsim::CodeletField &codeletField(std::size_t codelet, const char *field, const char *argument);
// The attribute of a codelet; NotFound listing the codelet's attributes.
const hwsim::CodeletAttribute &codeletAttribute(std::size_t codelet, const char *attribute, const char *argument);

}  // namespace mrt::capi
