// mrt-info's human-readable output: one table of blobs per file, then per
// model its metadata, program flow, anchors and data blobs.
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "inspect.hpp"

namespace mrt::info {

namespace {

using popef::Anchor;
using popef::ProgramFlow;

// Left-aligned columns, two spaces apart, each as wide as its widest cell.
class Table {
 public:
  explicit Table(std::vector<std::string> headers) : rows_{std::move(headers)} {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }

  std::string render(const std::string &indent) const {
    std::vector<std::size_t> widths(rows_.front().size(), 0);
    for (const auto &row : rows_) {
      for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
    }
    std::string out;
    for (const auto &row : rows_) {
      std::string line = indent;
      for (std::size_t c = 0; c < row.size(); ++c) {
        line += c + 1 == row.size() ? row[c] : fmt::format("{:<{}}  ", row[c], widths[c]);
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    }
    return out;
  }

 private:
  std::vector<std::vector<std::string>> rows_;
};

std::string orDash(const std::string &text) { return text.empty() ? "-" : text; }

std::string programList(const std::vector<ProgramFlow::ProgramIndexType> &programs,
                        const ProgramFlow &flow) {
  if (programs.empty()) return "-";
  std::vector<std::string> parts;
  for (const auto index : programs) {
    const auto name = flow.programsMap().find(index);
    parts.push_back(name == flow.programsMap().end() ? fmt::format("{}", index)
                                                     : fmt::format("{} ({})", index, name->second));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string options(const popef::OptionsMap &map) {
  if (map.empty()) return "-";
  std::vector<std::string> parts;
  for (const auto &[key, value] : map) parts.push_back(key + "=" + value);
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string shape(const popef::TensorInfo &info) {
  return fmt::format("[{}]", fmt::join(info.shape(), ","));
}

std::string remoteBuffer(const Anchor &anchor) {
  if (!anchor.remoteBuffer()) return "-";
  return fmt::format("{} x{}", anchor.remoteBuffer()->name, anchor.remoteBuffer()->repeats);
}

void renderFile(const FileReport &file, std::string &out) {
  if (file.blobs.empty()) {
    out += fmt::format("File '{}' ({} bytes): no readable blob\n", file.path, file.size);
    return;
  }
  out += fmt::format("File '{}' ({} bytes, {} blobs)\n", file.path, file.size, file.blobs.size());
  Table table({"#", "type", "executable", "name", "offset", "size", "checksum"});
  for (const BlobRow &blob : file.blobs) {
    table.add({fmt::format("{}", blob.index), std::string(popef::toString(blob.type)),
               orDash(blob.executable), orDash(blob.name), fmt::format("{}", blob.offset),
               fmt::format("{}", blob.payloadSize),
               blob.checksumOk() ? fmt::format("ok {:016x}", blob.computedChecksum)
                                 : fmt::format("BAD (stored {:016x}, computed {:016x})",
                                               blob.storedChecksum, blob.computedChecksum)});
  }
  out += table.render("  ");
  for (const BlobRow &blob : file.blobs) {
    if (!blob.problem.empty()) out += fmt::format("  blob {}: {}\n", blob.index, blob.problem);
  }
}

void renderModel(const popef::Model &model, std::string &out) {
  const popef::Metadata &m = model.metadata;
  out += fmt::format("\nModel '{}'\n", m.executable());
  Table meta({"replication factor", fmt::format("{}", m.replicationFactor())});
  meta.add({"IPUs", fmt::format("{}", m.numIpus())});
  meta.add({"IPU version", fmt::format("{}", m.ipuVersion())});
  meta.add({"inference", m.isInference() ? "yes" : "no"});
  meta.add({"seed handle", orDash(m.seedHandle())});
  if (m.batchingDim()) meta.add({"batching dim", fmt::format("{}", *m.batchingDim())});
  meta.add({"package hash", orDash(m.packageHash())});
  meta.add({"engine options", options(m.engineOptions())});
  meta.add({"device options", options(m.deviceOptions())});
  meta.add({"executable", m.sharedExecutable().empty()
                              ? fmt::format("{} bytes", model.executable().bytes().size())
                              : fmt::format("'{}', {} bytes, fused: shared with the models fused with this one",
                                            m.sharedExecutable(), model.executable().bytes().size())});
  out += meta.render("  ");

  const ProgramFlow &flow = m.programFlow();
  out += "\n  Program flow\n";
  Table phases({"load", programList(flow.load(), flow)});
  phases.add({"main", programList(flow.main(), flow)});
  phases.add({"save", programList(flow.save(), flow)});
  out += phases.render("    ");

  out += fmt::format("\n  Anchors ({})\n", m.anchors().size());
  Table anchors({"name", "handle", "type", "dtype", "shape", "bytes", "programs", "per replica",
                 "source", "remote buffer"});
  for (const Anchor &a : m.anchors()) {
    anchors.add({a.name(), a.handle(), std::string(popef::toString(a.type())),
                 std::string(popef::toString(a.tensorInfo().dataType())), shape(a.tensorInfo()),
                 fmt::format("{}", a.tensorInfo().sizeInBytes()),
                 a.programs().empty() ? "-" : fmt::format("{}", fmt::join(a.programs(), ",")),
                 a.isPerReplica() ? "yes" : "no", std::string(popef::toString(a.dataSource())),
                 remoteBuffer(a)});
  }
  out += anchors.render("    ");

  if (!model.tensorDataList().empty() || !model.feedDataList().empty()) {
    out += "\n  Tensor data\n";
    Table data({"name", "kind", "dtype", "shape", "tensors", "bytes", "file", "blob"});
    auto where = [](const std::optional<popef::BlobLocation> &origin) {
      return origin ? std::vector<std::string>{origin->file, fmt::format("{}", origin->index)}
                    : std::vector<std::string>{"-", "-"};
    };
    for (const popef::TensorData &t : model.tensorDataList()) {
      const auto at = where(t.origin());
      data.add({t.name(), "TensorData", std::string(popef::toString(t.tensorInfo().dataType())),
                shape(t.tensorInfo()), "1", fmt::format("{}", t.size()), at[0], at[1]});
    }
    for (const popef::FeedData &f : model.feedDataList()) {
      const auto at = where(f.origin());
      data.add({f.name(), "FeedData", std::string(popef::toString(f.tensorInfo().dataType())),
                shape(f.tensorInfo()), fmt::format("{}", f.numTensors()),
                fmt::format("{}", f.bytes().size()), at[0], at[1]});
    }
    out += data.render("    ");
  }
  if (!model.opaqueBlobs().empty()) {
    out += "\n  Opaque blobs\n";
    Table opaque({"name", "bytes"});
    for (const popef::OpaqueBlob &o : model.opaqueBlobs()) {
      opaque.add({o.name(), fmt::format("{}", o.bytes().size())});
    }
    out += opaque.render("    ");
  }
}

}  // namespace

std::string renderText(const Report &report) {
  std::string out;
  for (std::size_t i = 0; i < report.files.size(); ++i) {
    if (i > 0) out += "\n";
    renderFile(report.files[i], out);
  }
  for (const auto &model : report.models) renderModel(*model, out);
  return out;
}

}  // namespace mrt::info
