//! Python module: work in progress.
