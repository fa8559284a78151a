//! ModelRunner through the safe API: results, misuse (each mistake an Error
//! with the right status and a message naming the bad value), futures
//! (waited, awaited, on_ready), statistics and the configuration.
mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use common::{block_on, image, model, runner, sync_probs, wait_until, CLASSES, IMAGE};
use mrt::*;

#[test]
fn handles_have_the_thread_traits_the_header_allows() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<Model>();
    send_sync::<ModelRunner>();
    send_sync::<Future>();
    send_sync::<Future<Vec<OutputBuffer>>>();
    send_sync::<TensorMemory>();
    send_sync::<DeviceManager>();
    send_sync::<Device>();
    send_sync::<AnchorPredicate>();
    send_sync::<QueueManager>();
    send_sync::<SessionStopper>();
    send_sync::<Graph>();
    send_sync::<Executable>();
    send_sync::<Engine>();
    send::<Session>();
    send::<ModelBuilder>();
}

#[test]
fn descriptions_come_from_the_model() {
    let model = model();
    let runner = runner(&model);
    assert_eq!(runner.inputs().len(), 1);
    let image = &runner.inputs()[0];
    assert_eq!((image.name.as_str(), image.shape.clone(), image.size_in_bytes), ("image", vec![1, 784], 784 * 4));
    assert_eq!(image.data_type, Some(DataType::F32));
    assert_eq!(runner.outputs()[0].name, "probs");
    assert_eq!(runner.outputs()[0].size_in_bytes, 40);
    let all: Vec<String> = runner.model_inputs().unwrap().into_iter().map(|d| d.name).collect();
    assert_eq!(all, vec!["b1", "b2", "image", "w1", "w2"]);
    assert_eq!(runner.model().unwrap().info().unwrap().executable, model.info().unwrap().executable);
}

#[test]
fn missing_file_is_not_found_naming_it() {
    let err = Model::load("/nonexistent/dir/mlp.popef").expect_err("loading a missing file must fail");
    assert_eq!(err.status(), Status::NotFound);
    assert_eq!(err.status().code(), 2);
    assert!(err.message().contains("/nonexistent/dir/mlp.popef"), "{err}");
    assert!(err.to_string().starts_with("MRT_NOT_FOUND"), "{err}");
}

#[test]
fn wrong_input_name_gives_the_library_message() {
    let model = model();
    let runner = runner(&model);
    let image = vec![0.5f32; IMAGE];
    let mut probs = [0f32; CLASSES];
    let err = runner
        .execute(&[Input::new("imagez", &image)], &mut [Output::new("probs", &mut probs)])
        .expect_err("a wrong name must fail");
    assert_eq!(err.status(), Status::NotFound);
    assert!(err.message().contains("unknown input 'imagez': execute inputs are image (missing: image)"), "{err}");

    let err = runner
        .execute(&[Input::new("image", &image), Input::new("label", &image)], &mut [Output::new("probs", &mut probs)])
        .expect_err("an unknown extra input must fail");
    assert_eq!(err.status(), Status::NotFound);
    assert!(err.message().contains("'label'"), "{err}");

    // The runner keeps serving after the errors.
    let probs = sync_probs(&runner, &image);
    let total: f32 = probs.iter().sum();
    assert!((total - 1.0).abs() < 1e-5, "softmax sums to {total}");
}

#[test]
fn wrong_sizes_and_types_are_refused_before_calling_c() {
    let model = model();
    let runner = runner(&model);
    let image = vec![0.5f32; IMAGE];
    let mut probs = [0f32; CLASSES];

    let err = runner
        .execute(&[Input::new("image", &image[..IMAGE - 1])], &mut [Output::new("probs", &mut probs)])
        .expect_err("a short input must fail");
    assert_eq!(err.status(), Status::InvalidArgument);
    assert!(err.message().contains("'image' has 3132 bytes, expected a whole number of batches of 3136"), "{err}");

    let mut short = [0f32; CLASSES - 1];
    let err = runner
        .execute(&[Input::new("image", &image)], &mut [Output::new("probs", &mut short)])
        .expect_err("a short output must fail");
    assert!(err.message().contains("'probs' has 36 bytes"), "{err}");

    // Two batches of input but room for one batch of output.
    let two = vec![0.5f32; 2 * IMAGE];
    let err = runner
        .execute(&[Input::new("image", &two)], &mut [Output::new("probs", &mut probs)])
        .expect_err("mismatched batch counts must fail");
    assert!(err.message().contains("holds 1 batches but 'image' holds 2"), "{err}");

    // Every element type is accepted by Input, and checked against the model's.
    let wide = vec![0.5f64; IMAGE];
    let err = runner.execute_async(&[Input::new("image", &wide)]).expect_err("f64 for f32 must fail");
    assert!(err.message().contains("given as F64, the model's element type is F32"), "{err}");
    let halves = vec![F16::from_f32(0.5); IMAGE * 2];
    let err = runner.execute_alloc(0, &[Input::new("image", &halves)]).expect_err("f16 for f32 must fail");
    assert!(err.message().contains("given as F16"), "{err}");
    let bytes = vec![Bool::from(true); IMAGE * 4];
    let err = runner.execute_alloc(0, &[Input::new("image", &bytes)]).expect_err("bool for f32 must fail");
    assert!(err.message().contains("given as Bool"), "{err}");

    let err = runner.execute_on(7, &[Input::new("image", &image)], &mut [Output::new("probs", &mut probs)]);
    let err = err.expect_err("replica 7 of 1 must fail");
    assert_eq!(err.status(), Status::InvalidArgument);
    assert!(err.message().contains('7'), "{err}");
}

