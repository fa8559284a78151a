//! Building a model from Rust: a graph (y = x + c) compiled, run on an
//! engine with Rust stream callbacks, then made into a PopEF model that a
//! ModelRunner serves, written to bytes and read back.
mod common;

use std::sync::{Arc, Mutex};

use common::device_wait;
use mrt::*;

const C: [f32; 4] = [10.0, 20.0, 30.0, 40.0];

/// The graph y = x + C over 4 f32, its one program, compiled.
fn add_executable(progress: Option<ProgressCallback>) -> Executable {
    let target = Target::new("gc200", 1).unwrap();
    let graph = Graph::new(Some(&target), 1).unwrap();
    assert_eq!(graph.target().unwrap().name(), target.name());
    assert_eq!(graph.replication_factor().unwrap(), 1);
    let x = graph.add_variable(DataType::F32, &[4], "x").unwrap();
    graph.set_tile_mapping(x, 0).unwrap();
    let c = graph.add_constant(&[4], &C, "c").unwrap();
    graph.set_tile_mapping(c, 0).unwrap();
    let info = graph.tensor_info(c).unwrap();
    assert_eq!(
        (info.data_type, info.shape.clone(), info.num_bytes, info.is_constant),
        (Some(DataType::F32), vec![4], 16, true)
    );
    assert_eq!(graph.tile_mapping(x).unwrap(), vec![TileInterval { begin: 0, end: 4, tile: 0 }]);

    let input = graph.add_host_to_device_fifo("x", DataType::F32, 4).unwrap();
    let output = graph.add_device_to_host_fifo("y", DataType::F32, 4).unwrap();
    let main = graph.sequence(&[], Some("main")).unwrap();
    graph.sequence_add(main, graph.copy_from_stream(input, x, None).unwrap()).unwrap();
    let y = graph.binary(main, "Add", x, c, "y").unwrap();
    graph.sequence_add(main, graph.copy_to_stream(y, output, None).unwrap()).unwrap();
    let executable = graph.compile(&[main], &[], progress).unwrap();
    let err = graph.compile(&[main], &[], None).expect_err("a graph compiles once");
    assert_eq!(err.status(), Status::FailedPrecondition);
    executable
}

#[test]
fn a_compiled_graph_runs_on_an_engine_with_rust_streams() {
    let steps = Arc::new(Mutex::new(Vec::new()));
    let seen = steps.clone();
    let executable = add_executable(Some(Box::new(move |step, total| seen.lock().unwrap().push((step, total)))));
    assert!(!steps.lock().unwrap().is_empty(), "compiling reported no progress");

    let info = executable.info().unwrap();
    assert_eq!((info.num_programs, info.num_streams, info.replication_factor), (1, 2, 1));
    assert_eq!(executable.handle(HandleKind::HostToDevice, 0).unwrap().num_elements, 4);
    assert!(executable.memory_per_tile().unwrap()[0] > 0);
    let copy = Executable::deserialize(executable.serialize().unwrap()).unwrap();
    assert_eq!(copy.info().unwrap().hash, info.hash);

    let device = DeviceManager::new().unwrap().device(DeviceRequest::Ipus(1), &[], device_wait()).unwrap();
    let engine = Engine::new(&executable, &[]).unwrap();
    engine.load(&device).unwrap();
    engine
        .connect_stream(
            "x",
            Replicas::All,
            Box::new(|bytes: &mut [u8], _replica| {
                let x: Vec<u8> = [1f32, 2.0, 3.0, 4.0].iter().flat_map(|v| v.to_ne_bytes()).collect();
                bytes.copy_from_slice(&x);
            }),
        )
        .unwrap();
    let y = Arc::new(Mutex::new(Vec::new()));
    let sink = y.clone();
    engine
        .connect_stream(
            "y",
            Replicas::All,
            Box::new(move |bytes: &mut [u8], _replica| {
                *sink.lock().unwrap() =
                    bytes.chunks_exact(4).map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]])).collect::<Vec<f32>>();
            }),
        )
        .unwrap();
    engine.run(0, Replicas::All).unwrap();
    assert_eq!(*y.lock().unwrap(), vec![11.0, 22.0, 33.0, 44.0]);

    // The same through circular host buffers the engine keeps.
    let mut engine = engine;
    let x: Vec<u8> = [5f32, 6.0, 7.0, 8.0].iter().flat_map(|v| v.to_ne_bytes()).collect();
    engine.connect_stream_to_buffer("x", Replicas::All, x).unwrap();
    engine.connect_stream_to_buffer("y", Replicas::All, vec![0u8; 16]).unwrap();
    let err = engine.connect_stream_to_buffer("y", Replicas::All, vec![0u8; 10]).expect_err("10 bytes are no transfer");
    assert_eq!(err.status(), Status::InvalidArgument);
    engine.run(0, Replicas::All).unwrap();
    let y: Vec<f32> = engine
        .stream_buffer("y", Replicas::All)
        .unwrap()
        .chunks_exact(4)
        .map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    assert_eq!(y, vec![15.0, 26.0, 37.0, 48.0]);
    assert!(engine.device_cycles(0).unwrap() > 0);
    let err = engine.run(5, Replicas::All).expect_err("program 5 of 1 must fail");
    assert_eq!(err.status(), Status::InvalidArgument);
    let err = engine.connect_stream("nope", Replicas::All, Box::new(|_: &mut [u8], _| {})).expect_err("unknown stream");
    assert_eq!(err.status(), Status::NotFound);
}

