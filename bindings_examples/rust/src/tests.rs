//! Misuse through the safe API: each mistake is an MrtError with the right
//! code and a message naming the bad value, never a crash. They need the mlp
//! example model: MRT_TEST_MODEL=<path to mlp.popef> (tests/bindings/rust
//! sets it).
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use crate::*;

const IMAGE: usize = 784;
const CLASSES: usize = 10;

fn model() -> Model {
    let path = std::env::var("MRT_TEST_MODEL")
        .expect("MRT_TEST_MODEL must name the mlp example model (mrt-gen mlp -o mlp.popef)");
    Model::load(path).expect("loading the mlp model")
}

/// cargo runs tests on several threads and each runner holds a simulated
/// device: wait for one rather than fail when all are busy.
fn runner(model: &Model) -> ModelRunner {
    let options = RunnerOptions { replicas: 1, device_wait: Some(Duration::from_secs(60)) };
    ModelRunner::with_options(model, &options).expect("creating a runner")
}

fn wait_until(condition: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !condition() {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    true
}

#[test]
fn layouts_match_the_header() {
    // sizeof() of the C structs on LP64 Linux, printed by a C program
    // compiled against include/mrt_c.h.
    assert_eq!(std::mem::size_of::<sys::mrt_model_runner_config>(), 176);
    assert_eq!(std::mem::size_of::<sys::mrt_tensor_view>(), 24);
    assert_eq!(std::mem::size_of::<sys::mrt_data_desc>(), 40);
}

#[test]
fn handles_have_the_thread_traits_the_header_allows() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Model>();
    send_sync::<ModelRunner>();
    send_sync::<Future>();
    send_sync::<TensorMemory>();
}

#[test]
fn descriptions_come_from_the_model() {
    let model = model();
    let runner = runner(&model);
    assert_eq!(runner.inputs().len(), 1);
    assert_eq!(runner.inputs()[0].name, "image");
    assert_eq!(runner.inputs()[0].shape, vec![1, 784]);
    assert_eq!(runner.inputs()[0].size_in_bytes, 784 * 4);
    assert_eq!(runner.outputs()[0].name, "probs");
    assert_eq!(runner.outputs()[0].size_in_bytes, 40);
}

#[test]
fn missing_file_is_not_found_naming_it() {
    let err = Model::load("/nonexistent/dir/mlp.popef").expect_err("loading a missing file must fail");
    assert_eq!(err.code(), Status::NOT_FOUND);
    assert!(err.message().contains("/nonexistent/dir/mlp.popef"), "{err}");
    assert!(err.to_string().starts_with("MRT_NOT_FOUND"), "{err}");
}

#[test]
fn unknown_tensor_data_is_not_found() {
    let model = model();
    let err = model.tensor_data::<f32>("w3").expect_err("w3 does not exist");
    assert_eq!(err.code(), Status::NOT_FOUND);
    assert!(err.message().contains("'w3'"), "{err}");
    assert_eq!(model.tensor_data::<f32>("b2").expect("b2 exists").len(), CLASSES);
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
    assert_eq!(err.code(), Status::NOT_FOUND);
    assert!(err.message().contains("unknown input 'imagez': execute inputs are image (missing: image)"), "{err}");

    let err = runner
        .execute(&[Input::new("image", &image), Input::new("label", &image)], &mut [Output::new("probs", &mut probs)])
        .expect_err("an unknown extra input must fail");
    assert_eq!(err.code(), Status::NOT_FOUND);
    assert!(err.message().contains("'label'"), "{err}");

    // The runner keeps serving after the errors.
    runner.execute(&[Input::new("image", &image)], &mut [Output::new("probs", &mut probs)]).expect("a good request");
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
    assert_eq!(err.code(), Status::INVALID_ARGUMENT);
    assert!(err.message().contains("'image' has 3132 bytes, expected 3136"), "{err}");

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

    let wide = vec![0.5f64; IMAGE];
    let err = runner.execute_async(&[Input::new("image", &wide)]).expect_err("f64 for f32 must fail");
    assert!(err.message().contains("given as f64"), "{err}");
}

#[test]
fn async_outputs_equal_sync_outputs() {
    let model = model();
    let runner = runner(&model);
    let image: Vec<f32> = (0..IMAGE).map(|i| (i % 13) as f32 / 13.0).collect();
    let mut probs = [0f32; CLASSES];
    runner.execute(&[Input::new("image", &image)], &mut [Output::new("probs", &mut probs)]).unwrap();
    let future = runner.execute_async(&[Input::new("image", &image)]).unwrap();
    let memory = future.wait().unwrap();
    assert_eq!(memory.names().unwrap(), vec!["probs".to_string()]);
    assert_eq!(memory.get::<f32>("probs").unwrap(), &probs[..]);
    assert_eq!(memory.get::<f32>("logits").err().map(|e| e.code()), Some(Status::NOT_FOUND));
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
    let mut probs = [0f32; CLASSES];
    runner.execute(&[Input::new("image", &image)], &mut [Output::new("probs", &mut probs)]).unwrap();
    // A future outliving its runner: the request completes (OK or CANCELLED).
    let future = runner.execute_async(&[Input::new("image", &image)]).unwrap();
    runner.close();
    match future.wait() {
        Ok(memory) => assert_eq!(memory.get::<f32>("probs").unwrap().len(), CLASSES),
        Err(err) => assert_eq!(err.code(), Status::CANCELLED, "{err}"),
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
    assert_eq!(rx.recv_timeout(Duration::from_secs(10)).unwrap(), Status::OK);
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
fn log_callback_receives_messages_and_survives_a_panic() {
    let lines = Arc::new(Mutex::new(Vec::new()));
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
    assert_eq!(log_message(LogLevel::Off, "x").err().map(|e| e.code()), Some(Status::INVALID_ARGUMENT));
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
