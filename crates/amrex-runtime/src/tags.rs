//! The one registry of message tags: every point-to-point exchange of the workspace uses
//! a [`Tag`] named here, and user code takes its own from [`Tag::user`], a range no
//! crate of the workspace uses.
//!
//! Messages of different operations never match each other anyway, because each
//! exchange waits for its own messages before the next starts and every communicator
//! works on its own duplicate of MPI's. The tags make a wrong pairing (two ranks whose
//! plans belong to different operations) visible as a size mismatch or a hang that the
//! agreement check catches first, and they name the operation in
//! [`CommError::SizeMismatch`](crate::CommError::SizeMismatch).

use core::fmt;

/// A message tag (MPI's `int tag`), at most [`MAX_TAG`](crate::MAX_TAG).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Tag(u16);

impl Tag {
    /// `FabArray::fill_boundary` and its split-phase form.
    pub const FILL_BOUNDARY: Tag = Tag(101);
    /// `FabArray::parallel_copy` (and `sum_boundary`, which runs through it).
    pub const PARALLEL_COPY: Tag = Tag(102);
    /// The particle counts of `ParticleContainer::redistribute`.
    pub const PARTICLE_COUNTS: Tag = Tag(2501);
    /// The particle data of `ParticleContainer::redistribute`.
    pub const PARTICLE_DATA: Tag = Tag(2502);

    /// Every tag the workspace's crates use, for the test that they are distinct.
    pub const WORKSPACE: [Tag; 4] = [
        Tag::FILL_BOUNDARY,
        Tag::PARALLEL_COPY,
        Tag::PARTICLE_COUNTS,
        Tag::PARTICLE_DATA,
    ];

    /// The first tag of the user range: `Tag::user(0)`.
    pub const USER_BASE: u16 = 16384;

    /// The `n`-th tag of the range left to user code (`USER_BASE + n`), or `None` past
    /// [`MAX_TAG`](crate::MAX_TAG).
    ///
    /// ```
    /// use amrex_runtime::Tag;
    /// assert_eq!(Tag::user(3).unwrap().get(), Tag::USER_BASE + 3);
    /// assert!(Tag::user(20000).is_none());
    /// ```
    #[must_use]
    pub const fn user(n: u16) -> Option<Tag> {
        match Tag::USER_BASE.checked_add(n) {
            Some(t) if t <= crate::MAX_TAG => Some(Tag(t)),
            _ => None,
        }
    }

    /// The tag's number.
    #[must_use]
    pub const fn get(self) -> u16 {
        self.0
    }
}

impl fmt::Display for Tag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workspace_tags_are_distinct_and_below_the_user_range() {
        for (i, a) in Tag::WORKSPACE.iter().enumerate() {
            assert!(a.get() < Tag::USER_BASE, "{a}");
            for b in &Tag::WORKSPACE[i + 1..] {
                assert_ne!(a, b);
            }
        }
        assert_eq!(Tag::user(0), Some(Tag(Tag::USER_BASE)));
        assert_eq!(
            Tag::user(crate::MAX_TAG - Tag::USER_BASE).map(Tag::get),
            Some(crate::MAX_TAG)
        );
        assert_eq!(Tag::user(crate::MAX_TAG - Tag::USER_BASE + 1), None);
        assert_eq!(Tag::user(u16::MAX), None);
    }
}
