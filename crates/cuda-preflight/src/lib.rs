//! Nothing at run time: the build script is the point (see `build.rs`).
