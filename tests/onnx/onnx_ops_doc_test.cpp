// docs/onnx.md against the frontend: the op types named in the first column
// of the "Operators on the device" table are exactly those of the op
// registry (opRegistry().opTypes()), and the "Host-evaluated ops:" list of
// "Constant folding" names exactly the host evaluator's (foldableOps()).
// A failure lists what is missing on either side. Links mrt_core for the
// internals.
#include <algorithm>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "onnx/fold.hpp"
#include "onnx/registry.hpp"

namespace {

std::string readDoc() {
  std::ifstream in(MRT_DOCS_ONNX_MD);
  EXPECT_TRUE(in) << MRT_DOCS_ONNX_MD;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The op names of a piece of text: the identifiers starting with a capital
// letter outside parentheses ("HardSigmoid (alpha, beta), Clip" -> HardSigmoid, Clip).
std::set<std::string> opNames(const std::string &text) {
  std::string outside;
  int depth = 0;
  for (const char c : text) {
    if (c == '(') {
      ++depth;
    } else if (c == ')') {
      depth = std::max(0, depth - 1);
    } else {
      outside += depth == 0 ? c : ' ';
    }
  }
  std::set<std::string> names;
  static const std::regex identifier(R"(\b[A-Z][A-Za-z0-9]*\b)");
  for (std::sregex_iterator it(outside.begin(), outside.end(), identifier), end; it != end; ++it) {
    names.insert(it->str());
  }
  return names;
}

// The first column of every body row of the table under `heading`.
std::set<std::string> tableOps(const std::string &doc, const std::string &heading) {
  std::istringstream lines(doc);
  std::set<std::string> names;
  bool inSection = false;
  int row = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("## ", 0) == 0) {
      inSection = line == heading;
      continue;
    }
    if (!inSection || line.rfind("|", 0) != 0) continue;
    if (++row <= 2) continue;  // the header and the |---| line
    const size_t end = line.find('|', 1);
    const std::set<std::string> cell = opNames(line.substr(1, end == std::string::npos ? end : end - 1));
    names.insert(cell.begin(), cell.end());
  }
  EXPECT_GT(row, 2) << "no table under '" << heading << "' in " << MRT_DOCS_ONNX_MD;
  return names;
}

// The names of the sentence starting with `lead` (up to its full stop).
std::set<std::string> listedOps(const std::string &doc, const std::string &lead) {
  const size_t start = doc.find(lead);
  EXPECT_NE(start, std::string::npos) << "no '" << lead << "' in " << MRT_DOCS_ONNX_MD;
  if (start == std::string::npos) return {};
  const size_t end = doc.find('.', start);
  return opNames(doc.substr(start + lead.size(), end - start - lead.size()));
}

std::string difference(const std::set<std::string> &a, const std::set<std::string> &b) {
  std::vector<std::string> missing;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(missing));
  std::string text;
  for (const std::string &name : missing) text += (text.empty() ? "" : " ") + name;
  return text.empty() ? "(none)" : text;
}

TEST(OnnxOpsDoc, DeviceTableMatchesRegistry) {
  const std::set<std::string> documented = tableOps(readDoc(), "## Operators on the device");
  const std::vector<std::string> types = mrt::onnx::opRegistry().opTypes();
  const std::set<std::string> registered(types.begin(), types.end());
  EXPECT_EQ(documented, registered)
      << "registered but not in docs/onnx.md's \"Operators on the device\" table: "
      << difference(registered, documented) << "\nin the table but not registered: "
      << difference(documented, registered);
}

TEST(OnnxOpsDoc, HostEvaluatedListMatchesFolder) {
  const std::set<std::string> documented = listedOps(readDoc(), "Host-evaluated ops:");
  const std::set<std::string> &foldable = mrt::onnx::foldableOps();
  EXPECT_EQ(documented, foldable) << "folded on the host but not in docs/onnx.md's \"Host-evaluated ops\": "
                                  << difference(foldable, documented)
                                  << "\nlisted there but not folded: " << difference(documented, foldable);
}

// The parser itself: parentheses and commas.
TEST(OnnxOpsDoc, OpNamesSkipParentheses) {
  EXPECT_EQ(opNames(" Reciprocal, HardSigmoid (alpha, beta), Clip (min/max attributes or Constant inputs) "),
            (std::set<std::string>{"Reciprocal", "HardSigmoid", "Clip"}));
  EXPECT_EQ(opNames("ReduceSum ReduceMean"), (std::set<std::string>{"ReduceSum", "ReduceMean"}));
}

}  // namespace
