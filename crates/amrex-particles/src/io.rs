//! AMReX particle plotfiles: the particle directory inside a plotfile (AMReX
//! `WritePlotFile(dir, name, real_names, int_names)` / `Restart`), which yt's AMReX
//! frontend reads.
//!
//! ```text
//! plt00010/particles/Header              version, names, counts, per-grid file/count/offset
//! plt00010/particles/Level_0/Particle_H  the level's BoxArray
//! plt00010/particles/Level_0/DATA_00003  per grid with particles: the ints of each
//!                                        particle (id, cpu, int comps) as i32, then its
//!                                        reals (x, y, z, real comps), native byte order
//! ```
//!
//! The `Header` (AMReX's `WriteBinaryParticleDataSync`):
//!
//! ```text
//! Version_Two_Dot_Zero_double    (`_single` for f32 particles)
//! 3                              SPACEDIM
//! 2                              real components after the position, then their names
//! charge
//! vx
//! 1                              int components, then their names
//! species
//! 1                              AMReX writes `true` here for every file
//! 9000                           particles (valid ones: id > 0)
//! 9001                           the next id, the largest over ranks
//! 0                              finest level
//! 8                              grids of each level
//! 3 1125 0                       per grid of each level: file number, count, byte offset
//! ...
//! ```
//!
//! Next to the plotfile's `Header`, a one-line `job_info` naming AMReX is written when
//! there is none, so that yt's `load` picks its AMReX frontend (the one that reads
//! particles), as it does for plotfiles of AMReX's `Amr` class.
//!
//! Each rank writes the grids it owns into its own `DATA_<rank>` (AMReX with
//! `particles.particles_nfiles = -1`); rank 0 writes the headers. Reading works on any
//! number of ranks and any grids: each rank reads a share of the grids and
//! `redistribute` puts the particles where they belong.
use crate::container::{ParticleContainer, agree_failure, check_count};
use crate::error::{ErrorKind, ParticleContainerError, Result};
use crate::tile::{ParticleTile, is_valid, r2f};
use amrex_aos::{ParticleReal, SPACEDIM, idcpu};
use amrex_runtime::{Fingerprint, ReduceOp};
use core::fmt::Write as _;
use std::fs;
use std::io::{Read as _, Seek as _, SeekFrom, Write as _};
use std::path::Path;
use std::string::{String, ToString};
use std::vec::Vec;
use std::{format, vec};

const RB: usize = core::mem::size_of::<ParticleReal>();
/// The operation names of the writer's and the reader's agreements.
const WRITE: &str = "write_plotfile (particles)";
const READ: &str = "read_plotfile (particles)";

fn io_err(path: &Path, e: impl core::fmt::Display) -> ParticleContainerError {
    ErrorKind::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
    .into()
}

fn fmt_err(path: &Path, m: impl Into<String>) -> ParticleContainerError {
    ErrorKind::Format {
        path: path.display().to_string(),
        message: m.into(),
    }
    .into()
}

/// The version line AMReX writes for plotfile particles of this precision.
#[must_use]
pub fn version_string() -> &'static str {
    if RB == 4 {
        "Version_Two_Dot_Zero_single"
    } else {
        "Version_Two_Dot_Zero_double"
    }
}

/// What a particle `Header` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParticleHeader {
    /// The version line.
    pub version: String,
    /// Names of the real components after the position.
    pub real_names: Vec<String>,
    /// Names of the int components.
    pub int_names: Vec<String>,
    /// Total particles.
    pub num_particles: u64,
    /// The next id to give.
    pub next_id: i64,
    /// Per level, per grid: (file number, count, byte offset).
    pub grids: Vec<Vec<(u32, u64, u64)>>,
}

