// mlp_example: the mlp example model end to end through <mrt.hpp>, the C++
// wrapper of libmrt's C API.
//
//   mlp_example MODEL.popef                  load, run sync and async, check
//   mlp_example MODEL.popef --check-errors   show what misuse throws
//
// The reference is computed here from the model's own weights (its
// TensorData w1, b1, w2, b2): probs = softmax(relu(image.w1 + b1).w2 + b2).
// Exit status 0 only if every check passed.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <future>
#include <iostream>
#include <string>
#include <vector>

#include <mrt.hpp>

namespace {

constexpr std::size_t kImage = 784, kHidden = 128, kClasses = 10;

std::vector<double> reference(const mrt::Model &model, const std::vector<float> &image) {
  // Borrowed straight from the memory-mapped model file: no copies.
  const mrt::Span<const float> w1 = model.tensorDataAs<float>("w1"), b1 = model.tensorDataAs<float>("b1");
  const mrt::Span<const float> w2 = model.tensorDataAs<float>("w2"), b2 = model.tensorDataAs<float>("b2");
  if (w1.size() != kImage * kHidden || b1.size() != kHidden || w2.size() != kHidden * kClasses ||
      b2.size() != kClasses) {
    throw std::runtime_error("the model's weights do not have the mlp's shapes");
  }
  std::vector<double> hidden(kHidden), probs(kClasses);
  for (std::size_t j = 0; j < kHidden; ++j) {
    double sum = b1[j];
    for (std::size_t i = 0; i < kImage; ++i) sum += double(image[i]) * w1[i * kHidden + j];
    hidden[j] = std::max(sum, 0.0);
  }
  for (std::size_t k = 0; k < kClasses; ++k) {
    double sum = b2[k];
    for (std::size_t j = 0; j < kHidden; ++j) sum += hidden[j] * w2[j * kClasses + k];
    probs[k] = sum;
  }
  const double top = *std::max_element(probs.begin(), probs.end());
  double total = 0;
  for (double &p : probs) total += (p = std::exp(p - top));
  for (double &p : probs) p /= total;
  return probs;
}

template <class Values>
std::size_t argmax(const Values &values) {
  return static_cast<std::size_t>(std::max_element(std::begin(values), std::end(values)) - std::begin(values));
}

// Same argmax and every probability within 1e-5 relative (plus a tiny
// absolute floor for probabilities near zero).
template <class Values>
bool matches(const char *how, const Values &probs, const std::vector<double> &expected) {
  bool ok = argmax(probs) == argmax(expected);
  for (std::size_t k = 0; k < kClasses; ++k) {
    if (std::fabs(probs[k] - expected[k]) > 1e-5 * std::fabs(expected[k]) + 1e-7) {
      std::fprintf(stderr, "mlp_example: %s probs[%zu] = %.8f, reference %.8f\n", how, k, double(probs[k]),
                   expected[k]);
      ok = false;
    }
  }
  if (!ok) std::fprintf(stderr, "mlp_example: %s result does not match the reference\n", how);
  return ok;
}

int run(const std::string &path) {
  const mrt::Model model(path);
  mrt::ModelRunner runner(model);  // default config: one replica on a simulated IPU

  // A deterministic image: a smooth ramp with a stripe pattern.
  std::vector<float> image(kImage);
  for (std::size_t i = 0; i < kImage; ++i) image[i] = float((i * 37) % 256) / 255.0f;
  const std::vector<double> expected = reference(model, image);

  std::vector<float> sync(kClasses);
  runner.execute({{"image", image}}, {{"probs", sync}});

  float async[kClasses] = {};
  std::future<void> done = runner.executeAsync({{"image", image}}, {{"probs", async}});
  done.get();  // throws mrt::Error if the request failed

  // Outputs in memory the library allocates, delivered by the future.
  std::future<mrt::TensorMemory> allocated = runner.executeAsync({{"image", image}});
  const mrt::TensorMemory outputs = allocated.get();
  const mrt::Span<const float> library_probs = outputs.as<float>("probs");

  if (!matches("sync", sync, expected) || !matches("async", async, expected) ||
      !matches("allocated", library_probs, expected)) {
    return 1;
  }
  const std::size_t best = argmax(sync);
  std::printf("mlp: argmax %zu p=%.4f (sync and async match the reference)\n", best, double(sync[best]));
  return 0;
}

// Runs one misuse; it must throw mrt::Error with `expected`, and say why.
template <class Misuse>
bool expectError(const char *what, mrt_status expected, Misuse misuse) {
  try {
    misuse();
  } catch (const mrt::Error &e) {
    std::printf("%-24s -> %s\n  %s\n", what, e.codeString(), e.what());
    return e.code() == expected && *e.what() != '\0';
  }
  std::fprintf(stderr, "mlp_example: %s did not throw\n", what);
  return false;
}

int checkErrors(const std::string &path) {
  mrt::ModelRunner runner(path);
  std::vector<float> image(kImage), small(kImage / 2), probs(kClasses);
  bool ok = true;
  ok &= expectError("wrong tensor name", MRT_NOT_FOUND,
                    [&] { runner.execute({{"image", image}, {"imagez", image}}, {{"probs", probs}}); });
  ok &= expectError("wrong buffer size", MRT_INVALID_ARGUMENT,
                    [&] { runner.execute({{"image", small}}, {{"probs", probs}}); });
  runner.execute({{"image", image}}, {{"probs", probs}});  // still serving after bad requests
  runner.close();
  ok &= expectError("use after close", MRT_FAILED_PRECONDITION,
                    [&] { runner.execute({{"image", image}}, {{"probs", probs}}); });
  ok &= expectError("missing model file", MRT_NOT_FOUND, [] { mrt::Model("/nonexistent/mlp.popef"); });
  std::puts(ok ? "misuse: every error carried its status code and message" : "misuse: unexpected results");
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char **argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args.size() > 2 || (args.size() == 2 && args[1] != "--check-errors")) {
    std::fprintf(stderr, "usage: %s MODEL.popef [--check-errors]\n  (write the model with: mrt-gen mlp -o mlp.popef)\n",
                 argv[0]);
    return 2;
  }
  try {
    mrt::checkVersion();
    return args.size() == 2 ? checkErrors(args[0]) : run(args[0]);
  } catch (const mrt::Error &e) {
    std::fprintf(stderr, "mlp_example: %s\n  %s\n", e.codeString(), e.what());
  } catch (const std::exception &e) {
    std::fprintf(stderr, "mlp_example: %s\n", e.what());
  }
  return 1;
}
