//! Asks pkg-config where libmrt is (`pkg-config --libs mrt`) and tells cargo to
//! link it. A plain std::process::Command: the crate has no dependencies, so
//! it needs no pkg-config crate. Set PKG_CONFIG_PATH to <prefix>/lib/pkgconfig
//! for a libmrt installed outside pkg-config's default search path.
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    // A different PKG_CONFIG_PATH may name a different libmrt: link again.
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_LIBDIR");

    let output = match Command::new("pkg-config").args(["--libs", "mrt"]).output() {
        Ok(output) => output,
        Err(err) => panic!("cannot run pkg-config ({err}); install it (Debian: pkg-config)"),
    };
    if !output.status.success() {
        panic!(
            "`pkg-config --libs mrt` failed: {}\nSet PKG_CONFIG_PATH to the lib/pkgconfig \
             directory of a libmrt install (it holds mrt.pc).",
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    let flags = String::from_utf8(output.stdout).expect("pkg-config printed non-UTF-8 flags");
    let mut linked = false;
    for flag in flags.split_whitespace() {
        if let Some(dir) = flag.strip_prefix("-L") {
            println!("cargo:rustc-link-search=native={dir}");
        } else if let Some(lib) = flag.strip_prefix("-l") {
            println!("cargo:rustc-link-lib={lib}");
            linked |= lib == "mrt";
        } else {
            // Anything else (-Wl,..., -pthread) goes to the linker as it is.
            println!("cargo:rustc-link-arg={flag}");
        }
    }
    if !linked {
        panic!("`pkg-config --libs mrt` printed no -lmrt: {flags}");
    }
}