impl ParticleHeader {
    /// Parses the text of a `Header` (at `path`, for messages).
    ///
    /// # Errors
    /// [`ErrorKind::Format`] naming what is missing or wrong.
    pub fn parse(text: &str, path: &Path) -> Result<Self> {
        let mut w = text.split_whitespace();
        let mut next = |what: &str| {
            w.next()
                .ok_or_else(|| fmt_err(path, format!("missing {what}")))
        };
        let version = next("version")?.to_string();
        if !version.starts_with("Version_Two_Dot_Zero")
            && !version.starts_with("Version_Two_Dot_One")
        {
            return Err(fmt_err(path, format!("unknown version {version:?}")));
        }
        let want = version_string().rsplit('_').next().unwrap_or("double");
        if !version.ends_with(want) {
            return Err(fmt_err(
                path,
                format!("{version} holds other reals than this build's {want}"),
            ));
        }
        fn num<N: core::str::FromStr>(path: &Path, s: &str, what: &str) -> Result<N> {
            s.parse()
                .map_err(|_| fmt_err(path, format!("{what} {s:?} is not a number")))
        }
        let dim: usize = num(path, next("dimension")?, "dimension")?;
        if dim != SPACEDIM {
            return Err(fmt_err(path, format!("dimension {dim}, expected 3")));
        }
        let nr: usize = num(path, next("real count")?, "real count")?;
        let real_names = (0..nr.min(1 << 16))
            .map(|_| next("real name").map(str::to_string))
            .collect::<Result<Vec<_>>>()?;
        let ni: usize = num(path, next("int count")?, "int count")?;
        let int_names = (0..ni.min(1 << 16))
            .map(|_| next("int name").map(str::to_string))
            .collect::<Result<Vec<_>>>()?;
        let _checkpoint: u32 = num(path, next("checkpoint flag")?, "checkpoint flag")?;
        let num_particles: u64 = num(path, next("particle count")?, "particle count")?;
        let next_id: i64 = num(path, next("next id")?, "next id")?;
        let finest: usize = num(path, next("finest level")?, "finest level")?;
        if finest > 64 {
            return Err(fmt_err(path, format!("finest level {finest}")));
        }
        let ngrids = (0..=finest)
            .map(|_| num::<usize>(path, next("grid count")?, "grid count"))
            .collect::<Result<Vec<_>>>()?;
        let mut grids = Vec::new();
        for &n in &ngrids {
            let mut v = Vec::new();
            for _ in 0..n {
                let which: u32 = num(path, next("file number")?, "file number")?;
                let count: u64 = num(path, next("count")?, "count")?;
                let at: u64 = num(path, next("offset")?, "offset")?;
                v.push((which, count, at));
            }
            grids.push(v);
        }
        let total: u64 = grids.iter().flatten().map(|g| g.1).sum();
        if total != num_particles {
            return Err(fmt_err(
                path,
                format!("the grids hold {total} particles, the header says {num_particles}"),
            ));
        }
        Ok(Self {
            version,
            real_names,
            int_names,
            num_particles,
            next_id,
            grids,
        })
    }
}

