// mrt-info's human-readable output: one table of blobs per file, then per
// model its metadata, program flow, anchors and data blobs.
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "data_type_name.hpp"
#include "inspect.hpp"
#include "names.hpp"

namespace mrt::info {

namespace {

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

std::string programList(const std::vector<std::uint64_t> &programs, const std::map<std::uint64_t, std::string> &names) {
  if (programs.empty()) return "-";
  std::vector<std::string> parts;
  for (const auto index : programs) {
    const auto name = names.find(index);
    parts.push_back(name == names.end() ? fmt::format("{}", index) : fmt::format("{} ({})", index, name->second));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string options(const Options &map) {
  if (map.empty()) return "-";
  std::vector<std::string> parts;
  for (const auto &[key, value] : map) parts.push_back(key + "=" + value);
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string shape(const std::vector<std::int64_t> &dims) { return fmt::format("[{}]", fmt::join(dims, ",")); }

std::string remoteBuffer(const AnchorInfo &anchor) {
  if (anchor.remote_buffer.empty()) return "-";
  return fmt::format("{} x{}", anchor.remote_buffer, anchor.remote_buffer_repeats);
}

void renderFile(const ListedFile &file, std::string &out) {
  if (file.blobs.empty()) {
    out += fmt::format("File '{}' ({} bytes): no readable blob\n", file.path, file.size);
    return;
  }
  out += fmt::format("File '{}' ({} bytes, {} blobs)\n", file.path, file.size, file.blobs.size());
  Table table({"#", "type", "executable", "name", "offset", "size", "checksum"});
  for (const BlobInfo &blob : file.blobs) {
    table.add({fmt::format("{}", blob.index), blobTypeName(blob.type), orDash(blob.executable), orDash(blob.name),
               fmt::format("{}", blob.offset), fmt::format("{}", blob.payload_size),
               blob.checksumOk() ? fmt::format("ok {:016x}", blob.computed_checksum)
                                 : fmt::format("BAD (stored {:016x}, computed {:016x})", blob.stored_checksum,
                                               blob.computed_checksum)});
  }
  out += table.render("  ");
  for (const BlobInfo &blob : file.blobs) {
    if (!blob.problem.empty()) out += fmt::format("  blob {}: {}\n", blob.index, blob.problem);
  }
}

void renderModel(const Report &report, const ModelReport &model, std::string &out) {
  const ModelInfo &m = model.info;
  out += fmt::format("\nModel '{}'\n", m.executable);
  Table meta({"replication factor", fmt::format("{}", m.replication_factor)});
  meta.add({"IPUs", fmt::format("{}", m.num_ipus)});
  meta.add({"IPU version", fmt::format("{}", m.ipu_version)});
  meta.add({"inference", m.is_inference ? "yes" : "no"});
  meta.add({"seed handle", orDash(m.seed_handle)});
  if (model.batchingDim) meta.add({"batching dim", fmt::format("{}", *model.batchingDim)});
  meta.add({"package hash", orDash(m.package_hash)});
  meta.add({"engine options", options(model.engineOptions)});
  meta.add({"device options", options(model.deviceOptions)});
  meta.add({"executable", m.shared_executable.empty()
                              ? fmt::format("{} bytes", model.executableBytes)
                              : fmt::format("'{}', {} bytes, fused: shared with the models fused with this one",
                                            m.shared_executable, model.executableBytes)});
  out += meta.render("  ");

  out += "\n  Program flow\n";
  Table phases({"load", programList(model.load, model.programs)});
  phases.add({"main", programList(model.main, model.programs)});
  phases.add({"save", programList(model.save, model.programs)});
  out += phases.render("    ");

  out += fmt::format("\n  Anchors ({})\n", model.anchors.size());
  Table anchors({"name", "handle", "type", "dtype", "shape", "bytes", "programs", "per replica",
                 "source", "remote buffer"});
  for (const AnchorInfo &a : model.anchors) {
    anchors.add({a.name, a.handle, tensorTypeName(a.tensor_type),
                 tools::dataTypeName(static_cast<std::int32_t>(a.data_type)), shape(a.shape),
                 fmt::format("{}", a.size_in_bytes),
                 a.programs.empty() ? "-" : fmt::format("{}", fmt::join(a.programs, ",")),
                 a.is_per_replica ? "yes" : "no", dataSourceName(a.data_source), remoteBuffer(a)});
  }
  out += anchors.render("    ");

  if (!model.tensorData.empty() || !model.feedData.empty()) {
    out += "\n  Tensor data\n";
    Table data({"name", "kind", "dtype", "shape", "tensors", "bytes", "file", "blob"});
    const auto add = [&](const BlobInfo &blob) {
      data.add({blob.name, blobTypeName(blob.type), tools::dataTypeName(blob.data_type), shape(blob.shape),
                fmt::format("{}", blob.num_tensors), fmt::format("{}", blob.data_size), fileOf(report, blob),
                fmt::format("{}", blob.index)});
    };
    for (const BlobInfo &t : model.tensorData) add(t);
    for (const BlobInfo &f : model.feedData) add(f);
    out += data.render("    ");
  }
  if (!model.opaque.empty()) {
    out += "\n  Opaque blobs\n";
    Table opaque({"name", "bytes"});
    for (const BlobInfo &o : model.opaque) opaque.add({o.name, fmt::format("{}", o.data_size)});
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
  for (const ModelReport &model : report.models) renderModel(report, model, out);
  return out;
}

}  // namespace mrt::info