#[test]
fn async_and_alloc_outputs_equal_sync_outputs() {
    let model = model();
    let runner = runner(&model);
    let image = image();
    let probs = sync_probs(&runner, &image);
    let memory = runner.execute_async(&[Input::new("image", &image)]).unwrap().wait().unwrap();
    assert_eq!(memory.names().unwrap(), vec!["probs".to_string()]);
    assert_eq!(memory.get::<f32>("probs").unwrap(), &probs[..]);
    assert_eq!(memory.get::<f32>("logits").err().map(|e| e.status()), Some(Status::NotFound));
    let memory = runner.execute_alloc(0, &[Input::new("image", &image)]).unwrap();
    assert_eq!(memory.get::<f32>("probs").unwrap(), &probs[..]);
}

#[test]
fn futures_can_be_awaited_and_the_library_wakes_the_task() {
    let model = model();
    let runner = runner(&model);
    let image = image();
    let probs = sync_probs(&runner, &image);
    // Several requests in flight, awaited one after the other.
    let futures: Vec<Future> = (0..4).map(|_| runner.execute_async(&[Input::new("image", &image)]).unwrap()).collect();
    let (results, _) = block_on(async move {
        let mut results = Vec::new();
        for future in futures {
            results.push(future.await);
        }
        results
    });
    for result in results {
        assert_eq!(result.unwrap().get::<f32>("probs").unwrap(), &probs[..]);
    }
    // A request still pending when first polled: Pending, then woken.
    let (result, polls) = block_on(runner.execute_async(&[Input::new("image", &image)]).unwrap());
    assert_eq!(result.unwrap().get::<f32>("probs").unwrap(), &probs[..]);
    assert!(polls >= 1);
}

#[test]
fn a_failed_request_reports_its_status_message_and_recovery() {
    let model = model();
    let runner = runner(&model);
    let image = image();
    let err = runner
        .insert_simulated_error(SimulatedError::TileException, "NoSuchStep", 0)
        .expect_err("an unknown step must fail");
    assert_eq!(err.status(), Status::NotFound);
    assert!(err.message().contains("NoSuchStep"), "{err}");
    let step = (0..model.executable().unwrap().info().unwrap().num_steps)
        .map(|i| model.executable().unwrap().step(i).unwrap())
        .find(|s| s.kind == "Execute")
        .expect("the mlp has a compute step");
    runner.insert_simulated_error(SimulatedError::HostLinkError, &step.name, 0).unwrap();
    let (result, _) = block_on(runner.execute_async(&[Input::new("image", &image)]).unwrap());
    let err = result.expect_err("the request must see the device error");
    assert_eq!(err.status(), Status::DeviceError);
    assert_eq!(err.recovery_action(), RecoveryAction::FullReset);
    assert!(!err.message().is_empty());
}

#[test]
fn closing_the_model_first_leaves_the_runner_working() {
    // Use after close itself cannot compile (close takes self; see the
    // compile_fail doctests). What the C API allows - a parent closed before
    // its child - stays safe:
    let model = model();
    let runner = runner(&model);
    model.close();
    let image = vec![0.25f32; IMAGE];
    sync_probs(&runner, &image);
    // A future outliving its runner: the request completes (OK or Cancelled).
    let future = runner.execute_async(&[Input::new("image", &image)]).unwrap();
    runner.close();
    match future.wait() {
        Ok(memory) => assert_eq!(memory.get::<f32>("probs").unwrap().len(), CLASSES),
        Err(err) => assert_eq!(err.status(), Status::Cancelled, "{err}"),
    }
}

