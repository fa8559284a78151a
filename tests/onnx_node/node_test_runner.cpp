// The ONNX backend node tests (issue 13) run through libmrt: for every case
// directory of Debian's libonnx-testdata (model.onnx, test_data_set_*/
// input_*.pb and output_*.pb) the model is compiled with
// mrt_onnx_compile_file (default options), served by a ModelRunner (default
// config) and every data set's outputs are compared with the expected ones:
// shape, element type and values, |got - want| <= atol + rtol * |want| with
// ONNX's tolerances (rtol 1e-3, atol 1e-7; F16 outputs: rtol 5e-3, atol 1e-4,
// a few F16 ulps), NaN equal to NaN, integers and bools exact.
//
// One line per case (PASS / FAIL with the worst error / UNSUPPORTED with the
// library's message / ERROR with the status), a summary per op and totals, on
// stdout and in --report FILE. Exit status 1 when fewer than --min-pass cases
// pass (or on bad arguments).
//
// All the cases run in one worker process, forked before libmrt is touched;
// the parent only supervises: when a case crashes the worker or runs longer
// than --case-timeout seconds, the worker is killed, the case is reported as
// ERROR (crash) or FAIL (timeout) and a new worker goes on with the next case.
// --no-fork runs everything in this process (for debuggers).
#include <mrt_c.h>

#include <onnx/onnx_pb.h>  // defines ONNX_API, includes onnx-ml.pb.h (ONNX_ML=1)

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

constexpr double kRtol = 1e-3;
constexpr double kAtol = 1e-7;
constexpr double kRtolF16 = 5e-3;
constexpr double kAtolF16 = 1e-4;

struct Options {
  std::string dataDir = "/usr/share/libonnx-testdata/data/node";
  std::vector<std::string> filters;
  long minPass = 0;
  std::string report;
  double caseTimeout = 120.0;
  bool noFork = false;
  bool verbose = false;
};

// ---- results ----

enum class Status { Pass, Fail, Unsupported, Error };

const char *statusName(Status s) {
  switch (s) {
    case Status::Pass: return "PASS";
    case Status::Fail: return "FAIL";
    case Status::Unsupported: return "UNSUPPORTED";
    case Status::Error: return "ERROR";
  }
  return "?";
}

struct CaseResult {
  Status status = Status::Error;
  std::string detail;
  double seconds = 0;
};

struct CaseInfo {
  std::string name;
  fs::path dir;
  std::string op;
};

std::string oneLine(std::string s) {
  auto nl = s.find('\n');
  if (nl != std::string::npos) s.resize(nl);
  for (char &c : s)
    if (c == '\r' || c == '\t') c = ' ';
  return s;
}

std::string fmtDouble(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// ---- element types ----

// The mrt type an ONNX element type is exchanged as, or -1 for none.
int mrtTypeOf(int onnxType) {
  using T = onnx::TensorProto;
  switch (onnxType) {
    case T::FLOAT: return MRT_F32;
    case T::UINT8: return MRT_U8;
    case T::INT8: return MRT_S8;
    case T::UINT16: return MRT_U16;
    case T::INT16: return MRT_S16;
    case T::INT32: return MRT_S32;
    case T::INT64: return MRT_S64;
    case T::BOOL: return MRT_BOOL;
    case T::FLOAT16: return MRT_F16;
    case T::DOUBLE: return MRT_F64;
    case T::UINT32: return MRT_U32;
    case T::UINT64: return MRT_U64;
    default: return -1;
  }
}

const char *mrtTypeName(int t) {
  static const char *names[] = {"BOOL", "U8", "S8", "U16", "S16", "S32", "U32", "S64", "U64", "F16", "F32", "F64"};
  return t >= 0 && t < 12 ? names[t] : "?";
}

std::string onnxTypeName(int t) {
  const std::string &n = onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(t));
  return n.empty() ? std::to_string(t) : n;
}

bool isFloatType(int mrtType) { return mrtType == MRT_F16 || mrtType == MRT_F32 || mrtType == MRT_F64; }

size_t mrtTypeSize(int t) {
  switch (t) {
    case MRT_BOOL: case MRT_U8: case MRT_S8: return 1;
    case MRT_U16: case MRT_S16: case MRT_F16: return 2;
    case MRT_S32: case MRT_U32: case MRT_F32: return 4;
    default: return 8;
  }
}

// The device narrowings the importer documents (hwsim has no 64-bit types).
bool acceptedNarrowing(int want, int got) {
  return (want == MRT_S64 && got == MRT_S32) || (want == MRT_U64 && got == MRT_U32) ||
         (want == MRT_F64 && got == MRT_F32);
}

float halfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t man = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {  // subnormal
      int e = -1;
      do {
        ++e;
        man <<= 1;
      } while ((man & 0x400u) == 0);
      bits = sign | static_cast<uint32_t>(127 - 15 - e) << 23 | (man & 0x3ffu) << 13;
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | man << 13;
  } else {
    bits = sign | (exp + 127 - 15) << 23 | man << 13;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t exp = (x >> 23) & 0xffu;
  uint32_t man = x & 0x7fffffu;
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (man ? 0x200u : 0));
  int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return static_cast<uint16_t>(sign);
    man |= 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - e);
    uint32_t half = man >> shift;
    uint32_t rem = man & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = sign | static_cast<uint32_t>(e) << 10 | man >> 13;
  uint32_t rem = man & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;  // may carry into the exponent: right
  return static_cast<uint16_t>(half);
}

