//! The [`SmallMatrix`] type: storage, constructors, indexing and reductions.

use core::fmt;
use core::hash::{Hash, Hasher};
use core::marker::PhantomData;
use core::ops::{Index, IndexMut, Mul};

use num_traits::{One, Zero};

use crate::order::{ColumnMajor, Order};

/// A fixed-size `R × C` matrix stored inline, as AMReX's `SmallMatrix`.
///
/// * `O` is the storage [`Order`]: [`ColumnMajor`] (default, as AMReX) or
///   [`RowMajor`](crate::RowMajor).
/// * `START` is the first index, `0` (default) or `1` (Fortran style); any other
///   value is refused at compile time when a matrix of that type is built.
///
/// `m[(i, j)]` is the element in row `i` and column `j`, with `i` in
/// `START..START + R` and `j` in `START..START + C`; it lives at flat storage position
/// `(i - START) + (j - START) * R` (column-major) or `(j - START) + (i - START) * C`
/// (row-major), see [`as_slice`](Self::as_slice).
///
/// Most methods are plain `fn`s; operators need the element type's matching
/// operator (`T: Add` for `+`, ...). Square-only operations (`identity`, `trace`,
/// `transpose_in_place`) exist only when `R == C`, so calling them on a rectangular
/// matrix does not compile:
///
/// ```compile_fail
/// use amrex_smallmatrix::SmallMatrix;
/// let m = SmallMatrix::<f64, 2, 3>::zero();
/// let _ = m.trace();
/// ```
///
/// and matrix products check the inner dimension in the type system:
///
/// ```compile_fail
/// use amrex_smallmatrix::SmallMatrix;
/// let a = SmallMatrix::<f64, 2, 3>::zero();
/// let b = SmallMatrix::<f64, 2, 3>::zero();
/// let _ = a * b;
/// ```
///
/// and so does matrix × vector:
///
/// ```compile_fail
/// use amrex_smallmatrix::{SmallMatrix, SmallVector};
/// let a = SmallMatrix::<f64, 2, 3>::zero();
/// let x = SmallVector::<f64, 2>::zero();
/// let _ = a * x;
/// ```
///
/// A `START` other than 0 or 1 is a compile error as soon as a matrix is built:
///
/// ```compile_fail
/// use amrex_smallmatrix::{ColumnMajor, SmallMatrix};
/// let _m = SmallMatrix::<f64, 2, 2, ColumnMajor, 2>::zero();
/// ```
//
// Invariants:
// 1. `data` holds exactly `R * C` values of `T`, contiguous and without padding
//    (an array of arrays is laid out as one flat array). The nested shape
//    `[[T; R]; C]` carries no meaning of its own: for both orders the matrix is only
//    ever read through the flat slice `data.as_flattened()`.
// 2. The zero based element `(i, j)` lives at flat position `O::offset(i, j, R, C)`.
// 3. `START` is 0 or 1: every constructor and every view import evaluates
//    `Self::START_OK`, so a matrix value with another `START` cannot exist.
// 4. `#[repr(transparent)]` (the only other field is a 1-ZST `PhantomData`): the
//    matrix has the size, alignment and layout of `[[T; R]; C]`, i.e. of `R * C`
//    contiguous `T` aligned for `T`. Any properly aligned pointer to `R * C`
//    initialised `T` in storage order may therefore be read as a `&Self`.
#[repr(transparent)]
pub struct SmallMatrix<
    T,
    const R: usize,
    const C: usize,
    O: Order = ColumnMajor,
    const START: usize = 0,
> {
    data: [[T; R]; C],
    order: PhantomData<O>,
}

/// A column vector: an `N × 1` column-major [`SmallMatrix`] (AMReX's `SmallVector`).
pub type SmallVector<T, const N: usize, const START: usize = 0> =
    SmallMatrix<T, N, 1, ColumnMajor, START>;

/// A row vector: a `1 × N` column-major [`SmallMatrix`] (AMReX's `SmallRowVector`).
pub type SmallRowVector<T, const N: usize, const START: usize = 0> =
    SmallMatrix<T, 1, N, ColumnMajor, START>;

#[cold]
#[inline(never)]
#[track_caller]
fn index_out_of_range(i: usize, j: usize, r: usize, c: usize, start: usize) -> ! {
    panic!(
        "SmallMatrix index ({i}, {j}) out of range for a {r}x{c} matrix with START {start}: \
         valid rows are {start}..{}, valid columns {start}..{}",
        start + r,
        start + c
    )
}

