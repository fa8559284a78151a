// A one-node ONNX model the device-time tests compile: y = x [m, k] times w,
// as MatMul with w [k, n] or as Gemm with w [n, k] and transB (PyTorch's
// Linear); w an initializer, or a graph input. Inputs are deterministic
// functions of the element index, and the reference product is computed
// here in double.
#pragma once

#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace onnx_test {

inline float xAt(int i) { return static_cast<float>(i % 13) / 13.0f - 0.5f; }
inline float wAt(int i) { return static_cast<float>((i * 7919) % 2001 - 1000) / 20000.0f; }

inline std::vector<float> values(std::size_t n, float (*at)(int)) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = at(static_cast<int>(i));
  return v;
}

struct MatMulShape {
  int m = 0, k = 0, n = 0;
};

inline void declareFloat(::onnx::ValueInfoProto *v, const std::string &name, const std::vector<int> &dims) {
  v->set_name(name);
  auto *type = v->mutable_type()->mutable_tensor_type();
  type->set_elem_type(::onnx::TensorProto::FLOAT);
  for (const int d : dims) type->mutable_shape()->add_dim()->set_dim_value(d);
}

// op: "MatMul" or "Gemm". The serialized model.
inline std::string matMulModel(const std::string &op, MatMulShape s, bool weightIsInput) {
  ::onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  ::onnx::GraphProto *g = m.mutable_graph();
  g->set_name(op);
  declareFloat(g->add_input(), "x", {s.m, s.k});
  declareFloat(g->add_output(), "y", {s.m, s.n});
  const bool gemm = op == "Gemm";
  const std::vector<int> wDims = gemm ? std::vector<int>{s.n, s.k} : std::vector<int>{s.k, s.n};
  if (weightIsInput) {
    declareFloat(g->add_input(), "w", wDims);
  } else {
    ::onnx::TensorProto *w = g->add_initializer();
    w->set_name("w");
    w->set_data_type(::onnx::TensorProto::FLOAT);
    for (const int d : wDims) w->add_dims(d);
    for (int i = 0; i < s.k * s.n; ++i) w->add_float_data(wAt(i));
  }
  ::onnx::NodeProto *node = g->add_node();
  node->set_op_type(op);
  // std::strings: GCC 12 takes add_input(const char *)'s copy for an
  // overlapping one (-Wrestrict).
  for (const std::string name : {"x", "w"}) node->add_input(name);
  node->add_output(std::string("y"));
  if (gemm) {
    ::onnx::AttributeProto *transB = node->add_attribute();
    transB->set_name("transB");
    transB->set_type(::onnx::AttributeProto::INT);
    transB->set_i(1);
  }
  return m.SerializeAsString();
}

// y of the model, as the op reads w.
inline std::vector<double> matMulReference(const std::string &op, MatMulShape s) {
  const std::vector<float> x = values(static_cast<std::size_t>(s.m * s.k), xAt);
  const std::vector<float> w = values(static_cast<std::size_t>(s.k * s.n), wAt);
  std::vector<double> y(static_cast<std::size_t>(s.m * s.n), 0.0);
  for (int i = 0; i < s.m; ++i) {
    for (int k = 0; k < s.k; ++k) {
      for (int j = 0; j < s.n; ++j) {
        y[i * s.n + j] += double(x[i * s.k + k]) * w[op == "Gemm" ? j * s.k + k : k * s.n + j];
      }
    }
  }
  return y;
}

}  // namespace onnx_test