// ---- host tensors ----

// Values of a tensor: floats in f (double), integers and bools in i.
struct HostTensor {
  std::string name;
  int onnxType = 0;
  int mrtType = -1;
  std::vector<int64_t> dims;
  std::vector<double> f;
  std::vector<int64_t> i;
  size_t count() const { return isFloatType(mrtType) ? f.size() : i.size(); }
};

template <typename T>
T readLe(const std::string &raw, size_t index) {
  T v;
  std::memcpy(&v, raw.data() + index * sizeof(T), sizeof(T));
  return v;
}

// Decodes a TensorProto (raw_data or the typed fields). Throws a message
// for what the runner cannot read.
HostTensor decodeTensor(const onnx::TensorProto &t) {
  using T = onnx::TensorProto;
  HostTensor h;
  h.name = t.name();
  h.onnxType = t.data_type();
  h.mrtType = mrtTypeOf(h.onnxType);
  if (h.mrtType < 0) throw std::runtime_error("runner: element type " + onnxTypeName(h.onnxType) + " has no mrt type");
  if (t.data_location() == T::EXTERNAL) throw std::runtime_error("runner: external tensor data");
  size_t n = 1;
  for (int64_t d : t.dims()) {
    h.dims.push_back(d);
    n *= static_cast<size_t>(d);
  }
  const bool fl = isFloatType(h.mrtType);
  if (fl)
    h.f.resize(n);
  else
    h.i.resize(n);
  if (t.has_raw_data()) {
    const std::string &raw = t.raw_data();
    if (raw.size() != n * mrtTypeSize(h.mrtType))
      throw std::runtime_error("runner: raw_data of " + std::to_string(raw.size()) + " bytes for " +
                               std::to_string(n) + " elements");
    for (size_t k = 0; k < n; ++k) {
      switch (h.onnxType) {
        case T::FLOAT: h.f[k] = readLe<float>(raw, k); break;
        case T::DOUBLE: h.f[k] = readLe<double>(raw, k); break;
        case T::FLOAT16: h.f[k] = halfToFloat(readLe<uint16_t>(raw, k)); break;
        case T::UINT8: h.i[k] = readLe<uint8_t>(raw, k); break;
        case T::INT8: h.i[k] = readLe<int8_t>(raw, k); break;
        case T::BOOL: h.i[k] = readLe<uint8_t>(raw, k) != 0; break;
        case T::UINT16: h.i[k] = readLe<uint16_t>(raw, k); break;
        case T::INT16: h.i[k] = readLe<int16_t>(raw, k); break;
        case T::INT32: h.i[k] = readLe<int32_t>(raw, k); break;
        case T::UINT32: h.i[k] = readLe<uint32_t>(raw, k); break;
        case T::INT64: h.i[k] = readLe<int64_t>(raw, k); break;
        case T::UINT64: h.i[k] = static_cast<int64_t>(readLe<uint64_t>(raw, k)); break;
        default: break;
      }
    }
    return h;
  }
  auto need = [&](int have) {
    if (static_cast<size_t>(have) != n)
      throw std::runtime_error("runner: " + std::to_string(have) + " typed values for " + std::to_string(n) +
                               " elements");
  };
  switch (h.onnxType) {
    case T::FLOAT:
      need(t.float_data_size());
      for (size_t k = 0; k < n; ++k) h.f[k] = t.float_data(static_cast<int>(k));
      break;
    case T::DOUBLE:
      need(t.double_data_size());
      for (size_t k = 0; k < n; ++k) h.f[k] = t.double_data(static_cast<int>(k));
      break;
    case T::FLOAT16:
      need(t.int32_data_size());
      for (size_t k = 0; k < n; ++k)
        h.f[k] = halfToFloat(static_cast<uint16_t>(t.int32_data(static_cast<int>(k))));
      break;
    case T::INT64:
      need(t.int64_data_size());
      for (size_t k = 0; k < n; ++k) h.i[k] = t.int64_data(static_cast<int>(k));
      break;
    case T::UINT32:
    case T::UINT64:
      need(t.uint64_data_size());
      for (size_t k = 0; k < n; ++k) h.i[k] = static_cast<int64_t>(t.uint64_data(static_cast<int>(k)));
      break;
    default:  // the 8/16/32-bit integers and bool
      need(t.int32_data_size());
      for (size_t k = 0; k < n; ++k) h.i[k] = t.int32_data(static_cast<int>(k));
      if (h.onnxType == T::BOOL)
        for (auto &v : h.i) v = v != 0;
      break;
  }
  return h;
}

template <typename P>
P readProto(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("runner: cannot open " + path.string());
  P p;
  if (!p.ParseFromIstream(&in)) throw std::runtime_error("runner: cannot parse " + path.string());
  return p;
}