#[test]
fn a_built_model_is_served_by_a_runner_and_survives_bytes() {
    let executable = add_executable(None);
    let mut builder = ModelBuilder::new("add_model", &executable).unwrap();
    builder.set_program_flow(ProgramPhase::Main, &[0]).unwrap();
    builder.add_anchor(&AnchorConfig { handle: "x", shape: &[4], programs: &[0], ..AnchorConfig::default() }).unwrap();
    builder.add_anchor(&AnchorConfig { handle: "y", shape: &[4], programs: &[0], ..AnchorConfig::default() }).unwrap();
    let err = builder
        .add_anchor(&AnchorConfig { handle: "nope", shape: &[4], ..AnchorConfig::default() })
        .expect_err("an unknown handle must fail");
    assert_eq!(err.status(), Status::InvalidArgument);
    assert!(err.message().contains("nope"), "{err}");
    let model = builder.build().unwrap();
    let model = Model::load_from_memory(&model.to_bytes().unwrap()).unwrap();
    assert_eq!(model.info().unwrap().executable, "add_model");
    assert_eq!(model.anchor_by_handle("y").unwrap().tensor_type, TensorType::Output);

    let runner =
        ModelRunner::with_config(&model, RunnerConfig { device_wait: device_wait(), ..RunnerConfig::default() })
            .unwrap();
    let mut y = [0f32; 4];
    runner.execute(&[Input::new("x", &[0.5f32, 1.5, 2.5, 3.5])], &mut [Output::new("y", &mut y)]).unwrap();
    assert_eq!(y, [10.5, 21.5, 32.5, 43.5]);
}

#[test]
fn graph_mistakes_name_the_bad_value() {
    let graph = Graph::new(None, 1).unwrap();
    let cs = graph.add_compute_set("cs").unwrap();
    let err = graph.add_vertex(cs, "NoSuchCodelet", 0).expect_err("an unknown codelet must fail");
    assert_eq!(err.status(), Status::NotFound);
    assert!(err.message().contains("NoSuchCodelet"), "{err}");
    let err = graph.add_variable(DataType::F64, &[2], "f64").expect_err("the IPU has no F64");
    assert_eq!(err.status(), Status::InvalidArgument);
    let err = graph.tensor_info(Tensor(12345)).expect_err("a stale id must fail");
    assert_eq!(err.status(), Status::InvalidArgument);
    let mut fast = Target::new("bow", 1).unwrap();
    unsafe { fast.raw_mut().clock_hz *= 2.0 };
    let clock = Graph::new(Some(&fast), 1).unwrap().target().unwrap().raw().clock_hz;
    assert_eq!(clock, fast.raw().clock_hz);
    let mut broken = fast;
    unsafe { broken.raw_mut().tiles_per_ipu = 0 };
    let err = Graph::new(Some(&broken), 1).expect_err("zero tiles must fail");
    assert_eq!(err.status(), Status::InvalidArgument);
    assert!(err.message().contains("tiles_per_ipu"), "{err}");
    let err = Target::new("no-such-system", 1).expect_err("an unknown system must fail");
    assert_eq!(err.status(), Status::NotFound);
    let add = codelets().unwrap().into_iter().find(|c| c.name == "Add").expect("Add is a built-in codelet");
    assert!(add.fields.iter().any(|(name, direction)| name == "out" && *direction == FieldDirection::Out), "{add:?}");
}