#[cold]
#[inline(never)]
#[track_caller]
fn vector_index_out_of_range(i: usize, len: usize, start: usize) -> ! {
    panic!(
        "SmallMatrix vector index {i} out of range for length {len} with START {start}: \
         valid indices are {start}..{}",
        start + len
    )
}

impl<T, const R: usize, const C: usize, O: Order, const START: usize>
    SmallMatrix<T, R, C, O, START>
{
    /// Number of rows, `R`.
    pub const ROWS: usize = R;
    /// Number of columns, `C`.
    pub const COLS: usize = C;
    /// First valid index, `START` (0 or 1).
    pub const START_INDEX: usize = START;
    /// Number of elements, `R * C`.
    pub const LEN: usize = R * C;

    /// Wraps storage; the single place that builds a matrix value (invariant 3).
    #[inline(always)]
    const fn from_storage(data: [[T; R]; C]) -> Self {
        const {
            assert!(
                START == 0 || START == 1,
                "SmallMatrix: START must be 0 or 1"
            );
        }
        Self {
            data,
            order: PhantomData,
        }
    }

    /// Compile-time check of `START`, for code paths that produce a `&Self` without
    /// building a value (view imports).
    #[inline(always)]
    pub(crate) const fn assert_start() {
        const {
            assert!(
                START == 0 || START == 1,
                "SmallMatrix: START must be 0 or 1"
            );
        }
    }

    /// Builds the matrix whose element `(i, j)` is `f(i, j)`, with `i` and `j` counted
    /// from `START` (so `m[(i, j)] == f(i, j)`).
    ///
    /// `f` is called once per element, in storage order.
    ///
    /// ```
    /// use amrex_smallmatrix::{RowMajor, SmallMatrix};
    /// let m = SmallMatrix::<i32, 2, 3, RowMajor, 1>::from_fn(|i, j| (10 * i + j) as i32);
    /// assert_eq!(m[(2, 3)], 23);
    /// assert_eq!(m.as_slice(), &[11, 12, 13, 21, 22, 23]);
    /// ```
    #[inline]
    pub fn from_fn(mut f: impl FnMut(usize, usize) -> T) -> Self {
        Self::from_storage(core::array::from_fn(|outer| {
            core::array::from_fn(|inner| {
                let (i, j) = O::coords(inner + outer * R, R, C);
                f(i + START, j + START)
            })
        }))
    }

    /// Builds the matrix from its rows: `rows[i][j]` becomes element
    /// `(i + START, j + START)`, whatever the storage order.
    ///
    /// ```
    /// use amrex_smallmatrix::SmallMatrix;
    /// let m = SmallMatrix::<f64, 2, 3>::from_rows([[1., 2., 3.], [4., 5., 6.]]);
    /// assert_eq!(m[(0, 2)], 3.0);
    /// assert_eq!(m.as_slice(), &[1., 4., 2., 5., 3., 6.]); // column-major storage
    /// ```
    #[inline]
    pub fn from_rows(rows: [[T; C]; R]) -> Self
    where
        T: Clone,
    {
        Self::from_fn(|i, j| rows[i - START][j - START].clone())
    }

    /// Builds the matrix from its columns: `cols[j][i]` becomes element
    /// `(i + START, j + START)`, whatever the storage order.
    ///
    /// ```
    /// use amrex_smallmatrix::SmallMatrix;
    /// let m = SmallMatrix::<f64, 2, 3>::from_cols([[1., 4.], [2., 5.], [3., 6.]]);
    /// assert_eq!(m, SmallMatrix::from_rows([[1., 2., 3.], [4., 5., 6.]]));
    /// ```
    #[inline]
    pub fn from_cols(cols: [[T; R]; C]) -> Self
    where
        T: Clone,
    {
        if O::ROW_MAJOR {
            Self::from_fn(|i, j| cols[j - START][i - START].clone())
        } else {
            // Column-major storage is exactly `[[T; R]; C]` indexed [j][i] (invariants 1-2).
            Self::from_storage(cols)
        }
    }

    /// Builds the matrix from its elements in storage order (see
    /// [`as_slice`](Self::as_slice)); `None` if `flat.len() != R * C`.
    pub fn from_slice(flat: &[T]) -> Option<Self>
    where
        T: Clone,
    {
        if flat.len() != R * C {
            return None;
        }
        let mut it = flat.iter();
        Some(Self::from_storage(core::array::from_fn(|_| {
            core::array::from_fn(|_| match it.next() {
                Some(v) => v.clone(),
                None => unreachable!("length was checked"),
            })
        })))
    }

    /// The matrix with every element zero.
    #[inline]
    pub fn zero() -> Self
    where
        T: Zero,
    {
        Self::from_storage(core::array::from_fn(|_| {
            core::array::from_fn(|_| T::zero())
        }))
    }

    /// The matrix with every element equal to `value`.
    #[inline]
    pub fn splat(value: T) -> Self
    where
        T: Clone,
    {
        Self::from_storage(core::array::from_fn(|_| {
            core::array::from_fn(|_| value.clone())
        }))
    }

    /// `(R, C)`.
    #[inline]
    pub const fn shape(&self) -> (usize, usize) {
        (R, C)
    }

    /// Zero based flat storage position of `(i, j)` (indices counted from `START`),
    /// or `None` when out of range.
    #[inline(always)]
    pub const fn flat_index(i: usize, j: usize) -> Option<usize> {
        // An index below START wraps to a huge value and fails the comparison.
        let i0 = i.wrapping_sub(START);
        let j0 = j.wrapping_sub(START);
        if i0 < R && j0 < C {
            Some(if O::ROW_MAJOR {
                j0 + i0 * C
            } else {
                i0 + j0 * R
            })
        } else {
            None
        }
    }

    /// The element `(i, j)` (indices counted from `START`), or `None` when out of range.
    #[inline]
    pub fn get(&self, i: usize, j: usize) -> Option<&T> {
        let k = Self::flat_index(i, j)?;
        self.as_slice().get(k)
    }

    /// Mutable access to element `(i, j)`, or `None` when out of range.
    #[inline]
    pub fn get_mut(&mut self, i: usize, j: usize) -> Option<&mut T> {
        let k = Self::flat_index(i, j)?;
        self.as_mut_slice().get_mut(k)
    }

    /// The elements in storage order: element `(i, j)` is at
    /// `(i - START) + (j - START) * R` for column-major storage and
    /// `(j - START) + (i - START) * C` for row-major storage.
    #[inline(always)]
    pub const fn as_slice(&self) -> &[T] {
        self.data.as_flattened()
    }

    /// The elements in storage order, mutably.
    #[inline(always)]
    pub const fn as_mut_slice(&mut self) -> &mut [T] {
        self.data.as_flattened_mut()
    }

    /// Pointer to the first element (storage order, `R * C` contiguous elements).
    #[inline(always)]
    pub const fn as_ptr(&self) -> *const T {
        self.as_slice().as_ptr()
    }

    /// Mutable pointer to the first element.
    #[inline(always)]
    pub const fn as_mut_ptr(&mut self) -> *mut T {
        self.as_mut_slice().as_mut_ptr()
    }

    /// Iterates the elements in storage order.
    #[inline]
    pub fn iter(&self) -> core::slice::Iter<'_, T> {
        self.as_slice().iter()
    }

    /// Iterates the elements mutably in storage order.
    #[inline]
    pub fn iter_mut(&mut self) -> core::slice::IterMut<'_, T> {
        self.as_mut_slice().iter_mut()
    }

    /// Applies `f` to every element (in storage order), keeping shape, order and START.
    #[inline]
    pub fn map<U>(self, mut f: impl FnMut(T) -> U) -> SmallMatrix<U, R, C, O, START> {
        SmallMatrix::from_storage(self.data.map(|col| col.map(&mut f)))
    }

    /// Sets every element to `value` (AMReX `setVal`).
    #[inline]
    pub fn set_val(&mut self, value: T)
    where
        T: Clone,
    {
        self.as_mut_slice().fill(value);
    }

    /// The `C × R` transpose, in the same storage order.
    #[inline]
    pub fn transpose(&self) -> SmallMatrix<T, C, R, O, START>
    where
        T: Clone,
    {
        SmallMatrix::from_fn(|i, j| self[(j, i)].clone())
    }

    /// The same matrix stored in order `O2` (same elements at the same `(i, j)`).
    #[inline]
    pub fn to_order<O2: Order>(&self) -> SmallMatrix<T, R, C, O2, START>
    where
        T: Clone,
    {
        SmallMatrix::from_fn(|i, j| self[(i, j)].clone())
    }

    /// The same matrix with indices counted from `S2` instead of `START`.
    #[inline]
    pub fn with_start<const S2: usize>(self) -> SmallMatrix<T, R, C, O, S2> {
        SmallMatrix::from_storage(self.data)
    }

    /// Sum of all elements (`0` for an empty matrix).
    #[inline]
    pub fn sum(&self) -> T
    where
        T: Copy + Zero,
    {
        self.iter().fold(T::zero(), |acc, &x| acc + x)
    }

    /// Product of all elements (`1` for an empty matrix).
    #[inline]
    pub fn product(&self) -> T
    where
        T: Copy + One,
    {
        self.iter().fold(T::one(), |acc, &x| acc * x)
    }

    /// Sum of the elementwise products with `other` (AMReX `dot`; the Frobenius inner
    /// product for real matrices).
    #[inline]
    pub fn dot(&self, other: &Self) -> T
    where
        T: Copy + Zero + Mul<Output = T>,
    {
        // Same type, so same order: flat positions correspond.
        self.iter()
            .zip(other.iter())
            .fold(T::zero(), |acc, (&a, &b)| acc + a * b)
    }

    /// Zero based element access for internal loops (the caller checked the range).
    #[inline(always)]
    pub(crate) fn at(&self, i0: usize, j0: usize) -> &T {
        debug_assert!(i0 < R && j0 < C, "internal index out of range");
        &self.as_slice()[O::offset(i0, j0, R, C)]
    }
}

