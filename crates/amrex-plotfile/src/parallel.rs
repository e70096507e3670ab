//! The collective steps of writing and reading on many ranks: agreeing on success,
//! reading small files once and broadcasting them, NFiles file groups, and the per-box
//! records (file, offset, minima, maxima) that rank 0 gathers into `Cell_H`.
//!
//! Every function here that takes an [`Agreed`] operation is **collective**: each rank
//! calls it, in the same order, whatever happened on it before. A failure on one rank is
//! kept in a `Result` until the next [`agree`], which turns it into an error on every
//! rank, so no rank leaves a collective sequence that the others are still in.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicUsize, Ordering};
use std::path::Path;

use amrex_runtime::Agreed;

use crate::error::{PlotfileError, invalid};
use crate::fs::read_text;

/// AMReX's default `VisMF::nOutFiles`: at most this many data files per MultiFab.
pub const DEFAULT_NFILES: usize = 256;

static NFILES: AtomicUsize = AtomicUsize::new(DEFAULT_NFILES);

/// AMReX's `VisMF::SetNOutFiles`: the most data files (`Cell_D_<nnnnn>`) one MultiFab is
/// written to ([`DEFAULT_NFILES`] = 256 unless set; clamped to `1..=ranks`). With more
/// ranks than files, ranks `f * L .. (f + 1) * L` (`L = ceil(ranks / files)`) share file
/// `f` and append to it one after the other, as AMReX's `NFilesIter` does. Every rank must
/// set the same value (the writer checks that they did). One process always writes
/// `Cell_D_00000`.
pub fn set_nfiles(n: usize) {
    NFILES.store(n.max(1), Ordering::Relaxed);
}

/// The value [`set_nfiles`] set (AMReX's `VisMF::GetNOutFiles`).
#[must_use]
pub fn nfiles() -> usize {
    NFILES.load(Ordering::Relaxed)
}

/// Where a rank writes: its file number and its turn among the ranks sharing that file
/// (AMReX's `NFilesIter::FileNumber` and `WhichSetPosition`, static set selection,
/// `groupSets = false`). Returns `(file, turn, turns)`.
pub(crate) fn file_group(rank: usize, nranks: usize, nfiles: usize) -> (usize, usize, usize) {
    let files = nfiles.clamp(1, nranks.max(1));
    let turns = nranks.div_ceil(files).max(1);
    (rank / turns, rank % turns, turns)
}

/// **Collective.** Whether every rank succeeded. If one or more failed, every rank
/// returns an error: a rank that failed keeps its own, the others get
/// [`PlotfileError::OtherRank`] with the lowest failed rank's message. One all-reduce
/// when every rank succeeded, plus one broadcast when one did not.
pub(crate) fn agree<T>(
    comm: &Agreed<'_>,
    local: Result<T, PlotfileError>,
) -> Result<T, PlotfileError> {
    let Some(root) = comm.first_failure(local.is_ok()) else {
        return local;
    };
    let mut msg = match &local {
        Err(e) if root == comm.communicator().rank() => format!("{e}").into_bytes(),
        _ => Vec::new(),
    };
    comm.broadcast_bytes(root, &mut msg)
        .map_err(PlotfileError::Comm)?;
    match local {
        Err(e) => Err(e),
        Ok(_) => Err(PlotfileError::OtherRank {
            rank: root,
            what: String::from_utf8_lossy(&msg).into_owned(),
        }),
    }
}

/// **Collective.** Rank 0 reads the text file `path` and broadcasts it (AMReX's
/// `ParallelDescriptor::ReadAndBcastFile`): one reader of each header, however many
/// ranks. Rank 0's error (a missing file, invalid UTF-8) becomes an error on every rank.
pub(crate) fn read_text_on(comm: &Agreed<'_>, path: &Path) -> Result<String, PlotfileError> {
    if comm.communicator().size() == 1 {
        return read_text(path);
    }
    let local = if comm.communicator().rank() == 0 {
        read_text(path)
    } else {
        Ok(String::new())
    };
    let local = agree(comm, local)?;
    let mut bytes = local.into_bytes();
    comm.broadcast_bytes(0, &mut bytes)
        .map_err(PlotfileError::Comm)?;
    // Rank 0 sent a `String`, so this holds; checked rather than trusted all the same.
    String::from_utf8(bytes).map_err(|_| invalid(path, "the broadcast text is not UTF-8"))
}