#[test]
fn host_tensors_remote_buffers_printing_and_profiles() {
    let target = Target::new("gc200", 1).unwrap();
    let graph = Graph::new(Some(&target), 1).unwrap();
    let v = graph.add_variable(DataType::S32, &[2, 3], "v").unwrap();
    graph.map_linearly(v, 3, Tiles::default()).unwrap();
    graph.create_host_write("v_in", v).unwrap();
    graph.create_host_read("v_out", v).unwrap();
    let buffer = graph.add_remote_buffer("rb", DataType::S32, 6, 2).unwrap();
    let row = graph.index(v, 1).unwrap();
    assert_eq!(graph.tensor_info(row).unwrap().shape, vec![3]);
    let main = graph.sequence(&[], Some("main")).unwrap();
    graph.sequence_add(main, graph.copy_from_remote_buffer(buffer, v, 1, None, None).unwrap()).unwrap();
    let two = graph.add_constant_filled(DataType::S32, &[2, 3], 2.0, "two").unwrap();
    graph.map_linearly(two, 3, Tiles::default()).unwrap();
    graph.binary_in_place(main, "Mul", v, two).unwrap();
    graph.sequence_add(main, graph.print_tensor("v", v).unwrap()).unwrap();
    graph.sequence_add(main, graph.copy_to_remote_buffer(v, buffer, 0, None, None).unwrap()).unwrap();
    let executable = graph.compile(&[main], &[], None).unwrap();
    assert_eq!(executable.program_name(0).unwrap(), "main");

    let device = DeviceManager::new().unwrap().device(DeviceRequest::Ipus(1), &[], device_wait()).unwrap();
    let engine = Engine::new(&executable, &[("debug.instrument", "true")]).unwrap();
    engine.load(&device).unwrap();
    let lines = Arc::new(Mutex::new(Vec::new()));
    let sink = lines.clone();
    engine.set_print_callback(Some(Box::new(move |line: &str| sink.lock().unwrap().push(line.to_string())))).unwrap();
    engine.copy_to_remote_buffer("rb", &[1i32, 2, 3, 4, 5, 6], 1, 0).unwrap();
    engine.write_tensor("v_in", &[9i32; 6], Replicas::All).unwrap();
    engine.run(0, Replicas::One(0)).unwrap();
    let mut v_out = [0i32; 6];
    engine.read_tensor("v_out", &mut v_out, 0).unwrap();
    assert_eq!(v_out, [2, 4, 6, 8, 10, 12]);
    let mut slot0 = [0i32; 6];
    engine.copy_from_remote_buffer("rb", &mut slot0, 0, 0).unwrap();
    assert_eq!(slot0, v_out);
    assert_eq!(lines.lock().unwrap().len(), 1, "{:?}", lines.lock().unwrap());
    assert!(lines.lock().unwrap()[0].starts_with("v:"), "{:?}", lines.lock().unwrap());
    let summary = engine.profile_text(ProfileFormat::Summary).unwrap();
    assert!(summary.contains("RemoteToTensor") && summary.contains("Mul"), "{summary}");
    assert!(summary.contains(&format!("{} cycles since load", engine.device_cycles(0).unwrap())), "{summary}");
    let intervals = engine.profile_text(ProfileFormat::Intervals).unwrap();
    assert!(intervals.starts_with("begin,end"), "{intervals}");
    let err = engine.read_tensor("v_out", &mut [0i32; 5], 0).expect_err("a short buffer must fail");
    assert_eq!(err.status(), Status::InvalidArgument);
}