/// Square-only operations.
impl<T, const N: usize, O: Order, const START: usize> SmallMatrix<T, N, N, O, START> {
    /// The identity matrix.
    #[inline]
    pub fn identity() -> Self
    where
        T: Zero + One,
    {
        Self::from_fn(|i, j| if i == j { T::one() } else { T::zero() })
    }

    /// Sum of the diagonal.
    #[inline]
    pub fn trace(&self) -> T
    where
        T: Copy + Zero,
    {
        (0..N).fold(T::zero(), |acc, k| acc + *self.at(k, k))
    }

    /// Transposes in place (swaps `(i, j)` and `(j, i)`).
    #[inline]
    pub fn transpose_in_place(&mut self) {
        let s = self.as_mut_slice();
        for i in 0..N {
            for j in i + 1..N {
                s.swap(O::offset(i, j, N, N), O::offset(j, i, N, N));
            }
        }
    }
}

impl<T, const R: usize, const C: usize, O: Order, const START: usize> Index<(usize, usize)>
    for SmallMatrix<T, R, C, O, START>
{
    type Output = T;

    /// `m[(i, j)]`, indices counted from `START`.
    ///
    /// # Panics
    /// If `i` is not in `START..START + R` or `j` not in `START..START + C`; the
    /// message names the index and the valid ranges.
    #[inline]
    #[track_caller]
    fn index(&self, (i, j): (usize, usize)) -> &T {
        match Self::flat_index(i, j) {
            Some(k) => &self.as_slice()[k],
            None => index_out_of_range(i, j, R, C, START),
        }
    }
}

