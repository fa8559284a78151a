// mrt_model_with_engine_options: a model whose engines run with other engine
// options (mrt-run --profile, per-run overrides), over popef::withEngineOptions.
#include "capi/guard.hpp"
#include "capi/model.hpp"
#include "capi/option_pairs.hpp"

extern "C" {

MRT_API mrt_status mrt_model_with_engine_options(const mrt_model *model, const char *const *options,
                                                 mrt_model **out) noexcept {
  return mrt::capi::guard(__func__, [&] {
    const mrt::popef::Model &from = *mrt::capi::modelOf(model, "model");
    mrt::capi::requireNotNull(out, "out");
    const auto overrides = mrt::capi::optionPairsOf(options, "options", "engine option");
    for (const auto &[key, value] : overrides) mrt::capi::requireValidEngineOption(key, value);
    *out = new mrt_model{mrt::popef::withEngineOptions(from, overrides)};
  });
}

}  // extern "C"
