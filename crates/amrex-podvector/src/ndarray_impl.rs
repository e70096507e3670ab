//! `ndarray` views of host-accessible vectors (feature `ndarray`).

use crate::PodVector;
use amrex_arena::HostAccessible;
use bytemuck::AnyBitPattern;
use ndarray::{ArrayView1, ArrayViewMut1};

impl<T: AnyBitPattern, A: HostAccessible> PodVector<T, A> {
    /// The elements as an `ndarray` view, without copying.
    pub fn view(&self) -> ArrayView1<'_, T> {
        ArrayView1::from(self.as_slice())
    }

    /// The elements as a mutable `ndarray` view, without copying.
    pub fn view_mut(&mut self) -> ArrayViewMut1<'_, T> {
        ArrayViewMut1::from(self.as_mut_slice())
    }
}