impl<T: ParticleTile + Clone> ParticleContainer<T> {
    /// Writes the particles as `dir/name/` in AMReX's particle plotfile format (AMReX
    /// `WritePlotFile(dir, name, real_comp_names, int_comp_names)`), valid particles
    /// only. `dir` is usually a plotfile written by `amrex-plotfile`, so that yt finds
    /// the particles as `particle_position_x`, `particle_<real name>`, ... **Collective**.
    ///
    /// # Errors
    /// On every rank, before anything is written: [`ErrorKind::Comm`] when the ranks do
    /// not all call it with the same path and names on the same container layout;
    /// [`ErrorKind::ComponentCount`] if the names are not one per component. Then
    /// [`ErrorKind::BadId`] on a rank with a particle whose id does not fit the format's
    /// `i32`, [`ErrorKind::Io`] on a rank that fails to write: the other ranks get
    /// [`ErrorKind::FailedOnOtherRank`].
    pub fn write_plotfile(
        &self,
        dir: impl AsRef<Path>,
        name: &str,
        real_names: &[&str],
        int_names: &[&str],
    ) -> Result<()> {
        let pdir = dir.as_ref().join(name);
        let mut fp = Fingerprint::new();
        fp.str(&pdir.to_string_lossy());
        for n in real_names.iter().chain(int_names) {
            fp.str(n);
        }
        fp.usize(real_names.len());
        let agreed = self.agree(WRITE, &fp)?;
        check_count("real name", self.num_real_comps(), real_names.len())?;
        check_count("int name", self.num_int_comps(), int_names.len())?;
        let comm = self.communicator();
        let (me, root) = (comm.rank(), 0);
        let nlev = self.num_levels();
        // Valid particles per level, over all ranks: which level directories exist.
        let mut per_level: Vec<u64> = (0..nlev)
            .map(|l| self.number_of_particles_at_level(l, true, true))
            .collect::<Result<_>>()?;
        agreed.all_reduce_u64_slice(&mut per_level, ReduceOp::Sum);
        let mut failed = None;
        if me == root {
            let mk = || -> Result<()> {
                fs::create_dir_all(&pdir).map_err(|e| io_err(&pdir, e))?;
                for (l, &n) in per_level.iter().enumerate() {
                    if n > 0 {
                        let ld = pdir.join(format!("Level_{l}"));
                        fs::create_dir_all(&ld).map_err(|e| io_err(&ld, e))?;
                    }
                }
                Ok(())
            };
            failed = mk().err();
        }
        agree_failure(&agreed, WRITE, failed.take())?;

        let (nr, ni) = (self.num_real_comps(), self.num_int_comps());
        let mut grid_info: Vec<Vec<u64>> = Vec::new();
        for (lev, &on_level) in per_level.iter().enumerate() {
            let ngrid = self.level(lev)?.box_array().len();
            // which, count, where per grid (each grid has one owner, so sums gather them).
            let mut info = vec![0u64; 3 * ngrid];
            if on_level > 0 {
                let mut buf: Vec<u8> = Vec::new();
                let tiles: Vec<_> = self.entries().iter().filter(|t| t.level == lev).collect();
                let mut k = 0;
                while k < tiles.len() {
                    let g = tiles[k].grid;
                    let mut e = k;
                    while e < tiles.len() && tiles[e].grid == g {
                        e += 1;
                    }
                    let at = buf.len() as u64;
                    let mut count = 0u64;
                    // Ints of every particle of the grid, then reals.
                    for t in &tiles[k..e] {
                        let d = &t.data;
                        for i in (0..d.len()).filter(|&i| idcpu::id(d.idcpu(i)) > 0) {
                            let w = d.idcpu(i);
                            // The format's id is an i32: a larger one is refused (on
                            // every rank, below), not cut to its low 32 bits.
                            let id = i32::try_from(idcpu::id(w)).unwrap_or_else(|_| {
                                failed.get_or_insert(ErrorKind::BadId { id: idcpu::id(w) }.into());
                                0
                            });
                            buf.extend_from_slice(&id.to_le_bytes());
                            buf.extend_from_slice(&idcpu::cpu(w).to_le_bytes());
                            for c in 0..ni {
                                buf.extend_from_slice(&d.int(i, c).to_le_bytes());
                            }
                            count += 1;
                        }
                    }
                    for t in &tiles[k..e] {
                        let d = &t.data;
                        for i in (0..d.len()).filter(|&i| idcpu::id(d.idcpu(i)) > 0) {
                            for x in d.pos(i) {
                                buf.extend_from_slice(&x.to_le_bytes());
                            }
                            for c in 0..nr {
                                buf.extend_from_slice(&d.real(i, c).to_le_bytes());
                            }
                        }
                    }
                    info[3 * g] = me as u64;
                    info[3 * g + 1] = count;
                    info[3 * g + 2] = if count > 0 { at } else { 0 };
                    k = e;
                }
                if !buf.is_empty() {
                    let f = pdir
                        .join(format!("Level_{lev}"))
                        .join(format!("DATA_{me:05}"));
                    if let Err(e) = fs::write(&f, &buf) {
                        failed.get_or_insert(io_err(&f, e));
                    }
                }
            }
            agreed.all_reduce_u64_slice(&mut info, ReduceOp::Sum);
            grid_info.push(info);
        }
        agree_failure(&agreed, WRITE, failed.take())?;
        let next_id = agreed.all_reduce_u64(self.next_id().max(0).cast_unsigned(), ReduceOp::Max);
        if me == root {
            let mut h = String::new();
            let _ = writeln!(h, "{}\n{SPACEDIM}\n{nr}", version_string());
            for n in real_names {
                let _ = writeln!(h, "{n}");
            }
            let _ = writeln!(h, "{ni}");
            for n in int_names {
                let _ = writeln!(h, "{n}");
            }
            let total: u64 = per_level.iter().sum();
            let _ = writeln!(h, "1\n{total}\n{next_id}\n{}", nlev - 1);
            for info in &grid_info {
                let _ = writeln!(h, "{}", info.len() / 3);
            }
            for (lev, info) in grid_info.iter().enumerate() {
                for g in info.chunks_exact(3) {
                    let _ = writeln!(h, "{} {} {}", g[0], g[1], g[2]);
                }
                if per_level[lev] > 0 {
                    // Not `self.level(lev)?`: an early return here, on the root only,
                    // would leave the other ranks waiting in the agreement below; and
                    // `lev < nlev`, a level of this container.
                    let ba = self.levels[lev].box_array();
                    let mut ph = format!("({} 0\n", ba.len());
                    for b in ba.boxes() {
                        let _ = writeln!(ph, "{b}");
                    }
                    ph.push_str(")\n\n");
                    let f = pdir.join(format!("Level_{lev}")).join("Particle_H");
                    if let Err(e) = fs::write(&f, ph) {
                        failed.get_or_insert(io_err(&f, e));
                    }
                }
            }
            let f = pdir.join("Header");
            if let Err(e) = fs::File::create(&f).and_then(|mut o| o.write_all(h.as_bytes())) {
                failed.get_or_insert(io_err(&f, e));
            }
            // yt's `load` opens a plotfile with its AMReX frontend (the one that reads
            // particles) when a `job_info` next to the `Header` names AMReX, as the one
            // AMReX's `Amr` class writes does.
            let ji = dir.as_ref().join("job_info");
            if !ji.exists()
                && let Err(e) = fs::write(
                    &ji,
                    "Job information: written by amrex-rs (AMReX particle plotfile)\n",
                )
            {
                failed.get_or_insert(io_err(&ji, e));
            }
        }
        agree_failure(&agreed, WRITE, failed)
    }