#[test]
fn dropping_a_pending_future_is_safe() {
    let model = model();
    let runner = runner(&model);
    let image = vec![1.0f32; IMAGE];
    for _ in 0..20 {
        drop(runner.execute_async(&[Input::new("image", &image)]).unwrap());
    }
}

#[test]
fn on_ready_reports_the_status_and_a_panic_is_caught() {
    let model = model();
    let runner = runner(&model);
    let image = vec![0.5f32; IMAGE];
    let before = caught_callback_panics();
    let future = runner.execute_async(&[Input::new("image", &image)]).unwrap();
    future.on_ready(|_| panic!("deliberate panic in on_ready")).unwrap();
    let (tx, rx) = mpsc::channel();
    future.on_ready(move |status| tx.send(status).unwrap()).unwrap();
    future.wait().unwrap();
    assert_eq!(rx.recv_timeout(Duration::from_secs(10)).unwrap(), Ok(()));
    assert!(wait_until(|| caught_callback_panics() > before), "the panic was not caught");

    // A closure that is dropped (freed through user_data_free) exactly once.
    struct CountDrops(Arc<AtomicUsize>);
    impl Drop for CountDrops {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let drops = Arc::new(AtomicUsize::new(0));
    let guard = CountDrops(drops.clone());
    let future = runner.execute_async(&[Input::new("image", &image)]).unwrap();
    future.on_ready(move |_| drop(guard)).unwrap();
    future.wait().unwrap();
    assert!(wait_until(|| drops.load(Ordering::SeqCst) == 1));
}

#[test]
fn statistics_count_the_requests() {
    let model = model();
    let runner = runner(&model);
    let image = image();
    let err = runner.time_trace(0, None).expect_err("no trace before the first request");
    assert_eq!(err.status(), Status::NotFound);
    for _ in 0..3 {
        sync_probs(&runner, &image);
    }
    let count = runner.statistics_count(0).unwrap();
    assert_eq!(count.request_us, 3.0);
    let last = runner.time_trace(0, None).unwrap();
    assert!(last.request_us > 0.0 && last.request_us >= last.computation_us, "{last:?}");
    let mean = runner.statistics_mean(0).unwrap();
    assert!(mean.request_us > 0.0, "{mean:?}");
    let median = runner.statistics_percentile(0, 0.5).unwrap();
    assert!(median.request_us > 0.0, "{median:?}");
    let err = runner.statistics_percentile(0, 1.5).expect_err("quantile 1.5 must fail");
    assert_eq!(err.status(), Status::InvalidArgument);
    let err = runner.time_trace(0, Some(1000)).expect_err("trace 1000 of 3 must fail");
    assert_eq!(err.status(), Status::InvalidArgument);
}

#[test]
fn the_config_reads_back_and_frozen_inputs_and_flush_callbacks_work() {
    let model = model();
    let image = image();
    let reference = sync_probs(&runner(&model), &image);
    let config = RunnerConfig {
        device_wait: common::device_wait(),
        frozen_inputs: vec![Input::new("image", &image)],
        timeout: Some(Duration::from_millis(1500)),
        request_tracepoints_buffer_size: 7,
        on_flush: Some(Box::new(|_name: &str| {})),
        ..RunnerConfig::default()
    };
    let runner = ModelRunner::with_config(&model, config).unwrap();
    assert!(runner.inputs().is_empty(), "a frozen input is not an execute input");
    let read = runner.config().unwrap();
    assert_eq!(read.timeout, Some(Duration::from_millis(1500)));
    assert_eq!(read.request_tracepoints_buffer_size, 7);
    assert_eq!(read.batching_dim, None);
    let mut probs = [0f32; CLASSES];
    runner.execute(&[], &mut [Output::new("probs", &mut probs)]).unwrap();
    assert_eq!(probs, reference);
}

#[test]
fn log_callback_receives_messages_and_survives_a_panic() {
    let lines = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = lines.clone();
    set_log_callback(move |level, message| {
        if message.contains("panic please") {
            panic!("deliberate panic in a log callback");
        }
        sink.lock().unwrap().push((level, message.to_string()));
    })
    .unwrap();
    let before = caught_callback_panics();
    log_message(LogLevel::Err, "hello from the Rust binding").unwrap();
    log_message(LogLevel::Err, "panic please").unwrap();
    log_message(LogLevel::Err, "still alive").unwrap();
    clear_log_callback().unwrap();
    assert!(caught_callback_panics() > before);
    let lines = lines.lock().unwrap();
    assert!(lines.iter().any(|(l, m)| *l == LogLevel::Err && m.contains("hello from the Rust binding")), "{lines:?}");
    assert!(lines.iter().any(|(_, m)| m.contains("still alive")), "{lines:?}");
    assert_eq!(log_message(LogLevel::Off, "x").err().map(|e| e.status()), Some(Status::InvalidArgument));
    let level = log_level();
    set_log_level(LogLevel::Debug).unwrap();
    assert_eq!(log_level(), LogLevel::Debug);
    set_log_level(level).unwrap();
}

#[test]
fn concurrent_threads_get_their_own_errors() {
    let model = model();
    let runner = runner(&model);
    let image = vec![0.5f32; IMAGE];
    std::thread::scope(|scope| {
        for thread in 0..4 {
            let runner = &runner;
            let image = &image;
            scope.spawn(move || {
                let name = format!("extra_{thread}");
                for _ in 0..25 {
                    let mut probs = [0f32; CLASSES];
                    let err = runner
                        .execute(
                            &[Input::new("image", image), Input::new(&name, image)],
                            &mut [Output::new("probs", &mut probs)],
                        )
                        .expect_err("an unknown input must fail");
                    assert!(err.message().contains(&format!("'{name}'")), "thread {thread} got {err}");
                    runner.execute(&[Input::new("image", image)], &mut [Output::new("probs", &mut probs)]).unwrap();
                }
            });
        }
    });
}

#[test]
fn batching_dim_serves_any_number_of_samples() {
    let model = model();
    let one = image();
    let reference = sync_probs(&runner(&model), &one);
    let config = RunnerConfig { device_wait: common::device_wait(), batching_dim: Some(0), ..RunnerConfig::default() };
    let runner = ModelRunner::with_config(&model, config).unwrap();
    assert_eq!(runner.config().unwrap().batching_dim, Some(0));
    let three: Vec<f32> = one.iter().chain(&one).chain(&one).copied().collect();
    let mut probs = [0f32; 3 * CLASSES];
    runner.execute(&[Input::new("image", &three)], &mut [Output::new("probs", &mut probs)]).unwrap();
    for sample in probs.chunks_exact(CLASSES) {
        assert_eq!(sample, &reference[..]);
    }
    let mut two = [0f32; 2 * CLASSES];
    let err = runner
        .execute(&[Input::new("image", &three)], &mut [Output::new("probs", &mut two)])
        .expect_err("3 samples in, room for 2 out");
    assert!(err.message().contains("holds 2 samples but 'image' holds 3"), "{err}");
}

#[test]
fn async_requests_write_into_caller_buffers_handed_back_when_done() {
    let model = model();
    let runner = runner(&model);
    let image = image();
    let probs = sync_probs(&runner, &image);
    let future = runner
        .execute_async_into(0, &[Input::new("image", &image)], vec![OutputBuffer::new("probs", vec![0f32; CLASSES])])
        .unwrap();
    let mut buffers = future.wait().unwrap();
    assert_eq!(buffers.len(), 1);
    assert_eq!(buffers[0].name(), "probs");
    assert_eq!(buffers[0].as_slice::<f32>().unwrap(), &probs[..]);
    let buffer = buffers.pop().unwrap().into_vec::<i32>().expect_err("the buffer holds f32");
    assert_eq!(buffer.into_vec::<f32>().unwrap(), probs.to_vec());

    let future = runner
        .execute_async_into(0, &[Input::new("image", &image)], vec![OutputBuffer::new("probs", vec![0f32; CLASSES])])
        .unwrap();
    let (awaited, _) = block_on(future);
    assert_eq!(awaited.unwrap()[0].as_slice::<f32>().unwrap(), &probs[..]);

    let err = runner
        .execute_async_into(0, &[Input::new("image", &image)], vec![OutputBuffer::new("probs", vec![0f64; CLASSES])])
        .expect_err("an f64 buffer for f32 probs must fail");
    assert!(err.message().contains("output 'probs' is given as F64"), "{err}");
    let err = runner
        .execute_async_into(0, &[Input::new("image", &image)], vec![OutputBuffer::new("logits", vec![0f32; CLASSES])])
        .expect_err("an unknown output must fail");
    assert_eq!(err.status(), Status::NotFound);
    assert!(err.message().contains("logits"), "{err}");
}
