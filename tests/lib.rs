//! Shared helpers live in the test binaries; this library is intentionally empty.
