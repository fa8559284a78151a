// mrt-info --json: the same facts as the text output, for machines.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "data_type_name.hpp"
#include "inspect.hpp"
#include "names.hpp"
#include "tensor_bytes.hpp"

namespace mrt::info {

namespace {

using Json = nlohmann::ordered_json;

std::string hex(std::uint64_t value) { return fmt::format("0x{:016x}", value); }

Json tensorInfo(std::int32_t dataType, const std::vector<std::int64_t> &shape) {
  return Json{{"dtype", tools::dataTypeName(dataType)}, {"shape", shape}, {"bytes", tensorBytes(dataType, shape)}};
}

Json origin(const Report &report, const BlobInfo &blob) {
  return Json{{"file", fileOf(report, blob)}, {"blob", blob.index}, {"offset", blob.offset}};
}

Json options(const Options &pairs) {
  Json object = Json::object();
  for (const auto &[key, value] : pairs) object[key] = value;
  return object;
}

Json fileJson(const ListedFile &file) {
  Json blobs = Json::array();
  for (const BlobInfo &blob : file.blobs) {
    Json row{{"index", blob.index},
             {"type", blobTypeName(blob.type)},
             {"executable", blob.executable},
             {"name", blob.name},
             {"offset", blob.offset},
             {"size", blob.payload_size},
             {"checksum", hex(blob.stored_checksum)},
             {"checksum_ok", blob.checksumOk()}};
    if (!blob.checksumOk()) row["computed_checksum"] = hex(blob.computed_checksum);
    if (!blob.problem.empty()) row["problem"] = blob.problem;
    blobs.push_back(std::move(row));
  }
  return Json{{"path", file.path}, {"size", file.size}, {"blobs", std::move(blobs)}};
}

Json modelJson(const Report &report, const ModelReport &model) {
  const ModelInfo &m = model.info;
  Json programs = Json::object();
  for (const auto &[index, name] : model.programs) programs[std::to_string(index)] = name;
  Json anchors = Json::array();
  for (const AnchorInfo &a : model.anchors) {
    Json anchor{{"name", a.name},
                {"handle", a.handle},
                {"type", tensorTypeName(a.tensor_type)},
                {"tensor_info", tensorInfo(static_cast<std::int32_t>(a.data_type), a.shape)},
                {"programs", a.programs},
                {"is_per_replica", a.is_per_replica},
                {"data_source", dataSourceName(a.data_source)},
                {"remote_buffer", nullptr}};
    if (!a.remote_buffer.empty()) {
      anchor["remote_buffer"] = Json{{"name", a.remote_buffer}, {"repeats", a.remote_buffer_repeats}};
    }
    anchors.push_back(std::move(anchor));
  }
  Json tensors = Json::array();
  for (const BlobInfo &t : model.tensorData) {
    tensors.push_back(Json{{"name", t.name},
                           {"tensor_info", tensorInfo(t.data_type, t.shape)},
                           {"bytes", t.data_size},
                           {"origin", origin(report, t)}});
  }
  Json feeds = Json::array();
  for (const BlobInfo &f : model.feedData) {
    feeds.push_back(Json{{"name", f.name},
                         {"tensor_info", tensorInfo(f.data_type, f.shape)},
                         {"num_tensors", f.num_tensors},
                         {"bytes", f.data_size},
                         {"origin", origin(report, f)}});
  }
  Json opaque = Json::array();
  for (const BlobInfo &o : model.opaque) {
    opaque.push_back(Json{{"name", o.name}, {"bytes", o.data_size}, {"origin", origin(report, o)}});
  }
  return Json{{"executable", m.executable},
              {"replication_factor", m.replication_factor},
              {"num_ipus", m.num_ipus},
              {"ipu_version", m.ipu_version},
              {"is_inference", m.is_inference},
              {"engine_options", options(model.engineOptions)},
              {"device_options", options(model.deviceOptions)},
              {"seed_handle", m.seed_handle},
              {"batching_dim", model.batchingDim ? Json(*model.batchingDim) : Json(nullptr)},
              {"package_hash", m.package_hash},
              {"shared_executable", m.shared_executable},
              {"executable_bytes", model.executableBytes},
              {"program_flow",
               Json{{"load", model.load}, {"main", model.main}, {"save", model.save},
                    {"programs", std::move(programs)}}},
              {"anchors", std::move(anchors)},
              {"tensor_data", std::move(tensors)},
              {"feed_data", std::move(feeds)},
              {"opaque", std::move(opaque)},
              {"metadata_origin", model.metadata ? origin(report, *model.metadata) : Json(nullptr)}};
}

}  // namespace

std::string renderJson(const Report &report) {
  Json files = Json::array();
  for (const ListedFile &file : report.files) files.push_back(fileJson(file));
  Json models = Json::array();
  for (const ModelReport &model : report.models) models.push_back(modelJson(report, model));
  Json root{{"files", std::move(files)}, {"models", std::move(models)}};
  root["error"] = report.error.empty() ? Json(nullptr) : Json(report.error);
  return root.dump(2) + "\n";
}

}  // namespace mrt::info