// Writes h's values as mrtType into bytes; throws when an integer does not fit.
std::vector<unsigned char> encode(const HostTensor &h, int mrtType) {
  size_t n = h.count();
  size_t es = mrtTypeSize(mrtType);
  std::vector<unsigned char> out(n * es);
  const bool srcFloat = isFloatType(h.mrtType);
  for (size_t k = 0; k < n; ++k) {
    unsigned char *p = out.data() + k * es;
    if (isFloatType(mrtType)) {
      double v = srcFloat ? h.f[k] : static_cast<double>(h.i[k]);
      if (mrtType == MRT_F32) {
        float x = static_cast<float>(v);
        std::memcpy(p, &x, 4);
      } else if (mrtType == MRT_F64) {
        std::memcpy(p, &v, 8);
      } else {
        uint16_t x = floatToHalf(static_cast<float>(v));
        std::memcpy(p, &x, 2);
      }
      continue;
    }
    if (srcFloat) throw std::runtime_error("a float tensor fed as " + std::string(mrtTypeName(mrtType)));
    int64_t v = h.i[k];
    auto fits = [&](int64_t lo, int64_t hi) {
      if (v < lo || v > hi)
        throw std::runtime_error("value " + std::to_string(v) + " does not fit " + mrtTypeName(mrtType));
    };
    switch (mrtType) {
      case MRT_BOOL: { uint8_t x = v != 0; std::memcpy(p, &x, 1); break; }
      case MRT_U8: { fits(0, 255); uint8_t x = static_cast<uint8_t>(v); std::memcpy(p, &x, 1); break; }
      case MRT_S8: { fits(-128, 127); int8_t x = static_cast<int8_t>(v); std::memcpy(p, &x, 1); break; }
      case MRT_U16: { fits(0, 65535); uint16_t x = static_cast<uint16_t>(v); std::memcpy(p, &x, 2); break; }
      case MRT_S16: { fits(-32768, 32767); int16_t x = static_cast<int16_t>(v); std::memcpy(p, &x, 2); break; }
      case MRT_S32: { fits(INT32_MIN, INT32_MAX); int32_t x = static_cast<int32_t>(v); std::memcpy(p, &x, 4); break; }
      case MRT_U32: {
        if (h.mrtType != MRT_U64) fits(0, UINT32_MAX);
        else if (static_cast<uint64_t>(v) > UINT32_MAX)
          throw std::runtime_error("value " + std::to_string(static_cast<uint64_t>(v)) + " does not fit U32");
        uint32_t x = static_cast<uint32_t>(v);
        std::memcpy(p, &x, 4);
        break;
      }
      default: std::memcpy(p, &v, 8); break;  // S64, U64
    }
  }
  return out;
}

// Reads n values of mrtType from bytes.
void decodeBytes(const unsigned char *p, size_t n, int mrtType, std::vector<double> &f, std::vector<int64_t> &i) {
  size_t es = mrtTypeSize(mrtType);
  for (size_t k = 0; k < n; ++k, p += es) {
    switch (mrtType) {
      case MRT_F32: { float x; std::memcpy(&x, p, 4); f.push_back(x); break; }
      case MRT_F64: { double x; std::memcpy(&x, p, 8); f.push_back(x); break; }
      case MRT_F16: { uint16_t x; std::memcpy(&x, p, 2); f.push_back(halfToFloat(x)); break; }
      case MRT_BOOL: i.push_back(*p != 0); break;
      case MRT_U8: i.push_back(*p); break;
      case MRT_S8: { int8_t x; std::memcpy(&x, p, 1); i.push_back(x); break; }
      case MRT_U16: { uint16_t x; std::memcpy(&x, p, 2); i.push_back(x); break; }
      case MRT_S16: { int16_t x; std::memcpy(&x, p, 2); i.push_back(x); break; }
      case MRT_S32: { int32_t x; std::memcpy(&x, p, 4); i.push_back(x); break; }
      case MRT_U32: { uint32_t x; std::memcpy(&x, p, 4); i.push_back(x); break; }
      default: { int64_t x; std::memcpy(&x, p, 8); i.push_back(x); break; }
    }
  }
}

std::string dimsString(const int64_t *d, size_t n) {
  std::string s = "[";
  for (size_t k = 0; k < n; ++k) {
    if (k) s.push_back(',');
    s.append(std::to_string(d[k]));
  }
  s.push_back(']');
  return s;
}

std::string indexString(size_t flat, const std::vector<int64_t> &dims) {
  if (dims.empty()) return "[]";
  std::vector<int64_t> idx(dims.size());
  for (size_t k = dims.size(); k-- > 0;) {
    int64_t d = dims[k] > 0 ? dims[k] : 1;
    idx[k] = static_cast<int64_t>(flat % static_cast<size_t>(d));
    flat /= static_cast<size_t>(d);
  }
  return dimsString(idx.data(), idx.size());
}

// ---- one case ----

struct CaseFailure {
  Status status;
  std::string detail;
};

std::string lastError() { return oneLine(mrt_last_error_message()); }

