//! Particles between ranks in [`redistribute`](crate::ParticleContainer::redistribute):
//! AMReX's `AMReX_ParticleCommunication.H/.cpp`.
//!
//! `redistribute` routes each particle for another rank into a [`ParticleCopyPlan`] by
//! [`pack`](ParticleCopyPlan::pack) (AMReX's `ParticleCopyOp` and `packBuffer` in one
//! step); [`communicate`](ParticleCopyPlan::communicate) exchanges the counts (AMReX
//! builds its `ParticleCopyPlan` with them), then the particles
//! (`communicateParticlesStart/Finish`); each message received goes into the tiles by
//! [`unpack_buffer`](ParticleContainer::unpack_buffer) (AMReX's `unpackBuffer`).
//!
//! # Wire format
//! Two messages go from each rank to each other rank, all little-endian:
//! - counts (`Tag::PARTICLE_COUNTS`, to every other rank, even for none): the number `n`
//!   of particles in the data message, one `u64` (8 bytes). Written by
//!   [`count_message`], read by [`recv_sizes`].
//! - data (`Tag::PARTICLE_DATA`, only when `n > 0`): the `n` particles' destination
//!   codes (their tiles in the receiver's layout), one `u32` each, then their `n`
//!   records in the same order, `packed_bytes()` each as
//!   [`ParticleTile::pack_selected`] writes them (idcpu, position, reals, ints): `n * (4
//!   + packed_bytes())` bytes. Written by [`data_message`], read by
//!   [`unpack_buffer`](ParticleContainer::unpack_buffer).
use crate::container::{ParticleContainer, REMOTE};
use crate::error::Result;
use crate::redistribute::group_by_code;
use crate::tile::ParticleTile;
use alloc::vec;
use alloc::vec::Vec;
use amrex_runtime::{Communicator, Tag};

/// Bytes of a counts message: one `u64`.
const COUNT_BYTES: usize = 8;
/// Bytes of one destination code in a data message: one `u32`.
const CODE_BYTES: usize = 4;

/// Messages received from other ranks: `(rank, bytes)`.
pub(crate) type Received = Vec<(usize, Vec<u8>)>;

/// The particles this rank sends to each rank in one `redistribute`: per rank, their
/// destination codes and their packed records, in the same order (AMReX's
/// `ParticleCopyOp`, with each particle packed at once as `packBuffer` would).
#[derive(Debug)]
pub(crate) struct ParticleCopyPlan {
    /// Per rank, the destination codes of the particles for it, in packing order.
    codes: Vec<Vec<u32>>,
    /// Per rank, the records of those particles (`packed_bytes()` each).
    recs: Vec<Vec<u8>>,
}

impl ParticleCopyPlan {
    /// Nothing yet for any of `nranks` ranks.
    pub(crate) fn new(nranks: usize) -> Self {
        Self {
            codes: vec![Vec::new(); nranks],
            recs: vec![Vec::new(); nranks],
        }
    }

    /// Adds the particles `idx` of `src`, all for the tile with destination `code`,
    /// owned by `rank`: their codes, and their records packed now.
    pub(crate) fn pack<T: ParticleTile>(&mut self, rank: usize, code: u32, src: &T, idx: &[u32]) {
        self.codes[rank].extend(core::iter::repeat_n(code, idx.len()));
        src.pack_selected(idx, &mut self.recs[rank]);
    }

    /// Sends the particles (records of `pb` bytes) to their ranks and receives this
    /// rank's: the counts first (one message to every other rank), then one message to
    /// each rank that gets any. Returns the data messages received and the bytes sent.
    /// **Collective** over `comm`, the communicator the plan was made for.
    ///
    /// # Errors
    /// [`ErrorKind::Comm`](crate::ErrorKind::Comm) if a message fails.
    pub(crate) fn communicate(
        mut self,
        comm: &Communicator,
        pb: usize,
    ) -> Result<(Received, usize)> {
        let me = comm.rank();
        let others: Vec<usize> = (0..comm.size()).filter(|&r| r != me).collect();
        let counts = self.exchange_counts(comm, &others)?;
        let mut sends = Vec::new();
        let mut bytes_sent = 0;
        for &r in &others {
            if !self.codes[r].is_empty() {
                let msg = data_message(&self.codes[r], &self.recs[r]);
                bytes_sent += msg.len();
                sends.push((r, msg));
            }
            self.recs[r] = Vec::new();
        }
        let recvs = recv_sizes(counts, pb);
        let got = comm
            .start_exchange(Tag::PARTICLE_DATA, sends, recvs)?
            .wait()?;
        Ok((got, bytes_sent))
    }

    /// Tells every rank of `others` how many particles it gets from this rank, and
    /// receives their counts messages.
    fn exchange_counts(&self, comm: &Communicator, others: &[usize]) -> Result<Received> {
        let sends = others
            .iter()
            .map(|&r| (r, count_message(self.codes[r].len())))
            .collect();
        let recvs = others.iter().map(|&r| (r, COUNT_BYTES)).collect();
        Ok(comm
            .start_exchange(Tag::PARTICLE_COUNTS, sends, recvs)?
            .wait()?)
    }
}

/// The counts message for `n` particles.
fn count_message(n: usize) -> Vec<u8> {
    (n as u64).to_le_bytes().to_vec()
}

/// The sizes of the data messages to receive, from the counts messages received
/// (`(rank, size)`, only for ranks that send particles; records of `pb` bytes).
fn recv_sizes(counts: Received, pb: usize) -> Vec<(usize, usize)> {
    let mut recvs = Vec::new();
    for (r, b) in counts {
        let n = u64::from_le_bytes(b.as_slice().try_into().unwrap_or([0; 8]));
        // The sender's count of its codes for this rank, a usize there; a panic (which
        // aborts every rank) if it does not fit here, not a truncated receive.
        let n = usize::try_from(n).expect("a particle count from another rank beyond usize");
        if n > 0 {
            recvs.push((r, n * (CODE_BYTES + pb)));
        }
    }
    recvs
}

/// The data message of particles with destination `codes` and records `recs`.
fn data_message(codes: &[u32], recs: &[u8]) -> Vec<u8> {
    let mut msg = Vec::with_capacity(codes.len() * CODE_BYTES + recs.len());
    for c in codes {
        msg.extend_from_slice(&c.to_le_bytes());
    }
    msg.extend_from_slice(recs);
    msg
}

impl<T: ParticleTile + Clone> ParticleContainer<T> {
    /// Appends the particles of a data message `msg` to their tiles (AMReX's
    /// `unpackBuffer`), in the message's order within each tile, and returns how many
    /// there were. A code that names no tile of this rank (a sender with another layout)
    /// puts its particles in the holding tile: they are kept, not lost.
    pub(crate) fn unpack_buffer(&mut self, msg: &[u8]) -> usize {
        let pb = self.template.packed_bytes();
        let n = msg.len() / (CODE_BYTES + pb);
        let codes: Vec<u32> = msg[..CODE_BYTES * n]
            .chunks_exact(CODE_BYTES)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let mut tmp = self.template.new_like();
        tmp.unpack_append(&msg[CODE_BYTES * n..]);
        for (code, idx) in group_by_code(&codes) {
            let slot = self.local.get(code as usize).copied().unwrap_or(REMOTE);
            if slot == REMOTE {
                // A sender with another layout: keep the particles, not lose them.
                self.pending.append_selected(&tmp, &idx);
            } else {
                self.tiles[slot as usize].data.append_selected(&tmp, &idx);
            }
        }
        n
    }
}