impl<T, const R: usize, const C: usize, O: Order, const START: usize> IndexMut<(usize, usize)>
    for SmallMatrix<T, R, C, O, START>
{
    /// `m[(i, j)] = v`, indices counted from `START`.
    ///
    /// # Panics
    /// As [`Index`].
    #[inline]
    #[track_caller]
    fn index_mut(&mut self, (i, j): (usize, usize)) -> &mut T {
        match Self::flat_index(i, j) {
            Some(k) => &mut self.as_mut_slice()[k],
            None => index_out_of_range(i, j, R, C, START),
        }
    }
}

/// Single-index access for vectors (`R == 1` or `C == 1`): `v[i]` with `i` counted from
/// `START`. Using it on a matrix with `R > 1` and `C > 1` is a compile error.
///
/// ```
/// use amrex_smallmatrix::{SmallRowVector, SmallVector};
/// let v = SmallVector::<f64, 3, 1>::from_fn(|i, _| i as f64);
/// assert_eq!(v[3], 3.0);
/// let r = SmallRowVector::<f64, 3>::from_fn(|_, j| j as f64);
/// assert_eq!(r[2], 2.0);
/// ```
///
/// ```compile_fail
/// use amrex_smallmatrix::SmallMatrix;
/// let m = SmallMatrix::<f64, 2, 2>::zero();
/// let _ = m[1];
/// ```
impl<T, const R: usize, const C: usize, O: Order, const START: usize> Index<usize>
    for SmallMatrix<T, R, C, O, START>
{
    type Output = T;

    #[inline]
    #[track_caller]
    fn index(&self, i: usize) -> &T {
        const {
            assert!(
                R == 1 || C == 1,
                "single-index access needs a vector (R == 1 or C == 1)"
            );
        }
        // For an N x 1 or 1 x N matrix the flat position is the index in either order.
        match self.as_slice().get(i.wrapping_sub(START)) {
            Some(v) => v,
            None => vector_index_out_of_range(i, R * C, START),
        }
    }
}

