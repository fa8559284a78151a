//! Finds libmrt and tells cargo to link it.
//!
//! - MRT_LIB_DIR set: links libmrt from that directory, without pkg-config;
//!   the header is in MRT_INCLUDE_DIR (default: MRT_LIB_DIR/../include).
//! - Otherwise pkg-config (the `pkg-config` crate) reads mrt.pc: set
//!   PKG_CONFIG_PATH to <prefix>/lib/pkgconfig for a libmrt installed outside
//!   pkg-config's default search path.
//!
//! The include directory reaches the crate's tests (MRT_SYS_INCLUDE_DIR, for
//! the check that the committed bindings match the header) and, through
//! `links = "mrt"`, crates depending on this one (DEP_MRT_INCLUDE).
use std::env;
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=MRT_LIB_DIR");
    println!("cargo:rerun-if-env-changed=MRT_INCLUDE_DIR");

    let include_dir = match env::var_os("MRT_LIB_DIR") {
        Some(lib_dir) => {
            let lib_dir = PathBuf::from(lib_dir);
            println!("cargo:rustc-link-search=native={}", lib_dir.display());
            println!("cargo:rustc-link-lib=dylib=mrt");
            env::var_os("MRT_INCLUDE_DIR").map(PathBuf::from).unwrap_or_else(|| lib_dir.join("../include"))
        }
        None => {
            // The version of the header the bindings were generated from.
            let library = pkg_config::Config::new().atleast_version("0.1").probe("mrt").unwrap_or_else(|err| {
                panic!(
                    "libmrt not found by pkg-config: {err}\nSet PKG_CONFIG_PATH to the lib/pkgconfig \
                     directory of a libmrt install (it holds mrt.pc), or MRT_LIB_DIR to the directory \
                     holding libmrt.so."
                )
            });
            match library.include_paths.into_iter().find(|dir| dir.join("mrt_c.h").exists()) {
                Some(dir) => dir,
                None => panic!("pkg-config's include paths for mrt hold no mrt_c.h"),
            }
        }
    };
    println!("cargo:include={}", include_dir.display());
    println!("cargo:rustc-env=MRT_SYS_INCLUDE_DIR={}", include_dir.display());
}
