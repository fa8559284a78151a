//! Sessions and predicates: the mlp run by a session whose streams are bound
//! to Rust closures gives the runner's results; stop from another thread,
//! reload, and predicates deciding which anchors get user callbacks.
mod common;

use std::sync::{Arc, Mutex};

use common::{device_wait, image, model, runner, CLASSES};
use mrt::*;

fn handle_of(model: &Model, name: &str) -> String {
    model.anchor_by_name(name).unwrap().handle
}

fn runner_probs(model: &Model, image: &[f32]) -> Vec<f32> {
    let mut probs = [0f32; CLASSES];
    runner(model).execute(&[Input::new("image", image)], &mut [Output::new("probs", &mut probs)]).unwrap();
    probs.to_vec()
}

fn as_f32(bytes: &[u8]) -> Vec<f32> {
    bytes.chunks_exact(4).map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]])).collect()
}

/// A deferred session of the mlp on a device of the system, its image fed
/// from `image` and its probs collected into the returned vector.
fn bound_session(model: &Model, image: Vec<f32>) -> (Session, Arc<Mutex<Vec<f32>>>) {
    let session = Session::new(model, &SessionConfig::default()).unwrap();
    let image_handle = handle_of(model, "image");
    session
        .set_callback(
            &image_handle,
            Some(Box::new(move |buffer: &mut [u8]| {
                let bytes: Vec<u8> = image.iter().flat_map(|v| v.to_ne_bytes()).collect();
                buffer.copy_from_slice(&bytes);
            })),
        )
        .unwrap();
    let probs = Arc::new(Mutex::new(Vec::new()));
    let sink = probs.clone();
    let mut asked = Vec::new();
    session
        .set_user_output_handler(
            |anchor| {
                asked.push(anchor.name.clone());
                let sink = sink.clone();
                Some(Box::new(move |buffer: &mut [u8]| *sink.lock().unwrap() = as_f32(buffer)) as AnchorCallback)
            },
            None,
            false,
        )
        .unwrap();
    assert_eq!(asked, vec!["probs".to_string()]);
    let device = DeviceManager::new().unwrap().device(DeviceRequest::ForModel(model), &[], device_wait()).unwrap();
    session.bind_to_device(&device).unwrap();
    (session, probs)
}

#[test]
fn a_session_with_rust_callbacks_computes_what_the_runner_does() {
    let model = model();
    let image = image();
    let expected = runner_probs(&model, &image);
    let (session, probs) = bound_session(&model, image);
    session.run_main_programs().unwrap();
    assert_eq!(*probs.lock().unwrap(), expected);
    assert_eq!(session.model().unwrap().info().unwrap(), model.info().unwrap());
    let main = model.program_flow(ProgramPhase::Main).unwrap();
    assert!(session.anchors_not_connected(&main).unwrap().is_empty());
    session.error_if_anchors_not_connected(&main).unwrap();
}

#[test]
fn unbound_anchors_are_reported_and_unknown_handles_refused() {
    let model = model();
    let session = Session::new(&model, &SessionConfig::default()).unwrap();
    let user_inputs: Vec<String> =
        session.anchors(AnchorSet::UserInputs).unwrap().into_iter().map(|a| a.name).collect();
    assert_eq!(user_inputs, vec!["image"]);
    let user_outputs: Vec<String> =
        session.anchors(AnchorSet::UserOutputs).unwrap().into_iter().map(|a| a.name).collect();
    assert_eq!(user_outputs, vec!["probs"]);
    assert_eq!(session.anchors(AnchorSet::Inputs).unwrap().len(), 5);

    let main = model.program_flow(ProgramPhase::Main).unwrap();
    let unbound: Vec<String> =
        session.anchors_not_connected(&main).unwrap().into_iter().map(|(_, anchor)| anchor.name).collect();
    assert!(unbound.contains(&"image".to_string()) && unbound.contains(&"probs".to_string()), "{unbound:?}");
    let err = session.error_if_anchors_not_connected(&main).expect_err("image and probs are unbound");
    assert_eq!(err.status(), Status::FailedPrecondition);
    assert!(err.message().contains(&handle_of(&model, "image")), "{err}");

    let err = session.set_callback("no_such_handle", None).expect_err("an unknown handle must fail");
    assert_eq!(err.status(), Status::NotFound);
    assert!(err.message().contains("no_such_handle"), "{err}");
    let err = session.run_main_programs().expect_err("running unbound must fail");
    assert_eq!(err.status(), Status::FailedPrecondition);
}