/// What one rank wrote of one level: per local box its global index, byte offset in the
/// rank's data file, and per component minimum and maximum over the valid box.
#[derive(Debug, Default)]
pub(crate) struct LocalPart {
    pub(crate) file: usize,
    pub(crate) fabs: Vec<BoxRecord>,
}

/// One FAB a rank wrote: its global index, byte offset, and per component minimum and
/// maximum over the valid box.
#[derive(Debug, PartialEq)]
pub(crate) struct BoxRecord {
    pub(crate) g: usize,
    pub(crate) offset: u64,
    pub(crate) min: Vec<f64>,
    pub(crate) max: Vec<f64>,
}

impl LocalPart {
    /// `file, nfabs, then per fab: g, offset, ncomp minima, ncomp maxima` as
    /// little-endian `u64`s (floats by their bits, so NaN and -0.0 survive).
    pub(crate) fn encode(&self, ncomp: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(16 + self.fabs.len() * (16 + 16 * ncomp));
        let mut put = |x: u64| out.extend_from_slice(&x.to_le_bytes());
        put(self.file as u64);
        put(self.fabs.len() as u64);
        for b in &self.fabs {
            put(b.g as u64);
            put(b.offset);
            for x in b.min.iter().chain(&b.max) {
                put(x.to_bits());
            }
        }
        out
    }

    /// The inverse of [`encode`](Self::encode); `None` if the bytes do not parse (ranks
    /// disagree on `ncomp`, which the writer's argument check rules out).
    pub(crate) fn decode(bytes: &[u8], ncomp: usize) -> Option<Self> {
        let mut words = bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])));
        if !bytes.len().is_multiple_of(8) {
            return None;
        }
        let file = usize::try_from(words.next()?).ok()?;
        let n = usize::try_from(words.next()?).ok()?;
        if words.len() != n.checked_mul(ncomp.checked_mul(2)?.checked_add(2)?)? {
            return None;
        }
        let mut fabs = Vec::with_capacity(n);
        for _ in 0..n {
            let g = usize::try_from(words.next()?).ok()?;
            let offset = words.next()?;
            let min = (0..ncomp)
                .map(|_| words.next().map(f64::from_bits))
                .collect::<Option<Vec<f64>>>()?;
            let max = (0..ncomp)
                .map(|_| words.next().map(f64::from_bits))
                .collect::<Option<Vec<f64>>>()?;
            fabs.push(BoxRecord {
                g,
                offset,
                min,
                max,
            });
        }
        Some(Self { file, fabs })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn file_groups_follow_nfiles_iter() {
        // Fewer ranks than files: one file per rank.
        assert_eq!(file_group(0, 1, 256), (0, 0, 1));
        assert_eq!(file_group(3, 4, 256), (3, 0, 1));
        // 4 ranks, 2 files: ranks 0,1 share file 0, ranks 2,3 file 1.
        assert_eq!(file_group(1, 4, 2), (0, 1, 2));
        assert_eq!(file_group(2, 4, 2), (1, 0, 2));
        // 5 ranks, 2 files: sets of 3.
        assert_eq!(file_group(4, 5, 2), (1, 1, 3));
    }

    #[test]
    fn local_parts_round_trip() {
        let p = LocalPart {
            file: 3,
            fabs: vec![
                BoxRecord {
                    g: 7,
                    offset: 0,
                    min: vec![-0.0, f64::NAN],
                    max: vec![1.0, f64::INFINITY],
                },
                BoxRecord {
                    g: 9,
                    offset: 8278,
                    min: vec![2.0, 3.0],
                    max: vec![4.0, 5.0],
                },
            ],
        };
        let q = LocalPart::decode(&p.encode(2), 2).unwrap();
        assert_eq!(q.file, 3);
        assert_eq!(q.fabs.len(), 2);
        assert_eq!(q.fabs[1], p.fabs[1]);
        assert!(q.fabs[0].min[0].is_sign_negative() && q.fabs[0].min[1].is_nan());
        assert!(LocalPart::decode(&p.encode(2), 3).is_none());
        assert!(LocalPart::decode(&[1, 2, 3], 2).is_none());
    }
}
