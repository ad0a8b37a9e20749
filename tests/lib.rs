//! Helpers shared by the end-to-end test binaries (`localaws`, `pipeline`) and benches.

pub mod render;
