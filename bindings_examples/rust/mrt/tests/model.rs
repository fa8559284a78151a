//! A model's metadata, anchors, data and files; element types.
mod common;

use common::model;
use mrt::*;

#[test]
fn metadata_and_anchors_come_from_the_file() {
    let model = model();
    let info = model.info().unwrap();
    assert_eq!(info.num_anchors, 6);
    assert!(info.is_inference);
    let anchors = model.anchors().unwrap();
    let image = anchors.iter().find(|a| a.name == "image").unwrap();
    assert_eq!(
        (image.data_type, image.shape.clone(), image.tensor_type),
        (Some(DataType::F32), vec![1, 784], TensorType::Input)
    );
    assert_eq!(image.data_source, DataSource::None);
    let w1 = model.anchor_by_name("w1").unwrap();
    assert_eq!(w1.data_source, DataSource::TensorData);
    assert_eq!(model.anchor_by_handle(&w1.handle).unwrap(), w1);
    assert_eq!(model.tensor_data::<f32>("w1").unwrap().len(), 784 * 128);
    assert!(!model.program_flow(ProgramPhase::Main).unwrap().is_empty());
    assert_eq!(model.programs().unwrap().len(), info.num_programs);
    assert_eq!(model.options(OptionSet::Engine).unwrap().len(), info.num_engine_options);
    assert!(!model.executable_bytes().unwrap().is_empty());
    assert_eq!(model.batching_dim().unwrap(), None); // the mlp records none

    let err = model.anchor_by_name("nope").expect_err("an unknown anchor must fail");
    assert_eq!(err.status(), Status::NotFound);
    let err = model.tensor_data::<f32>("w3").expect_err("w3 does not exist");
    assert!(err.message().contains("'w3'"), "{err}");
    let err = model.tensor_data::<f64>("b2").expect_err("b2 holds f32");
    assert_eq!(err.status(), Status::InvalidArgument);
    assert!(err.message().contains("TensorData 'b2' holds F32, asked for F64"), "{err}");
    let err = Model::load_from_memory(b"not a popef file").expect_err("garbage must fail");
    assert_eq!(err.status(), Status::CorruptModel);
}

#[test]
fn models_round_trip_through_files() {
    let model = model();
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let (one, meta, data) = (dir.join("mlp_copy.popef"), dir.join("mlp_meta.popef"), dir.join("mlp_data.popef"));
    model.write(&one).unwrap();
    model.write_split(&meta, &data).unwrap();
    let copy = Model::load(&one).unwrap();
    let split = Model::load_files(&[&meta, &data]).unwrap();
    let named = Model::load_named(&[&one], &model.info().unwrap().executable).unwrap();
    for other in [&copy, &split, &named] {
        assert_eq!(other.tensor_data::<f32>("b1").unwrap(), model.tensor_data::<f32>("b1").unwrap());
    }
    let err = Model::load_named(&[&one], "other").expect_err("no model of that name");
    assert_eq!(err.status(), Status::NotFound);
}

#[test]
fn element_types_and_half_floats() {
    assert_eq!(DataType::from_raw(9), Some(DataType::F16));
    assert_eq!(DataType::from_raw(12), None);
    assert_eq!((DataType::F16.size(), DataType::S64.size(), DataType::Bool.size()), (2, 8, 1));
    for value in [0.0f32, 1.0, -2.5, 65504.0, 2f32.powi(-14), 2f32.powi(-24), 3.0 * 2f32.powi(-24)] {
        assert_eq!(F16::from_f32(value).to_f32(), value, "{value}");
    }
    assert_eq!(F16::from_f32(1.0).0, 0x3c00);
    assert_eq!(F16::from_f32(1e6).to_f32(), f32::INFINITY);
    assert!(F16::from_f32(f32::NAN).to_f32().is_nan());
    assert_eq!(F16::from_f32(1.0 + 1.0 / 4096.0).0, 0x3c00, "ties round to even");
    assert!(Bool::from(true).get() && !Bool(0).get());
}

#[test]
fn versions_and_host_memory() {
    check_header_version().unwrap();
    assert!(version().starts_with("0."));
    let err = check_version(99, 0).expect_err("major 99 must fail");
    assert_eq!(err.status(), Status::VersionMismatch);
    let (limit, _reserved) = host_memory();
    assert!(limit > 0);
    assert_eq!(Status::from_code(0), None);
    assert_eq!(Status::from_code(8), Some(Status::DeviceError));
    assert_eq!(Status::from_code(77), Some(Status::Unknown(77)));
    assert_eq!(Status::DeviceError.name(), "MRT_DEVICE_ERROR: device error");
}
