//! mlp-example [--check-errors] [MODEL.popef]: runs libmrt's mlp example
//! model through the safe `mrt` wrapper, sync and async, and checks the
//! results against the same network computed here from the model's own
//! TensorData. With --check-errors it shows instead how misuse comes back as
//! Rust errors carrying the status code and the library's message.
//! The model path defaults to $MRT_TEST_MODEL.
use std::error::Error;
use std::sync::mpsc;
use std::time::Duration;

use mrt::{Input, Model, ModelRunner, Output, Status};

const IMAGE: usize = 784;
const HIDDEN: usize = 128;
const CLASSES: usize = 10;
/// Relative tolerance between the device's f32 math and the f64 reference.
const RELATIVE_TOLERANCE: f64 = 1e-5;

type AnyResult<T> = std::result::Result<T, Box<dyn Error>>;

fn main() {
    let code = match run() {
        Ok(code) => code,
        Err(err) => {
            eprintln!("mlp-example: {err}");
            1
        }
    };
    std::process::exit(code);
}

fn run() -> AnyResult<i32> {
    let mut check_errors = false;
    let mut model_path = std::env::var("MRT_TEST_MODEL").ok();
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--check-errors" => check_errors = true,
            "-h" | "--help" => {
                println!("usage: mlp-example [--check-errors] [MODEL.popef]   (default: $MRT_TEST_MODEL)");
                return Ok(0);
            }
            _ => model_path = Some(arg),
        }
    }
    let model_path = model_path.ok_or("no model: pass MODEL.popef or set MRT_TEST_MODEL")?;

    mrt::check_version(0, 1)?;
    // libmrt's log lines arrive through a Rust closure (on any library thread).
    mrt::set_log_callback(|level, message| eprintln!("[libmrt {level:?}] {message}"))?;

    let model = Model::load(&model_path)?;
    let runner = ModelRunner::new(&model)?;
    if check_errors {
        return show_errors(model, runner);
    }

    let image = deterministic_image();
    let reference = reference_probs(&model, &image)?;

    let mut sync_probs = [0f32; CLASSES];
    runner.execute(&[Input::new("image", &image)], &mut [Output::new("probs", &mut sync_probs)])?;

    let future = runner.execute_async(&[Input::new("image", &image)])?;
    let (ready_tx, ready_rx) = mpsc::channel();
    future.on_ready(move |status| {
        let _ = ready_tx.send(status); // the receiver outlives the request
    })?;
    let outputs = future.wait()?;
    let ready_status = ready_rx.recv_timeout(Duration::from_secs(10))?;
    if ready_status.is_err() {
        return Err(format!("on_ready reported {ready_status:?} for a request that succeeded").into());
    }
    let async_probs = outputs.get::<f32>("probs")?;

    let mismatches = mismatches("sync", &sync_probs, &reference) + mismatches("async", async_probs, &reference);
    let best = argmax(&reference);
    if mismatches > 0 || argmax_f32(&sync_probs) != best || argmax_f32(async_probs) != best {
        println!(
            "mlp: MISMATCH: reference argmax {best} p={:.4}, sync {:?}, async {:?}",
            reference[best], sync_probs, async_probs
        );
        return Ok(1);
    }
    println!(
        "mlp: argmax {best} p={:.4} (sync and async match the reference, libmrt {})",
        reference[best],
        mrt::version()
    );
    Ok(0)
}

/// The same image on every run: a smooth pattern in [0, 1).
fn deterministic_image() -> Vec<f32> {
    (0..IMAGE).map(|i| ((i * 37 % 101) as f32) / 101.0).collect()
}

/// softmax(relu(image . w1 + b1) . w2 + b2), in f64, from the model's weights.
fn reference_probs(model: &Model, image: &[f32]) -> AnyResult<Vec<f64>> {
    let w1 = model.tensor_data::<f32>("w1")?;
    let b1 = model.tensor_data::<f32>("b1")?;
    let w2 = model.tensor_data::<f32>("w2")?;
    let b2 = model.tensor_data::<f32>("b2")?;
    if w1.len() != IMAGE * HIDDEN || b1.len() != HIDDEN || w2.len() != HIDDEN * CLASSES || b2.len() != CLASSES {
        return Err("the model's weights do not have the mlp's shapes".into());
    }
    let hidden: Vec<f64> = (0..HIDDEN)
        .map(|h| {
            let sum: f64 = (0..IMAGE).map(|i| image[i] as f64 * w1[i * HIDDEN + h] as f64).sum();
            (sum + b1[h] as f64).max(0.0)
        })
        .collect();
    let logits: Vec<f64> = (0..CLASSES)
        .map(|c| (0..HIDDEN).map(|h| hidden[h] * w2[h * CLASSES + c] as f64).sum::<f64>() + b2[c] as f64)
        .collect();
    let max = logits.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let exps: Vec<f64> = logits.iter().map(|l| (l - max).exp()).collect();
    let total: f64 = exps.iter().sum();
    Ok(exps.iter().map(|e| e / total).collect())
}