// Throws CaseFailure for an mrt error: MRT_UNIMPLEMENTED is "unsupported".
void check(mrt_status st, const char *what) {
  if (st == MRT_OK) return;
  std::string msg = lastError();
  // Messages usually name the function already ("mrt_onnx_compile_file: ...").
  std::string where = msg.rfind("mrt_", 0) == 0 ? std::string() : std::string(what) + ": ";
  if (st == MRT_UNIMPLEMENTED) throw CaseFailure{Status::Unsupported, where + msg};
  std::string name = mrt_status_string(st);
  auto colon = name.find(':');
  if (colon != std::string::npos) name.resize(colon);
  throw CaseFailure{Status::Error, name + ": " + where + msg};
}

struct RunnerGuard {
  mrt_model *model = nullptr;
  mrt_model_runner *runner = nullptr;
  ~RunnerGuard() {
    mrt_model_runner_destroy(runner);
    mrt_model_destroy(model);
  }
};

struct Comparison {
  bool ok = true;
  std::string detail;
};

Comparison compareOutput(const HostTensor &want, const mrt_data_desc &desc, const std::vector<unsigned char> &bytes,
                         const std::string &outName) {
  Comparison c;
  std::string wantDims = dimsString(want.dims.data(), want.dims.size());
  std::string gotDims = dimsString(desc.shape, desc.rank);
  if (wantDims != gotDims) {
    c.ok = false;
    c.detail = "output '" + outName + "': shape " + gotDims + ", want " + wantDims;
    return c;
  }
  if (desc.data_type != want.mrtType && !acceptedNarrowing(want.mrtType, desc.data_type)) {
    c.ok = false;
    c.detail = "output '" + outName + "': type " + mrtTypeName(desc.data_type) + ", want " +
               onnxTypeName(want.onnxType);
    return c;
  }
  size_t n = want.count();
  if (bytes.size() < n * mrtTypeSize(desc.data_type)) {
    c.ok = false;
    c.detail = "output '" + outName + "': " + std::to_string(bytes.size()) + " bytes for " + std::to_string(n) +
               " elements";
    return c;
  }
  std::vector<double> gf;
  std::vector<int64_t> gi;
  decodeBytes(bytes.data(), n, desc.data_type, gf, gi);
  if (!isFloatType(want.mrtType)) {
    if (isFloatType(desc.data_type)) {
      c.ok = false;
      c.detail = "output '" + outName + "': float type for integers";
      return c;
    }
    size_t bad = 0, first = 0;
    for (size_t k = 0; k < n; ++k)
      if (gi[k] != want.i[k] && !(want.mrtType == MRT_U64 && desc.data_type == MRT_U32 &&
                                  static_cast<uint64_t>(want.i[k]) == static_cast<uint64_t>(gi[k]))) {
        if (bad++ == 0) first = k;
      }
    if (bad) {
      c.ok = false;
      c.detail = "output '" + outName + "': " + std::to_string(bad) + "/" + std::to_string(n) +
                 " elements differ, first at " + indexString(first, want.dims) + ": got " +
                 std::to_string(gi[first]) + ", want " + std::to_string(want.i[first]);
    }
    return c;
  }
  const bool f16 = want.mrtType == MRT_F16 || desc.data_type == MRT_F16;
  const double rtol = f16 ? kRtolF16 : kRtol;
  const double atol = f16 ? kAtolF16 : kAtol;
  size_t bad = 0, worst = 0;
  double worstErr = -1, worstRatio = -1;
  for (size_t k = 0; k < n; ++k) {
    double g = gf[k], w = want.f[k];
    double err, tol = atol + rtol * std::fabs(w);
    if (std::isnan(w) || std::isnan(g)) {
      err = std::isnan(w) && std::isnan(g) ? 0 : INFINITY;
    } else if (std::isinf(w) || std::isinf(g)) {
      err = g == w ? 0 : INFINITY;
    } else {
      err = std::fabs(g - w);
    }
    double ratio = err / tol;
    if (err > tol) ++bad;
    if (ratio > worstRatio) {
      worstRatio = ratio;
      worstErr = err;
      worst = k;
    }
  }
  if (bad) {
    c.ok = false;
    c.detail = "output '" + outName + "': " + std::to_string(bad) + "/" + std::to_string(n) +
               " elements off, worst |err| " + fmtDouble(worstErr) + " at " + indexString(worst, want.dims) +
               " (got " + fmtDouble(gf[worst]) + ", want " + fmtDouble(want.f[worst]) + ", tol " +
               fmtDouble(atol + rtol * std::fabs(want.f[worst])) + ")";
  } else if (n) {
    c.detail = "worst |err| " + fmtDouble(worstErr);
  }
  return c;
}

