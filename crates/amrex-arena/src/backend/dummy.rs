//! Stand-ins for backends whose feature is off: the same types and constructors, each
//! constructor returning [`ErrorKind::NotCompiled`](crate::ErrorKind::NotCompiled), so
//! callers need no `cfg`.

/// Declares uninhabited arena types whose constructors fail with `NotCompiled`.
macro_rules! dummy_arenas {
    ($backend:expr; $($(#[$meta:meta])* $name:ident: $kind:expr),+ $(,)?) => {$(
        $(#[$meta])*
        ///
        /// This build has the backend's feature off: the constructors return
        /// [`ErrorKind::NotCompiled`](crate::ErrorKind::NotCompiled) and no value of
        /// this type can exist.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct $name {
            never: core::convert::Infallible,
        }

        impl $name {
            /// Always fails: the backend is not compiled in.
            ///
            /// # Errors
            /// [`ErrorKind::NotCompiled`](crate::ErrorKind::NotCompiled).
            pub fn new(ordinal: i32) -> Result<Self, $crate::ArenaError> {
                let _ = ordinal;
                Err($crate::ArenaError::not_compiled($backend))
            }
        }

        impl $crate::Arena for $name {
            fn kind(&self) -> $crate::MemoryKind {
                let _ = $kind;
                match self.never {}
            }
            fn device(&self) -> amrex_dlpack_core::Device {
                match self.never {}
            }
            fn allocate_nonzero(
                &self,
                _: core::alloc::Layout,
            ) -> Result<core::ptr::NonNull<u8>, $crate::ArenaError> {
                match self.never {}
            }
            unsafe fn deallocate_nonzero(&self, _: core::ptr::NonNull<u8>, _: core::alloc::Layout) {
                match self.never {}
            }
            unsafe fn copy_from_host(
                &self,
                _: core::ptr::NonNull<u8>,
                _: *const u8,
                _: usize,
            ) -> Result<(), $crate::ArenaError> {
                match self.never {}
            }
            unsafe fn copy_to_host(
                &self,
                _: *mut u8,
                _: core::ptr::NonNull<u8>,
                _: usize,
            ) -> Result<(), $crate::ArenaError> {
                match self.never {}
            }
            unsafe fn copy_within(
                &self,
                _: core::ptr::NonNull<u8>,
                _: core::ptr::NonNull<u8>,
                _: usize,
            ) -> Result<(), $crate::ArenaError> {
                match self.never {}
            }
            unsafe fn fill_bytes(
                &self,
                _: core::ptr::NonNull<u8>,
                _: u8,
                _: usize,
            ) -> Result<(), $crate::ArenaError> {
                match self.never {}
            }
            fn synchronize(&self) -> Result<(), $crate::ArenaError> {
                match self.never {}
            }
        }

        impl $crate::kernels::Kernels for $name {
            unsafe fn apply<T: $crate::kernels::KernelElement>(&self, _: $crate::kernels::Region, _: $crate::kernels::Unary<T>) -> Result<(), $crate::ArenaError> {
                match self.never {}
            }
            unsafe fn combine<T: $crate::kernels::KernelElement>(&self, _: $crate::kernels::Region, _: $crate::kernels::Region, _: $crate::kernels::Binary<T>) -> Result<(), $crate::ArenaError> {
                match self.never {}
            }
            unsafe fn reduce<T: $crate::kernels::KernelElement>(&self, _: $crate::kernels::Region, _: $crate::kernels::Reduce) -> Result<f64, $crate::ArenaError> {
                match self.never {}
            }
            unsafe fn dot<T: $crate::kernels::KernelElement>(&self, _: $crate::kernels::Region, _: $crate::kernels::Region) -> Result<f64, $crate::ArenaError> {
                match self.never {}
            }
            unsafe fn copy_regions<T: $crate::kernels::KernelElement>(&self, _: &[($crate::kernels::Region, $crate::kernels::Region)], _: $crate::kernels::CopyOrder) -> Result<(), $crate::ArenaError> {
                match self.never {}
            }
        }
    )+

        /// Always fails: the backend is not compiled in.
        ///
        /// # Errors
        /// [`ErrorKind::NotCompiled`](crate::ErrorKind::NotCompiled).
        pub fn device_count() -> Result<i32, $crate::ArenaError> {
            Err($crate::ArenaError::not_compiled($backend))
        }
    };
}
pub(crate) use dummy_arenas;
