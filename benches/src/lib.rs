//! Benchmark support code shared by the criterion benches.