std::vector<fs::path> sortedFiles(const fs::path &dir, const std::string &prefix) {
  std::vector<std::pair<long, fs::path>> files;
  for (const auto &e : fs::directory_iterator(dir)) {
    std::string n = e.path().filename().string();
    if (n.rfind(prefix, 0) == 0 && e.path().extension() == ".pb")
      files.emplace_back(std::strtol(n.c_str() + prefix.size(), nullptr, 10), e.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<fs::path> out;
  for (auto &f : files) out.push_back(f.second);
  return out;
}

CaseResult runCaseBody(const CaseInfo &info) {
  CaseResult r;
  onnx::ModelProto mp = readProto<onnx::ModelProto>(info.dir / "model.onnx");
  const auto &graph = mp.graph();
  std::set<std::string> inits;
  for (const auto &t : graph.initializer()) inits.insert(t.name());
  std::vector<const onnx::ValueInfoProto *> gIn, gOut;
  for (const auto &v : graph.input())
    if (!inits.count(v.name())) gIn.push_back(&v);
  for (const auto &v : graph.output()) gOut.push_back(&v);

  RunnerGuard g;
  mrt_onnx_options opts;
  mrt_onnx_options_init(&opts);
  check(mrt_onnx_compile_file((info.dir / "model.onnx").c_str(), &opts, &g.model), "compile");

  // The runner can feed and check tensors only.
  auto tensorOnly = [](const std::vector<const onnx::ValueInfoProto *> &vs, const char *what) {
    for (const auto *v : vs)
      if (v->type().value_case() != onnx::TypeProto::kTensorType)
        throw CaseFailure{Status::Unsupported,
                          std::string("runner: ") + what + " '" + v->name() + "' is not a tensor (sequence/optional/map)"};
  };
  tensorOnly(gIn, "input");
  tensorOnly(gOut, "output");

  mrt_model_runner_config cfg;
  mrt_model_runner_config_init(&cfg);
  check(mrt_model_runner_create(g.model, &cfg, &g.runner), "runner create");
  const mrt_data_desc *inDescs = nullptr, *outDescs = nullptr;
  size_t nIn = 0, nOut = 0;
  check(mrt_model_runner_execute_inputs(g.runner, &inDescs, &nIn), "execute_inputs");
  check(mrt_model_runner_execute_outputs(g.runner, &outDescs, &nOut), "execute_outputs");
  auto findDesc = [](const mrt_data_desc *d, size_t n, const std::string &name) -> const mrt_data_desc * {
    for (size_t k = 0; k < n; ++k)
      if (name == d[k].name) return &d[k];
    return nullptr;
  };

  std::vector<fs::path> sets;
  for (const auto &e : fs::directory_iterator(info.dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) throw CaseFailure{Status::Error, "runner: no test_data_set_* directory"};

  std::string worstNote;
  for (const auto &set : sets) {
    const std::string setName = set.filename().string();
    std::vector<fs::path> inFiles = sortedFiles(set, "input_"), outFiles = sortedFiles(set, "output_");
    if (inFiles.size() > gIn.size() || outFiles.size() > gOut.size())
      throw CaseFailure{Status::Error, "runner: " + setName + " has more tensors than the graph has inputs/outputs"};
    std::vector<std::vector<unsigned char>> inBytes;
    std::vector<std::string> inNames;
    for (size_t k = 0; k < inFiles.size(); ++k) {
      HostTensor h;
      try {
        h = decodeTensor(readProto<onnx::TensorProto>(inFiles[k]));
      } catch (const std::exception &e) {
        throw CaseFailure{Status::Unsupported, std::string(e.what()) + " (" + setName + "/" +
                                                   inFiles[k].filename().string() + ")"};
      }
      std::string name = gIn[k]->name();
      const mrt_data_desc *d = findDesc(inDescs, nIn, name);
      if (!d) continue;  // provided by the model itself (folded or PopEF data)
      if (d->data_type != h.mrtType && !acceptedNarrowing(h.mrtType, d->data_type))
        throw CaseFailure{Status::Fail, "input '" + name + "': model takes " + mrtTypeName(d->data_type) +
                                            ", data is " + onnxTypeName(h.onnxType)};
      try {
        inBytes.push_back(encode(h, d->data_type));
      } catch (const std::exception &e) {
        throw CaseFailure{Status::Unsupported, "input '" + name + "': " + e.what()};
      }
      if (d->size_in_bytes >= 0 && inBytes.back().size() != static_cast<size_t>(d->size_in_bytes))
        throw CaseFailure{Status::Fail, "input '" + name + "': model takes " + dimsString(d->shape, d->rank) +
                                            " (" + std::to_string(d->size_in_bytes) + " bytes), data is " +
                                            dimsString(h.dims.data(), h.dims.size())};
      inNames.push_back(name);
    }
    // Every input the runner needs must have come from the data set.
    for (size_t k = 0; k < nIn; ++k)
      if (std::find(inNames.begin(), inNames.end(), std::string(inDescs[k].name)) == inNames.end())
        throw CaseFailure{Status::Fail, std::string("model input '") + inDescs[k].name + "' has no data in " + setName};
    std::vector<mrt_tensor_view> inViews;
    for (size_t k = 0; k < inBytes.size(); ++k)
      inViews.push_back({inNames[k].c_str(), inBytes[k].data(), inBytes[k].size()});

    std::vector<HostTensor> wants;
    for (const auto &f : outFiles) {
      try {
        wants.push_back(decodeTensor(readProto<onnx::TensorProto>(f)));
      } catch (const std::exception &e) {
        throw CaseFailure{Status::Unsupported, std::string(e.what()) + " (" + setName + "/" + f.filename().string() + ")"};
      }
    }
    std::vector<std::vector<unsigned char>> outBytes(nOut);
    std::vector<mrt_tensor_view> outViews;
    for (size_t k = 0; k < nOut; ++k) {
      outBytes[k].assign(static_cast<size_t>(std::max<int64_t>(outDescs[k].size_in_bytes, 0)) + 1, 0);
      outViews.push_back({outDescs[k].name, outBytes[k].data(), static_cast<uint64_t>(outDescs[k].size_in_bytes)});
    }
    check(mrt_model_runner_execute(g.runner, inViews.data(), inViews.size(), outViews.data(), outViews.size(), 0),
          "execute");
    for (size_t k = 0; k < wants.size(); ++k) {
      const std::string &name = gOut[k]->name();
      const mrt_data_desc *d = findDesc(outDescs, nOut, name);
      if (!d) throw CaseFailure{Status::Fail, "output '" + name + "' is not an output of the model"};
      Comparison c = compareOutput(wants[k], *d, outBytes[static_cast<size_t>(d - outDescs)], name);
      if (!c.ok) throw CaseFailure{Status::Fail, (sets.size() > 1 ? setName + ": " : std::string()) + c.detail};
      if (!c.detail.empty()) worstNote = c.detail;
    }
  }
  r.status = Status::Pass;
  r.detail = worstNote;
  return r;
}

CaseResult runCase(const CaseInfo &info) {
  auto t0 = std::chrono::steady_clock::now();
  CaseResult r;
  // Self-test of the supervisor: crash or hang in the named case.
  if (const char *c = std::getenv("ONNX_NODE_RUNNER_CRASH_CASE"); c && info.name == c) ::raise(SIGSEGV);
  if (const char *c = std::getenv("ONNX_NODE_RUNNER_HANG_CASE"); c && info.name == c)
    for (;;) ::pause();
  try {
    r = runCaseBody(info);
  } catch (const CaseFailure &f) {
    r.status = f.status;
    r.detail = f.detail;
  } catch (const std::exception &e) {
    r.status = Status::Error;
    r.detail = std::string("exception: ") + e.what();
  } catch (...) {
    r.status = Status::Error;
    r.detail = "unknown exception";
  }
  r.detail = oneLine(r.detail);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

// ---- op names ----

std::string lower(std::string s) {
  for (char &c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// test_reduce_sum_keepdims_example -> ReduceSum, when ReduceSum is the op of
// some single-node case; else the capitalized first word.
std::string opFromName(const std::string &caseName, const std::map<std::string, std::string> &knownOps) {
  std::string rest = caseName.rfind("test_", 0) == 0 ? caseName.substr(5) : caseName;
  std::vector<std::string> words;
  std::stringstream ss(rest);
  for (std::string w; std::getline(ss, w, '_');) words.push_back(w);
  std::string best, joined;
  for (const auto &w : words) {
    joined += lower(w);
    auto it = knownOps.find(joined);
    if (it != knownOps.end()) best = it->second;
  }
  if (!best.empty()) return best;
  // Short names of the expanded (function) cases.
  static const std::map<std::string, std::string> aliases = {
      {"mvn", "MeanVarianceNormalization"}, {"nllloss", "NegativeLogLikelihoodLoss"},
      {"sce", "SoftmaxCrossEntropyLoss"}};
  if (!words.empty())
    if (auto it = aliases.find(lower(words[0])); it != aliases.end()) return it->second;
  std::string w = words.empty() ? rest : words[0];
  if (!w.empty()) w[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(w[0])));
  return w;
}

std::vector<CaseInfo> listCases(const Options &o) {
  std::vector<CaseInfo> cases;
  std::map<std::string, std::string> knownOps;  // lowercase -> op type
  std::vector<std::vector<std::string>> nodeOps;
  std::vector<fs::path> dirs;
  for (const auto &e : fs::directory_iterator(o.dataDir))
    if (e.is_directory() && fs::exists(e.path() / "model.onnx")) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  for (const auto &d : dirs) {
    std::vector<std::string> ops;
    try {
      auto mp = readProto<onnx::ModelProto>(d / "model.onnx");
      for (const auto &n : mp.graph().node()) ops.push_back(n.op_type());
    } catch (const std::exception &) {
    }
    if (ops.size() == 1) knownOps[lower(ops[0])] = ops[0];
    nodeOps.push_back(ops);
  }
  for (size_t k = 0; k < dirs.size(); ++k) {
    CaseInfo c;
    c.dir = dirs[k];
    c.name = dirs[k].filename().string();
    if (!o.filters.empty() && std::none_of(o.filters.begin(), o.filters.end(), [&](const std::string &f) {
          return c.name.find(f) != std::string::npos;
        }))
      continue;
    c.op = nodeOps[k].size() == 1 ? nodeOps[k][0] : opFromName(c.name, knownOps);
    cases.push_back(c);
  }
  return cases;
}

// ---- worker / supervisor ----

// A result as one line on the pipe: "R <index> <status> <seconds> <detail>".
void writeAll(int fd, const std::string &s) {
  const char *p = s.data();
  size_t left = s.size();
  while (left) {
    ssize_t w = ::write(fd, p, left);
    if (w < 0) {
      if (errno == EINTR) continue;
      return;
    }
    p += w;
    left -= static_cast<size_t>(w);
  }
}

[[noreturn]] void worker(const std::vector<CaseInfo> &cases, size_t from, int fd) {
  for (size_t k = from; k < cases.size(); ++k) {
    writeAll(fd, "S " + std::to_string(k) + "\n");
    CaseResult r = runCase(cases[k]);
    char head[96];
    std::snprintf(head, sizeof head, "R %zu %d %.3f ", k, static_cast<int>(r.status), r.seconds);
    writeAll(fd, head + r.detail + "\n");
  }
  writeAll(fd, "D\n");
  ::close(fd);
  std::fflush(nullptr);
  _exit(0);  // skip static destructors of the library
}

class Reporter {
 public:
  Reporter(const Options &o, const std::vector<CaseInfo> &cases) : cases_(cases), results_(cases.size()) {
    if (!o.report.empty()) {
      file_ = std::fopen(o.report.c_str(), "w");
      if (!file_) std::fprintf(stderr, "cannot write %s: %s\n", o.report.c_str(), std::strerror(errno));
    }
  }
  ~Reporter() {
    if (file_) std::fclose(file_);
  }
  void line(const std::string &s) {
    std::fputs(s.c_str(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
    if (file_) {
      std::fputs(s.c_str(), file_);
      std::fputc('\n', file_);
      std::fflush(file_);
    }
  }
  void result(size_t k, const CaseResult &r) {
    results_[k] = r;
    char head[160];
    std::snprintf(head, sizeof head, "%-11s %-52s %-22s %7.2fs", statusName(r.status), cases_[k].name.c_str(),
                  ("[" + cases_[k].op + "]").c_str(), r.seconds);
    std::string s = head;
    if (!r.detail.empty()) s += "  " + r.detail;
    line(s);
  }
  const std::vector<CaseResult> &results() const { return results_; }

 private:
  const std::vector<CaseInfo> &cases_;
  std::vector<CaseResult> results_;
  FILE *file_ = nullptr;
};

void supervise(const Options &o, const std::vector<CaseInfo> &cases, Reporter &rep) {
  size_t next = 0;
  while (next < cases.size()) {
    int fds[2];
    if (::pipe(fds) != 0) {
      std::perror("pipe");
      std::exit(2);
    }
    std::fflush(nullptr);
    pid_t pid = ::fork();
    if (pid < 0) {
      std::perror("fork");
      std::exit(2);
    }
    if (pid == 0) {
      ::close(fds[0]);
      worker(cases, next, fds[1]);
    }
    ::close(fds[1]);
    std::string buf;
    long current = -1;
    auto started = std::chrono::steady_clock::now();
    bool done = false, killed = false;
    while (!done) {
      pollfd p{fds[0], POLLIN, 0};
      int pr = ::poll(&p, 1, 1000);
      if (pr < 0 && errno == EINTR) continue;
      if (pr > 0) {
        char chunk[4096];
        ssize_t n = ::read(fds[0], chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;  // the worker ended
        buf.append(chunk, static_cast<size_t>(n));
        size_t nl;
        while ((nl = buf.find('\n')) != std::string::npos) {
          std::string l = buf.substr(0, nl);
          buf.erase(0, nl + 1);
          if (l[0] == 'S') {
            current = std::strtol(l.c_str() + 2, nullptr, 10);
            started = std::chrono::steady_clock::now();
          } else if (l[0] == 'R') {
            char *end = nullptr;
            size_t k = std::strtoul(l.c_str() + 2, &end, 10);
            CaseResult r;
            r.status = static_cast<Status>(std::strtol(end, &end, 10));
            r.seconds = std::strtod(end, &end);
            if (*end == ' ') ++end;
            r.detail = end;
            rep.result(k, r);
            next = k + 1;
            current = -1;
          } else if (l[0] == 'D') {
            done = true;
          }
        }
      }
      if (current >= 0) {
        double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        if (el > o.caseTimeout) {
          ::kill(pid, SIGKILL);
          killed = true;
          CaseResult r;
          r.status = Status::Fail;
          r.seconds = el;
          r.detail = "timed out after " + fmtDouble(o.caseTimeout) + " s (worker killed)";
          rep.result(static_cast<size_t>(current), r);
          next = static_cast<size_t>(current) + 1;
          break;
        }
      }
    }
    ::close(fds[0]);
    int ws = 0;
    while (::waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
    }
    if (done || killed) continue;
    if (current >= 0) {  // the worker died inside a case
      CaseResult r;
      r.status = Status::Error;
      r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      if (WIFSIGNALED(ws))
        r.detail = std::string("crashed: signal ") + std::to_string(WTERMSIG(ws)) + " (" + strsignal(WTERMSIG(ws)) + ")";
      else
        r.detail = "worker exited with status " + std::to_string(WEXITSTATUS(ws));
      rep.result(static_cast<size_t>(current), r);
      next = static_cast<size_t>(current) + 1;
    } else if (next < cases.size()) {
      // Died between cases: go on from the next one not reported.
      CaseResult r;
      r.status = Status::Error;
      r.detail = "worker died before the case started";
      rep.result(next, r);
      ++next;
    }
  }
}

void usage() {
  std::fprintf(stderr,
               "usage: onnx_node_test_runner [--data DIR] [--filter SUBSTR]... [--min-pass N]\n"
               "                             [--report FILE] [--case-timeout SECONDS] [--no-fork]\n");
}

}  // namespace

int main(int argc, char **argv) {
  GOOGLE_PROTOBUF_VERIFY_VERSION;
  Options o;
  for (int k = 1; k < argc; ++k) {
    std::string a = argv[k];
    auto value = [&]() -> std::string {
      if (k + 1 >= argc) {
        usage();
        std::exit(2);
      }
      return argv[++k];
    };
    if (a == "--data") o.dataDir = value();
    else if (a == "--filter") o.filters.push_back(value());
    else if (a == "--min-pass") o.minPass = std::strtol(value().c_str(), nullptr, 10);
    else if (a == "--report") o.report = value();
    else if (a == "--case-timeout") o.caseTimeout = std::strtod(value().c_str(), nullptr);
    else if (a == "--no-fork") o.noFork = true;
    else if (a == "--help" || a == "-h") {
      usage();
      return 0;
    } else {
      usage();
      return 2;
    }
  }
  if (!fs::is_directory(o.dataDir)) {
    std::fprintf(stderr, "no test data in %s (install libonnx-testdata)\n", o.dataDir.c_str());
    return 2;
  }
  std::vector<CaseInfo> cases = listCases(o);
  Reporter rep(o, cases);
  char hdr[256];
  std::snprintf(hdr, sizeof hdr,
                "ONNX backend node tests from %s: %zu cases. Tolerances |got-want| <= atol + rtol*|want|: "
                "rtol %g atol %g; F16 outputs rtol %g atol %g; integers and bools exact.",
                o.dataDir.c_str(), cases.size(), kRtol, kAtol, kRtolF16, kAtolF16);
  rep.line(hdr);
  auto t0 = std::chrono::steady_clock::now();
  if (o.noFork) {
    for (size_t k = 0; k < cases.size(); ++k) rep.result(k, runCase(cases[k]));
  } else {
    supervise(o, cases, rep);
  }
  double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // Per-op summary.
  struct Counts {
    int n = 0, pass = 0, fail = 0, unsup = 0, err = 0;
    std::string firstUnsupported;
  };
  std::map<std::string, Counts> perOp;
  Counts all;
  const auto &res = rep.results();
  for (size_t k = 0; k < cases.size(); ++k) {
    Counts &c = perOp[cases[k].op];
    for (Counts *x : {&c, &all}) {
      ++x->n;
      switch (res[k].status) {
        case Status::Pass: ++x->pass; break;
        case Status::Fail: ++x->fail; break;
        case Status::Unsupported:
          ++x->unsup;
          if (x->firstUnsupported.empty()) x->firstUnsupported = res[k].detail;
          break;
        case Status::Error: ++x->err; break;
      }
    }
  }
  rep.line("");
  rep.line("Per op:");
  char row[512];
  std::snprintf(row, sizeof row, "  %-28s %5s %5s %5s %5s %5s  %s", "op", "cases", "pass", "fail", "unsup", "error",
                "(first unsupported reason)");
  rep.line(row);
  for (const auto &[op, c] : perOp) {
    std::string why = c.firstUnsupported.size() > 120 ? c.firstUnsupported.substr(0, 117) + "..." : c.firstUnsupported;
    std::snprintf(row, sizeof row, "  %-28s %5d %5d %5d %5d %5d  %s", op.c_str(), c.n, c.pass, c.fail, c.unsup, c.err,
                  why.c_str());
    rep.line(row);
  }
  // The ops with the most unsupported cases.
  std::vector<std::pair<int, std::string>> top;
  for (const auto &[op, c] : perOp)
    if (c.unsup) top.emplace_back(-c.unsup, op);
  std::sort(top.begin(), top.end());
  std::string topLine = "Most unsupported cases:";
  for (size_t k = 0; k < top.size() && k < 15; ++k)
    topLine += " " + top[k].second + " (" + std::to_string(-top[k].first) + ")";
  if (top.empty()) topLine += " none";
  rep.line("");
  rep.line(topLine);
  std::snprintf(row, sizeof row,
                "Totals: %d cases, %d pass, %d fail, %d unsupported, %d error, %zu ops; %.1f s; --min-pass %ld",
                all.n, all.pass, all.fail, all.unsup, all.err, perOp.size(), total, o.minPass);
  rep.line(row);
  if (all.pass < o.minPass) {
    std::snprintf(row, sizeof row, "FAILED: %d cases passed, fewer than --min-pass %ld", all.pass, o.minPass);
    rep.line(row);
    return 1;
  }
  return 0;
}
