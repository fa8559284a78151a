// LazyText: part of an error message, made only if the message is. A
// reference to a callable returning the text, so a constructor that may
// refuse its arguments can name its owner ("input queue 'x'") without
// every successful call formatting that name: a dozen such fmt::format
// calls were 8% of a small model's runner creation (issue 14).
//
// It refers to the callable, which must outlive it: pass a lambda at the
// call (`[&] { return fmt::format(...); }`), whose temporary lives until
// the call returns, and do not keep the LazyText.
#pragma once

#include <string>
#include <type_traits>

namespace mrt {

class LazyText {
 public:
  LazyText() = default;
  template <typename Make, typename = std::enable_if_t<std::is_invocable_r_v<std::string, const Make &>>>
  LazyText(const Make &make)  // NOLINT(google-explicit-constructor): passed as a lambda
      : make_(&make), call_([](const void *m) -> std::string { return (*static_cast<const Make *>(m))(); }) {}
  // A text known already (a literal), which must outlive the LazyText too.
  LazyText(const char *text)  // NOLINT(google-explicit-constructor)
      : make_(text), call_([](const void *t) -> std::string { return static_cast<const char *>(t); }) {}

  bool empty() const noexcept { return call_ == nullptr; }
  // The text; empty for a default-constructed LazyText.
  std::string operator()() const { return call_ != nullptr ? call_(make_) : std::string(); }

 private:
  const void *make_ = nullptr;
  std::string (*call_)(const void *) = nullptr;
};

}  // namespace mrt
