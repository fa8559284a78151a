// mrt-info --json: the same facts as the text output, for machines.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "inspect.hpp"

namespace mrt::info {

namespace {

using Json = nlohmann::ordered_json;

std::string hex(std::uint64_t value) { return fmt::format("0x{:016x}", value); }

Json tensorInfo(const popef::TensorInfo &info) {
  return Json{{"dtype", popef::toString(info.dataType())},
              {"shape", info.shape()},
              {"bytes", info.sizeInBytes()}};
}

Json origin(const std::optional<popef::BlobLocation> &location) {
  if (!location) return nullptr;
  return Json{{"file", location->file}, {"blob", location->index}, {"offset", location->offset}};
}

Json fileJson(const FileReport &file) {
  Json blobs = Json::array();
  for (const BlobRow &blob : file.blobs) {
    Json row{{"index", blob.index},
             {"type", popef::toString(blob.type)},
             {"executable", blob.executable},
             {"name", blob.name},
             {"offset", blob.offset},
             {"size", blob.payloadSize},
             {"checksum", hex(blob.storedChecksum)},
             {"checksum_ok", blob.checksumOk()}};
    if (!blob.checksumOk()) row["computed_checksum"] = hex(blob.computedChecksum);
    if (!blob.problem.empty()) row["problem"] = blob.problem;
    blobs.push_back(std::move(row));
  }
  return Json{{"path", file.path}, {"size", file.size}, {"blobs", std::move(blobs)}};
}

Json modelJson(const popef::Model &model) {
  const popef::Metadata &m = model.metadata;
  const popef::ProgramFlow &flow = m.programFlow();
  Json programs = Json::object();
  for (const auto &[index, name] : flow.programsMap()) programs[std::to_string(index)] = name;
  Json anchors = Json::array();
  for (const popef::Anchor &a : m.anchors()) {
    Json anchor{{"name", a.name()},
                {"handle", a.handle()},
                {"type", popef::toString(a.type())},
                {"tensor_info", tensorInfo(a.tensorInfo())},
                {"programs", a.programs()},
                {"is_per_replica", a.isPerReplica()},
                {"data_source", popef::toString(a.dataSource())},
                {"remote_buffer", nullptr}};
    if (a.remoteBuffer()) {
      anchor["remote_buffer"] = Json{{"name", a.remoteBuffer()->name},
                                     {"repeats", a.remoteBuffer()->repeats}};
    }
    anchors.push_back(std::move(anchor));
  }
  Json tensors = Json::array();
  for (const popef::TensorData &t : model.tensorDataList()) {
    tensors.push_back(Json{{"name", t.name()},
                           {"tensor_info", tensorInfo(t.tensorInfo())},
                           {"bytes", t.size()},
                           {"origin", origin(t.origin())}});
  }
  Json feeds = Json::array();
  for (const popef::FeedData &f : model.feedDataList()) {
    feeds.push_back(Json{{"name", f.name()},
                         {"tensor_info", tensorInfo(f.tensorInfo())},
                         {"num_tensors", f.numTensors()},
                         {"bytes", f.bytes().size()},
                         {"origin", origin(f.origin())}});
  }
  Json opaque = Json::array();
  for (const popef::OpaqueBlob &o : model.opaqueBlobs()) {
    opaque.push_back(Json{{"name", o.name()}, {"bytes", o.bytes().size()}, {"origin", origin(o.origin())}});
  }
  return Json{{"executable", m.executable()},
              {"replication_factor", m.replicationFactor()},
              {"num_ipus", m.numIpus()},
              {"ipu_version", m.ipuVersion()},
              {"is_inference", m.isInference()},
              {"engine_options", m.engineOptions()},
              {"device_options", m.deviceOptions()},
              {"seed_handle", m.seedHandle()},
              {"batching_dim", m.batchingDim() ? Json(*m.batchingDim()) : Json(nullptr)},
              {"package_hash", m.packageHash()},
              {"shared_executable", m.sharedExecutable()},
              {"executable_bytes", model.executable().bytes().size()},
              {"program_flow",
               Json{{"load", flow.load()}, {"main", flow.main()}, {"save", flow.save()},
                    {"programs", std::move(programs)}}},
              {"anchors", std::move(anchors)},
              {"tensor_data", std::move(tensors)},
              {"feed_data", std::move(feeds)},
              {"opaque", std::move(opaque)},
              {"metadata_origin", origin(model.metadataOrigin())}};
}

}  // namespace

std::string renderJson(const Report &report) {
  Json files = Json::array();
  for (const FileReport &file : report.files) files.push_back(fileJson(file));
  Json models = Json::array();
  for (const auto &model : report.models) models.push_back(modelJson(*model));
  Json root{{"files", std::move(files)}, {"models", std::move(models)}};
  root["error"] = report.error.empty() ? Json(nullptr) : Json(report.error);
  return root.dump(2) + "\n";
}

}  // namespace mrt::info
