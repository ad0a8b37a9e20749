//! The leaf data model every other module of the core builds on: what a document's fields are
//! called and hold, what a run carries between steps, and pointers to stored objects. It depends
//! on nothing in the crate but `ids` and `error`, which is what keeps the core free of module
//! cycles.

pub mod embedded;
pub mod fields;
pub mod run;
pub mod step;