#[test]
fn stop_from_another_thread_cancels_until_reload_and_panics_are_caught() {
    let model = model();
    let image = image();
    let expected = runner_probs(&model, &image);
    let (session, probs) = bound_session(&model, image);
    session.run_main_programs().unwrap();
    let stopper = session.stopper();
    std::thread::spawn(move || stopper.stop().unwrap()).join().unwrap();
    assert!(session.is_stopped().unwrap());
    let err = session.run_main_programs().expect_err("a stopped session must not run");
    assert_eq!(err.status(), Status::FailedPrecondition);
    assert!(err.message().contains("reload"), "{err}");
    session.reload().unwrap();
    assert!(!session.is_stopped().unwrap());
    probs.lock().unwrap().clear();
    session.run_main_programs().unwrap();
    assert_eq!(*probs.lock().unwrap(), expected);

    // A panicking callback stops at the C boundary; the run goes on.
    let before = caught_callback_panics();
    session
        .set_callback(&handle_of(&model, "probs"), Some(Box::new(|_: &mut [u8]| panic!("deliberate panic"))))
        .unwrap();
    session.run_main_programs().unwrap();
    assert!(caught_callback_panics() > before, "the panic was not caught");
}

#[test]
fn predicates_give_the_policies_they_are_built_with() {
    let model = model();
    let image = handle_of(&model, "image");
    let w1 = handle_of(&model, "w1");
    let bind = Policy::Callback(CallbackPolicy::BindUserCallback);
    let skip = Policy::Callback(CallbackPolicy::Skip);

    let main = AnchorPredicate::prebuilt(Prebuilt::ProgramFlowMain(&model), bind, skip).unwrap();
    assert_eq!(main.evaluate(&model, &image).unwrap(), bind);
    let not_assigned = AnchorPredicate::prebuilt(Prebuilt::ProgramNotAssigned, bind, skip).unwrap();
    assert_eq!(not_assigned.evaluate(&model, &image).unwrap(), skip);

    let by_name = AnchorPredicate::from_fn(skip, |anchor| {
        if anchor.name == "w1" {
            Policy::Callback(CallbackPolicy::BindEmptyCallback)
        } else {
            Policy::Callback(CallbackPolicy::Skip)
        }
    })
    .unwrap();
    assert_eq!(by_name.evaluate(&model, &w1).unwrap(), Policy::Callback(CallbackPolicy::BindEmptyCallback));
    assert_eq!(by_name.evaluate(&model, &image).unwrap(), skip);
    let either = AnchorPredicate::any(&[&main, &by_name], bind, skip).unwrap();
    assert_eq!(either.evaluate(&model, &image).unwrap(), bind);
    let both = AnchorPredicate::all(&[&main, &not_assigned], bind, skip).unwrap();
    assert_eq!(both.evaluate(&model, &image).unwrap(), skip);

    let listed = AnchorPredicate::anchor_policies(&[(&w1, bind)], skip).unwrap();
    assert_eq!(listed.evaluate(&model, &w1).unwrap(), bind);
    let main_programs = model.program_flow(ProgramPhase::Main).unwrap();
    let grouped = AnchorPredicate::program_policies(&[(&main_programs[..], bind)], skip).unwrap();
    assert_eq!(grouped.evaluate(&model, &image).unwrap(), bind);

    // A user predicate answering with the wrong kind, or panicking, fails
    // the call that uses it instead of reaching C with garbage.
    let wrong_kind = AnchorPredicate::from_fn(skip, |_| Policy::DataUsage(DataUsagePolicy::UseUserData)).unwrap();
    assert_eq!(wrong_kind.evaluate(&model, &image).unwrap_err().status(), Status::InvalidArgument);
    let panicking = AnchorPredicate::from_fn(skip, |_| panic!("deliberate panic in a predicate")).unwrap();
    assert_eq!(panicking.evaluate(&model, &image).unwrap_err().status(), Status::InvalidArgument);

    let err = AnchorPredicate::prebuilt(Prebuilt::NonScalarType, bind, Policy::DataUsage(DataUsagePolicy::UseUserData))
        .expect_err("mixed kinds must fail");
    assert_eq!(err.status(), Status::InvalidArgument);
    let err = main.evaluate(&model, "no_such_handle").expect_err("an unknown handle must fail");
    assert_eq!(err.status(), Status::NotFound);
}

