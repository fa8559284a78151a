// LazyText: the text is made only when asked for, from a lambda or a
// literal; an empty LazyText gives "".
#include <gtest/gtest.h>

#include <string>

#include "common/lazy_text.hpp"

namespace mrt {
namespace {

std::string describe(LazyText text) { return text.empty() ? std::string("<none>") : text(); }

TEST(LazyText, MakesTheTextOnlyWhenAsked) {
  int made = 0;
  const std::string name = "x";
  const auto make = [&] {
    ++made;
    return "input queue '" + name + "'";
  };
  const LazyText text(make);
  EXPECT_EQ(made, 0);
  EXPECT_FALSE(text.empty());
  EXPECT_EQ(text(), "input queue 'x'");
  EXPECT_EQ(text(), "input queue 'x'");
  EXPECT_EQ(made, 2);
}

TEST(LazyText, TakesALiteralAndCanBeEmpty) {
  EXPECT_EQ(describe("the load flow"), "the load flow");
  EXPECT_EQ(describe({}), "<none>");
  EXPECT_EQ(LazyText()(), "");
  EXPECT_EQ(describe([] { return std::string("made"); }), "made");
}

}  // namespace
}  // namespace mrt
