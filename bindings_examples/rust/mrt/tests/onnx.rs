//! ONNX import: a model written here (Add of two [2,3] floats, encoded as
//! ONNX protobuf by hand: the test needs no ONNX tooling) compiles and
//! serves; a malformed one is refused naming the problem.
mod common;

use std::sync::{Arc, Mutex};

use common::device_wait;
use mrt::*;

/// Protobuf wire format: the few pieces an ONNX ModelProto needs.
fn varint(mut value: u64, out: &mut Vec<u8>) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn field_varint(field: u64, value: u64, out: &mut Vec<u8>) {
    varint(field << 3, out);
    varint(value, out);
}

fn field_bytes(field: u64, bytes: &[u8], out: &mut Vec<u8>) {
    varint(field << 3 | 2, out);
    varint(bytes.len() as u64, out);
    out.extend_from_slice(bytes);
}

/// ValueInfoProto: a FLOAT tensor `name` of shape `dims`.
fn float_tensor(name: &str, dims: &[u64]) -> Vec<u8> {
    let mut shape = Vec::new();
    for &d in dims {
        let mut dim = Vec::new();
        field_varint(1, d, &mut dim); // Dimension.dim_value
        field_bytes(1, &dim, &mut shape); // TensorShapeProto.dim
    }
    let mut tensor = Vec::new();
    field_varint(1, 1, &mut tensor); // elem_type FLOAT
    field_bytes(2, &shape, &mut tensor);
    let mut type_proto = Vec::new();
    field_bytes(1, &tensor, &mut type_proto); // TypeProto.tensor_type
    let mut value_info = Vec::new();
    field_bytes(1, name.as_bytes(), &mut value_info);
    field_bytes(2, &type_proto, &mut value_info);
    value_info
}

/// y = a + b, a and b FLOAT [2,3]; opset 13.
fn add_model() -> Vec<u8> {
    let mut node = Vec::new();
    field_bytes(1, b"a", &mut node);
    field_bytes(1, b"b", &mut node);
    field_bytes(2, b"y", &mut node);
    field_bytes(3, b"add", &mut node);
    field_bytes(4, b"Add", &mut node);
    let mut graph = Vec::new();
    field_bytes(1, &node, &mut graph);
    field_bytes(2, b"rust_add", &mut graph);
    field_bytes(11, &float_tensor("a", &[2, 3]), &mut graph);
    field_bytes(11, &float_tensor("b", &[2, 3]), &mut graph);
    field_bytes(12, &float_tensor("y", &[2, 3]), &mut graph);
    let mut opset = Vec::new();
    field_varint(2, 13, &mut opset);
    let mut model = Vec::new();
    field_varint(1, 8, &mut model); // ir_version
    field_bytes(7, &graph, &mut model);
    field_bytes(8, &opset, &mut model);
    model
}

#[test]
fn an_onnx_model_compiles_and_serves() {
    let steps = Arc::new(Mutex::new(0));
    let counter = steps.clone();
    let options = OnnxOptions {
        model_name: Some("rust_onnx_add"),
        progress: Some(Box::new(move |_, _| *counter.lock().unwrap() += 1)),
        ..OnnxOptions::default()
    };
    let model = compile_onnx_bytes(&add_model(), options).unwrap();
    assert_eq!(model.info().unwrap().executable, "rust_onnx_add");
    assert!(*steps.lock().unwrap() > 0, "no progress was reported");

    let runner =
        ModelRunner::with_config(&model, RunnerConfig { device_wait: device_wait(), ..RunnerConfig::default() })
            .unwrap();
    let a = [1f32, 2.0, 3.0, 4.0, 5.0, 6.0];
    let b = [0.5f32; 6];
    let mut y = [0f32; 6];
    runner.execute(&[Input::new("a", &a), Input::new("b", &b)], &mut [Output::new("y", &mut y)]).unwrap();
    assert_eq!(y, [1.5, 2.5, 3.5, 4.5, 5.5, 6.5]);

    // The same file from disk, compiled for a batch of 4 by replacing a's
    // and b's whole shapes.
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("rust_add.onnx");
    std::fs::write(&path, add_model()).unwrap();
    let dims: &[i64] = &[4, 3];
    let options = OnnxOptions { input_shapes: &[("a", dims), ("b", dims)], ..OnnxOptions::default() };
    let model = compile_onnx_file(&path, options).unwrap();
    assert_eq!(model.anchor_by_name("y").unwrap().shape, vec![4, 3]);
    assert_eq!(model.batching_dim().unwrap(), None);
}

#[test]
fn a_compiled_model_records_its_batching_dim() {
    let model =
        compile_onnx_bytes(&add_model(), OnnxOptions { batching_dim: Some(0), ..OnnxOptions::default() }).unwrap();
    assert_eq!(model.batching_dim().unwrap(), Some(0));
    let err = compile_onnx_bytes(&add_model(), OnnxOptions { batching_dim: Some(2), ..OnnxOptions::default() })
        .expect_err("the tensors have rank 2");
    assert_eq!(err.status(), Status::InvalidArgument);
    assert!(err.message().contains("batching_dim 2"), "{err}");
}

#[test]
fn malformed_onnx_is_refused_with_a_message() {
    let err = compile_onnx_bytes(b"\x08\x08\x3a\xff\xff", OnnxOptions::default()).expect_err("truncated protobuf");
    assert_eq!(err.status(), Status::CorruptModel);
    assert!(!err.message().is_empty());
    let err = compile_onnx_file("/nonexistent/model.onnx", OnnxOptions::default()).expect_err("missing file");
    assert_eq!(err.status(), Status::NotFound);
    assert!(err.message().contains("/nonexistent/model.onnx"), "{err}");
    let options = OnnxOptions { target: Some("no-such-system"), ..OnnxOptions::default() };
    let err = compile_onnx_bytes(&add_model(), options).expect_err("an unknown target must fail");
    assert!(err.message().contains("no-such-system"), "{err}");
}