#[test]
fn a_data_usage_predicate_makes_weights_user_inputs() {
    let model = model();
    let w1 = handle_of(&model, "w1");
    let user = AnchorPredicate::anchor_policies(
        &[(&w1, Policy::DataUsage(DataUsagePolicy::UseUserData))],
        Policy::DataUsage(DataUsagePolicy::UsePopefDataIfAny),
    )
    .unwrap();
    let config = SessionConfig { tensor_data_predicate: Some(&user), ..SessionConfig::default() };
    let session = Session::new(&model, &config).unwrap();
    drop(user); // the session keeps its own reference
    let mut names: Vec<String> = session.anchors(AnchorSet::UserInputs).unwrap().into_iter().map(|a| a.name).collect();
    names.sort();
    assert_eq!(names, vec!["image", "w1"]);
}

#[test]
fn an_immediate_session_runs_programs_by_index_and_recovers_from_device_errors() {
    let model = model();
    let image = image();
    let expected = runner_probs(&model, &image);
    let path = std::env::var("MRT_TEST_MODEL").unwrap();
    let config = SessionConfig { launch: Launch::Immediate, device_wait: device_wait(), ..SessionConfig::default() };
    let session = Session::from_files(&[&path], &config).unwrap();
    let feed = image.clone();
    session
        .set_callback(
            &handle_of(&model, "image"),
            Some(Box::new(move |buffer: &mut [u8]| {
                buffer.copy_from_slice(&feed.iter().flat_map(|v| v.to_ne_bytes()).collect::<Vec<u8>>())
            })),
        )
        .unwrap();
    let probs = Arc::new(Mutex::new(Vec::new()));
    let sink = probs.clone();
    session
        .set_callback(
            &handle_of(&model, "probs"),
            Some(Box::new(move |buffer: &mut [u8]| *sink.lock().unwrap() = as_f32(buffer))),
        )
        .unwrap();
    session.run_load_programs().unwrap();
    session.run_programs(&model.program_flow(ProgramPhase::Main).unwrap()).unwrap();
    assert_eq!(*probs.lock().unwrap(), expected);
    session.run_save_programs().unwrap();

    // Remote buffers only: an anchor with a stream is refused, naming it.
    let err = session.set_remote_buffer_data(&handle_of(&model, "image"), &[0u8; 3136]).expect_err("a stream anchor");
    assert_eq!(err.status(), Status::InvalidArgument);

    // A simulated fault at the first compute step: the run fails with the
    // recovery action; reload resets the device and the session runs again.
    let executable = model.executable().unwrap();
    let step = (0..executable.info().unwrap().num_steps)
        .find(|&i| executable.step(i).unwrap().kind == "Execute")
        .expect("the mlp has a compute step") as u32;
    session.insert_simulated_error(SimulatedError::TileException, step, 0).unwrap();
    let err = session.insert_simulated_error(SimulatedError::TileException, step, 0).expect_err("the same place twice");
    assert_eq!(err.status(), Status::InvalidArgument);
    let err = session.run_main_programs().expect_err("the fault must fire");
    assert_eq!(err.status(), Status::DeviceError);
    assert_eq!(err.recovery_action(), RecoveryAction::IpuReset);
    session.clear_simulated_errors().unwrap();
    let err = session.erase_simulated_error(step, 0).expect_err("nothing left to erase");
    assert_eq!(err.status(), Status::NotFound);
    session.reload().unwrap();
    probs.lock().unwrap().clear();
    session.run_main_programs().unwrap();
    assert_eq!(*probs.lock().unwrap(), expected);
    session.unload_from_device().unwrap();
    let err = session.unload_from_device().expect_err("not bound any more");
    assert_eq!(err.status(), Status::FailedPrecondition);
}
