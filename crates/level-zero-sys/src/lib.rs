//! Level Zero loader bindings: work in progress.
