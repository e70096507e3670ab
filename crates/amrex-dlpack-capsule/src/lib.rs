//! DLPack PyCapsule glue: work in progress.
#![no_std]
