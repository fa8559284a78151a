//! The committed bindings are what bindgen makes of the header this crate
//! links against (found by build.rs): after a header change, this fails
//! until src/bindings.rs is generated again (generate-bindings.sh).
use std::path::Path;
use std::process::Command;

/// The bindings with formatting removed: whitespace and the trailing commas
/// rustfmt adds or drops, so that bindgen with or without rustfmt (or another
/// rustfmt version) compares equal when the declarations are the same.
fn declarations(source: &str) -> String {
    let compact: String = source.chars().filter(|c| !c.is_whitespace()).collect();
    compact.replace(",)", ")").replace(",}", "}").replace(",]", "]")
}

#[test]
fn committed_bindings_match_the_installed_header() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let header = Path::new(env!("MRT_SYS_INCLUDE_DIR")).join("mrt_c.h");
    let generated = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mrt_sys_bindings.rs");
    let status = Command::new(crate_dir.join("generate-bindings.sh"))
        .arg(&header)
        .arg(&generated)
        .status()
        .expect("running generate-bindings.sh");
    assert!(status.success(), "generate-bindings.sh {} failed", header.display());
    let committed = std::fs::read_to_string(crate_dir.join("src/bindings.rs")).unwrap();
    let fresh = std::fs::read_to_string(&generated).unwrap();
    assert!(
        declarations(&committed) == declarations(&fresh),
        "src/bindings.rs is out of date with {}: run\n  {}/generate-bindings.sh {} {}/src/bindings.rs\n\
         (diff against {})",
        header.display(),
        crate_dir.display(),
        header.display(),
        crate_dir.display(),
        generated.display()
    );
}

#[test]
fn the_linked_library_serves_the_bindings_version() {
    let status =
        unsafe { mrt_sys::mrt_check_version(mrt_sys::MRT_VERSION_MAJOR as i32, mrt_sys::MRT_VERSION_MINOR as i32) };
    assert_eq!(status, mrt_sys::MRT_OK as i32);
    let (mut major, mut minor, mut patch) = (-1, -1, -1);
    unsafe { mrt_sys::mrt_version(&mut major, &mut minor, &mut patch) };
    assert_eq!(major, mrt_sys::MRT_VERSION_MAJOR as i32);
    assert!(minor >= mrt_sys::MRT_VERSION_MINOR as i32);
    assert!(patch >= 0);
}

#[test]
fn a_failed_call_reports_its_status_and_message() {
    let mut out = std::ptr::null_mut();
    let status = unsafe { mrt_sys::mrt_model_load(std::ptr::null(), 0, &mut out) };
    assert_eq!(status, mrt_sys::MRT_INVALID_ARGUMENT as i32);
    assert!(out.is_null());
    let message = unsafe { std::ffi::CStr::from_ptr(mrt_sys::mrt_last_error_message()) };
    assert!(!message.to_bytes().is_empty());
}