impl<T, const R: usize, const C: usize, O: Order, const START: usize> IndexMut<usize>
    for SmallMatrix<T, R, C, O, START>
{
    #[inline]
    #[track_caller]
    fn index_mut(&mut self, i: usize) -> &mut T {
        const {
            assert!(
                R == 1 || C == 1,
                "single-index access needs a vector (R == 1 or C == 1)"
            );
        }
        match self.as_mut_slice().get_mut(i.wrapping_sub(START)) {
            Some(v) => v,
            None => vector_index_out_of_range(i, R * C, START),
        }
    }
}

impl<T: Clone, const R: usize, const C: usize, O: Order, const START: usize> Clone
    for SmallMatrix<T, R, C, O, START>
{
    #[inline]
    fn clone(&self) -> Self {
        Self::from_storage(self.data.clone())
    }
}

impl<T: Copy, const R: usize, const C: usize, O: Order, const START: usize> Copy
    for SmallMatrix<T, R, C, O, START>
{
}

impl<T: PartialEq, const R: usize, const C: usize, O: Order, const START: usize> PartialEq
    for SmallMatrix<T, R, C, O, START>
{
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: Eq, const R: usize, const C: usize, O: Order, const START: usize> Eq
    for SmallMatrix<T, R, C, O, START>
{
}

impl<T: Hash, const R: usize, const C: usize, O: Order, const START: usize> Hash
    for SmallMatrix<T, R, C, O, START>
{
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_slice().hash(state);
    }
}

impl<T: Default, const R: usize, const C: usize, O: Order, const START: usize> Default
    for SmallMatrix<T, R, C, O, START>
{
    #[inline]
    fn default() -> Self {
        Self::from_storage(core::array::from_fn(|_| {
            core::array::from_fn(|_| T::default())
        }))
    }
}

/// One row, for `Debug`.
struct DebugRow<'a, T, const R: usize, const C: usize, O: Order, const START: usize> {
    m: &'a SmallMatrix<T, R, C, O, START>,
    i0: usize,
}

impl<T: fmt::Debug, const R: usize, const C: usize, O: Order, const START: usize> fmt::Debug
    for DebugRow<'_, T, R, C, O, START>
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries((0..C).map(|j0| self.m.at(self.i0, j0)))
            .finish()
    }
}

/// Prints the type's shape, order and `START`, then the rows:
/// `SmallMatrix<2x2, ColumnMajor, START 0> [[1, 2], [3, 4]]`.
impl<T: fmt::Debug, const R: usize, const C: usize, O: Order, const START: usize> fmt::Debug
    for SmallMatrix<T, R, C, O, START>
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SmallMatrix<{R}x{C}, {}, START {START}> ", O::NAME)?;
        f.debug_list()
            .entries((0..R).map(|i0| DebugRow { m: self, i0 }))
            .finish()
    }
}

impl<T, const R: usize, const C: usize, O: Order, const START: usize> AsRef<[T]>
    for SmallMatrix<T, R, C, O, START>
{
    #[inline]
    fn as_ref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T, const R: usize, const C: usize, O: Order, const START: usize> AsMut<[T]>
    for SmallMatrix<T, R, C, O, START>
{
    #[inline]
    fn as_mut(&mut self) -> &mut [T] {
        self.as_mut_slice()
    }
}

impl<'a, T, const R: usize, const C: usize, O: Order, const START: usize> IntoIterator
    for &'a SmallMatrix<T, R, C, O, START>
{
    type Item = &'a T;
    type IntoIter = core::slice::Iter<'a, T>;

    #[inline]
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'a, T, const R: usize, const C: usize, O: Order, const START: usize> IntoIterator
    for &'a mut SmallMatrix<T, R, C, O, START>
{
    type Item = &'a mut T;
    type IntoIter = core::slice::IterMut<'a, T>;

    #[inline]
    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}