    /// Reads the particles of `dir/name/` (AMReX `Restart(dir, name)`) written by
    /// [`write_plotfile`](Self::write_plotfile) or AMReX, on any number of ranks and
    /// any grids: each rank reads every `size`-th grid of the file, then the particles
    /// are redistributed. Adds to the particles already here; returns how many were
    /// read on all ranks. **Collective**.
    ///
    /// # Errors
    /// Nothing is added on any rank when one fails. [`ErrorKind::Comm`] on every rank
    /// when the ranks do not all call it with the same path on the same container
    /// layout. [`ErrorKind::Format`] for a file that is not what AMReX writes (wrong
    /// version, dimension, component counts, ids, or data shorter than the header says)
    /// and [`ErrorKind::Io`], on each rank that finds it in its share of the files: the
    /// other ranks get [`ErrorKind::FailedOnOtherRank`]. Then those of
    /// [`redistribute`](Self::redistribute).
    pub fn read_plotfile(&mut self, dir: impl AsRef<Path>, name: &str) -> Result<u64> {
        let pdir = dir.as_ref().join(name);
        let comm = self.communicator().clone();
        let (me, size) = (comm.rank(), comm.size());
        let mut fp = Fingerprint::new();
        fp.str(&pdir.to_string_lossy());
        let agreed = self.agree_with(&comm, READ, &fp)?;
        let mut t = self.make_tile();
        let read_share = self.read_share(&pdir, me, size, &mut t);
        let hdr_next_id = read_share.as_ref().map_or(0, |&n| n);
        agree_failure(&agreed, READ, read_share.err())?;
        self.raise_next_id(hdr_next_id);
        let read = agreed.all_reduce_u64(t.len() as u64, ReduceOp::Sum);
        // Between collectives, so it must not fail on one rank alone, and it cannot:
        // `t` has this container's components (`make_tile`), and `read_share` refused
        // every position that is not finite, the only other refusal of `add_tile`.
        self.add_tile(t)
            .expect("read_plotfile: add_tile refused a tile read_share checked");
        self.redistribute()?;
        Ok(read)
    }