/// A stateful model: Main adds x into an accumulator and streams it out,
/// Save streams the accumulator to acc_save.
fn accumulator_model() -> Model {
    let graph = Graph::new(Some(&Target::new("gc200", 1).unwrap()), 1).unwrap();
    let acc = graph.add_variable(DataType::F32, &[4], "acc").unwrap();
    let x = graph.add_variable(DataType::F32, &[4], "x").unwrap();
    graph.set_tile_mapping(acc, 0).unwrap();
    graph.set_tile_mapping(x, 0).unwrap();
    let x_in = graph.add_host_to_device_fifo("x", DataType::F32, 4).unwrap();
    let acc_out = graph.add_device_to_host_fifo("acc_out", DataType::F32, 4).unwrap();
    let acc_save = graph.add_device_to_host_fifo("acc_save", DataType::F32, 4).unwrap();
    let main = graph.sequence(&[graph.copy_from_stream(x_in, x, None).unwrap()], Some("main")).unwrap();
    graph.binary_in_place(main, "Add", acc, x).unwrap();
    graph.sequence_add(main, graph.copy_to_stream(acc, acc_out, None).unwrap()).unwrap();
    let save = graph.sequence(&[graph.copy_to_stream(acc, acc_save, None).unwrap()], Some("save")).unwrap();
    let executable = graph.compile(&[main, save], &[], None).unwrap();
    let mut builder = ModelBuilder::new("accumulator", &executable).unwrap();
    builder.set_program_flow(ProgramPhase::Main, &[0]).unwrap();
    builder.set_program_flow(ProgramPhase::Save, &[1]).unwrap();
    for (handle, program) in [("x", 0u64), ("acc_out", 0), ("acc_save", 1)] {
        builder
            .add_anchor(&AnchorConfig { handle, shape: &[4], programs: &[program], ..AnchorConfig::default() })
            .unwrap();
    }
    builder.build().unwrap()
}

#[test]
fn save_program_outputs_arrive_when_the_runner_closes() {
    let model = accumulator_model();
    let save_outputs = vec![SaveOutput { replica: 0, name: "acc_save".into(), size_in_bytes: 16 }];
    let config = RunnerConfig {
        device_wait: device_wait(),
        run_save_programs: true,
        save_outputs: save_outputs.clone(),
        ..RunnerConfig::default()
    };
    let runner = ModelRunner::with_config(&model, config).unwrap();
    let outputs: Vec<&str> = runner.outputs().iter().map(|d| d.name.as_str()).collect();
    assert_eq!(outputs, vec!["acc_out"], "acc_save is a Save output");
    let x = [1f32, 2.0, 3.0, 4.0];
    for round in 1..=3 {
        let mut acc = [0f32; 4];
        runner.execute(&[Input::new("x", &x)], &mut [Output::new("acc_out", &mut acc)]).unwrap();
        assert_eq!(acc, x.map(|v| v * round as f32));
    }
    let saved = runner.close_with_save_outputs();
    assert_eq!(saved.len(), 1);
    assert_eq!(saved[0].0, save_outputs[0]);
    let values: Vec<f32> = saved[0].1.chunks_exact(4).map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]])).collect();
    assert_eq!(values, vec![3.0, 6.0, 9.0, 12.0]);

    let config = RunnerConfig {
        device_wait: device_wait(),
        save_outputs: vec![SaveOutput { replica: 0, name: "acc_out".into(), size_in_bytes: 16 }],
        ..RunnerConfig::default()
    };
    let err = ModelRunner::with_config(&model, config).expect_err("acc_out is not a Save output");
    assert_eq!(err.status(), Status::NotFound);
    assert!(err.message().contains("acc_out"), "{err}");
}
