#include "inspect.hpp"

namespace mrt::info {

namespace {

ModelReport describeModel(const Model &model, const std::vector<ListedFile> &files) {
  ModelReport report;
  report.info = model.info();
  report.batchingDim = model.batchingDim();
  report.engineOptions = model.options(ModelOptions::Engine);
  report.deviceOptions = model.options(ModelOptions::Device);
  report.load = model.programFlow(ProgramPhase::Load);
  report.main = model.programFlow(ProgramPhase::Main);
  report.save = model.programFlow(ProgramPhase::Save);
  report.programs = model.programs();
  report.anchors = model.anchors();
  report.executableBytes = model.executable().size();
  // A model's data blobs carry its name (a fused model's too), as the reader
  // picks them.
  for (const ListedFile &file : files) {
    for (const BlobInfo &blob : file.blobs) {
      if (blob.executable != report.info.executable) continue;
      switch (blob.type) {
        case BlobType::Metadata: report.metadata = blob; break;
        case BlobType::TensorData: report.tensorData.push_back(blob); break;
        case BlobType::FeedData: report.feedData.push_back(blob); break;
        case BlobType::Opaque: report.opaque.push_back(blob); break;
        case BlobType::Executable: break;
      }
    }
  }
  return report;
}

}  // namespace

Report inspect(const std::vector<std::string> &paths, const std::optional<std::string> &model) {
  const PopefListing listing(paths, model.value_or(std::string()));
  Report report;
  for (std::size_t i = 0; i < paths.size(); ++i) report.files.push_back(listing.file(i));
  for (const Model &loaded : listing.models()) report.models.push_back(describeModel(loaded, report.files));
  report.error = listing.errorMessage();
  return report;
}

}  // namespace mrt::info