    /// Reads this rank's share of the grids into `t`; returns the header's next id.
    fn read_share(&self, pdir: &Path, me: usize, size: usize, t: &mut T) -> Result<i64> {
        let f = pdir.join("Header");
        let text = fs::read_to_string(&f).map_err(|e| io_err(&f, e))?;
        let h = ParticleHeader::parse(&text, &f)?;
        let (nr, ni) = (self.num_real_comps(), self.num_int_comps());
        if h.real_names.len() != nr || h.int_names.len() != ni {
            return Err(fmt_err(
                &f,
                format!(
                    "{} real and {} int components, this container has {nr} and {ni}",
                    h.real_names.len(),
                    h.int_names.len()
                ),
            ));
        }
        let (isz, rsz) = (4 * (2 + ni), RB * (SPACEDIM + nr));
        let mut k = 0usize;
        for (lev, grids) in h.grids.iter().enumerate() {
            for &(which, count, at) in grids {
                if count == 0 {
                    continue;
                }
                k += 1;
                if (k - 1) % size != me {
                    continue;
                }
                let df = pdir
                    .join(format!("Level_{lev}"))
                    .join(format!("DATA_{which:05}"));
                let too_large = || fmt_err(&f, format!("count {count} is too large"));
                let bytes = count
                    .checked_mul((isz + rsz) as u64)
                    .filter(|&b| b < 1 << 40)
                    .ok_or_else(too_large)?;
                // `count <= bytes`; both fit usize where it has 64 bits.
                let nbytes = usize::try_from(bytes).map_err(|_| too_large())?;
                let n = usize::try_from(count).map_err(|_| too_large())?;
                let mut file = fs::File::open(&df).map_err(|e| io_err(&df, e))?;
                let len = file.metadata().map_err(|e| io_err(&df, e))?.len();
                if at.checked_add(bytes).is_none_or(|end| end > len) {
                    return Err(fmt_err(
                        &df,
                        format!(
                            "{count} particles at offset {at} need {bytes} bytes; the file has {len}"
                        ),
                    ));
                }
                file.seek(SeekFrom::Start(at)).map_err(|e| io_err(&df, e))?;
                let mut buf = vec![0u8; nbytes];
                file.read_exact(&mut buf).map_err(|e| io_err(&df, e))?;
                let (ib, rbuf) = buf.split_at(n * isz);
                let n0 = t.len();
                t.resize(n0 + n);
                for i in 0..n {
                    let iv = |c: usize| {
                        let o = i * isz + 4 * c;
                        i32::from_le_bytes([ib[o], ib[o + 1], ib[o + 2], ib[o + 3]])
                    };
                    let (id, cpu) = (i64::from(iv(0)), iv(1));
                    let w = idcpu::try_make_id_cpu(id, cpu)
                        .map_err(|e| fmt_err(&df, format!("particle {i}: {e}")))?;
                    if !is_valid(w) {
                        return Err(fmt_err(&df, format!("particle {i} has id {id}")));
                    }
                    t.set_idcpu(n0 + i, w);
                    for c in 0..ni {
                        t.set_int(n0 + i, c, iv(2 + c));
                    }
                    let rv = |c: usize| {
                        let o = i * rsz + RB * c;
                        let mut a = [0u8; RB];
                        a.copy_from_slice(&rbuf[o..o + RB]);
                        ParticleReal::from_le_bytes(a)
                    };
                    let p = [rv(0), rv(1), rv(2)];
                    if !p.iter().all(|&x| r2f(x).is_finite()) {
                        return Err(fmt_err(&df, format!("particle {i} has position {p:?}")));
                    }
                    t.set_pos(n0 + i, p);
                    for c in 0..nr {
                        t.set_real(n0 + i, c, rv(SPACEDIM + c));
                    }
                }
            }
        }
        Ok(h.next_id)
    }
}