fn mismatches(what: &str, probs: &[f32], reference: &[f64]) -> usize {
    if probs.len() != reference.len() {
        println!("mlp: {what}: {} probabilities, expected {}", probs.len(), reference.len());
        return 1;
    }
    let mut count = 0;
    for (class, (&p, &r)) in probs.iter().zip(reference).enumerate() {
        // Relative, with a floor for probabilities near zero.
        if (p as f64 - r).abs() > RELATIVE_TOLERANCE * r.abs().max(1e-3) {
            println!("mlp: {what}: class {class}: {p} vs reference {r}");
            count += 1;
        }
    }
    count
}

fn argmax(values: &[f64]) -> usize {
    (0..values.len()).fold(0, |best, i| if values[i] > values[best] { i } else { best })
}

fn argmax_f32(values: &[f32]) -> usize {
    (0..values.len()).fold(0, |best, i| if values[i] > values[best] { i } else { best })
}

/// --check-errors: each misuse must come back as the expected MrtError.
fn show_errors(model: Model, runner: ModelRunner) -> AnyResult<i32> {
    let image = deterministic_image();
    let mut probs = [0f32; CLASSES];
    let mut failures = 0;
    let mut expect = |what: &str, result: mrt::Result<()>, code: Status, needle: &str| match result {
        Err(err) if err.status() == code && err.message().contains(needle) => println!("{what}:\n  -> {err}"),
        Err(err) => {
            println!("{what}: UNEXPECTED error {err} (wanted {code} mentioning {needle:?})");
            failures += 1;
        }
        Ok(()) => {
            println!("{what}: UNEXPECTED success (wanted {code})");
            failures += 1;
        }
    };

    expect(
        "wrong tensor name ('imagez' instead of 'image')",
        runner.execute(&[Input::new("imagez", &image)], &mut [Output::new("probs", &mut probs)]),
        Status::NotFound,
        "unknown input 'imagez'",
    );
    expect(
        "an extra tensor the model does not have",
        runner.execute(
            &[Input::new("image", &image), Input::new("label", &image)],
            &mut [Output::new("probs", &mut probs)],
        ),
        Status::NotFound,
        "'label'",
    );
    expect(
        "wrong buffer size (783 floats for image [1,784])",
        runner.execute(&[Input::new("image", &image[..IMAGE - 1])], &mut [Output::new("probs", &mut probs)]),
        Status::InvalidArgument,
        "3132 bytes",
    );
    expect(
        "wrong element type (f64 for an f32 tensor)",
        runner.execute(&[Input::new("image", &vec![0f64; IMAGE])], &mut [Output::new("probs", &mut probs)]),
        Status::InvalidArgument,
        "given as F64",
    );
    expect("unknown TensorData", model.tensor_data::<f32>("w3").map(|_| ()), Status::NotFound, "w3");
    expect(
        "a model file that does not exist",
        Model::load("/nonexistent/mlp.popef").map(|_| ()),
        Status::NotFound,
        "/nonexistent/mlp.popef",
    );

    // Use after close cannot be written: close(self) consumes the handle, so
    // `model.close(); model.tensor_data(..)` is a compile error (see the
    // compile_fail doctests). Closing a parent first is allowed by the C API,
    // and the runner keeps serving:
    model.close();
    let served = runner.execute(&[Input::new("image", &image)], &mut [Output::new("probs", &mut probs)]);
    println!(
        "use after close: ruled out at compile time; with the model closed first the runner still serves: {}",
        if served.is_ok() { "yes" } else { "NO" }
    );
    if let Err(err) = served {
        println!("  -> {err}");
        failures += 1;
    }

    // A panic in a callback stops at the C boundary instead of unwinding into libmrt.
    let before = mrt::caught_callback_panics();
    let future = runner.execute_async(&[Input::new("image", &image)])?;
    future.on_ready(|_| panic!("a deliberately panicking on_ready callback"))?;
    let outputs = future.wait();
    // on_ready may still be running on the library thread when wait returns.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while mrt::caught_callback_panics() == before && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    let caught = mrt::caught_callback_panics() - before;
    println!(
        "panicking on_ready callback: caught {caught} panic(s); the request still {}",
        if outputs.is_ok() { "succeeded" } else { "FAILED" }
    );
    if caught != 1 || outputs.is_err() {
        failures += 1;
    }
    runner.close();

    if failures > 0 {
        println!("check-errors: {failures} check(s) FAILED");
        return Ok(1);
    }
    println!("check-errors: every misuse gave the expected error");
    Ok(0)
}
