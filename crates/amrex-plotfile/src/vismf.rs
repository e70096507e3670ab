//! VisMF: a MultiFab on disk as `<prefix>_H` (the header, AMReX's `VisMF::Header`) and
//! `<prefix>_D_NNNNN` files of FABs (AMReX's `FArrayBox::writeOn`, `FABio_binary`).

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt::{self, Write as _};

use amrex_box::{IndexBox, IntVect};

use crate::text::{Cursor, PResult, fmt_box, fmt_e, fmt_int_vect};

/// AMReX's IEEE `RealDescriptor`s: 4- or 8-byte IEEE floats in either byte order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RealDescriptor {
    /// Bytes per value: 4 (`float`) or 8 (`double`).
    pub bytes: usize,
    /// Byte order.
    pub little_endian: bool,
}

impl RealDescriptor {
    /// The machine's `double`s (AMReX's `FPC::NativeRealDescriptor()` for `Real =
    /// double`), which our writer uses.
    pub const NATIVE_F64: Self = Self {
        bytes: 8,
        little_endian: cfg!(target_endian = "little"),
    };

    /// The format array (bits, exponent bits, mantissa bits, sign position, exponent
    /// start, mantissa start, bias position, bias).
    fn format(self) -> [i64; 8] {
        if self.bytes == 8 {
            [64, 11, 52, 0, 1, 12, 0, 1023]
        } else {
            [32, 8, 23, 0, 1, 9, 0, 127]
        }
    }

    /// The byte order array: where each byte of the big-endian value is stored.
    fn order(self) -> Vec<i64> {
        let n = self.bytes as i64;
        if self.little_endian {
            (1..=n).rev().collect()
        } else {
            (1..=n).collect()
        }
    }

    /// Parses `((8, (64 11 52 0 1 12 0 1023)),(8, (8 7 6 5 4 3 2 1)))`.
    pub(crate) fn parse(c: &mut Cursor<'_>) -> PResult<Self> {
        let list = |c: &mut Cursor<'_>, what: &str| -> PResult<(usize, Vec<i64>)> {
            c.expect('(')?;
            let n: usize = c.int(what)?;
            c.expect(',')?;
            c.expect('(')?;
            let mut v = Vec::new();
            while !c.eat(')') {
                if v.len() > 64 {
                    return Err(c.error(format!("the end of the {what}")));
                }
                v.push(c.int(what)?);
            }
            c.expect(')')?;
            Ok((n, v))
        };
        c.expect('(')?;
        let (nb, fmt) = list(c, "real format")?;
        c.expect(',')?;
        let (nb2, ord) = list(c, "real byte order")?;
        c.expect(')')?;
        for little_endian in [true, false] {
            for bytes in [8, 4] {
                let rd = Self {
                    bytes,
                    little_endian,
                };
                if nb == bytes && nb2 == bytes && fmt == rd.format() && ord == rd.order() {
                    return Ok(rd);
                }
            }
        }
        Err(c.error(format!(
            "an IEEE float or double descriptor, found format {fmt:?} with byte order {ord:?}"
        )))
    }

    /// Whether the values are this machine's `f64`s (8-byte IEEE doubles in its byte
    /// order), which need no decoding.
    pub(crate) fn is_native_f64(self) -> bool {
        self.bytes == 8 && self.little_endian == cfg!(target_endian = "little")
    }

    /// Decodes values into `out` (its length says how many).
    pub(crate) fn decode(self, bytes: &[u8], out: &mut [f64]) {
        debug_assert_eq!(bytes.len(), out.len() * self.bytes);
        if self.bytes == 8 {
            for (o, b) in out.iter_mut().zip(bytes.chunks_exact(8)) {
                let a: [u8; 8] = b.try_into().unwrap_or([0; 8]);
                *o = if self.little_endian {
                    f64::from_le_bytes(a)
                } else {
                    f64::from_be_bytes(a)
                };
            }
        } else {
            for (o, b) in out.iter_mut().zip(bytes.chunks_exact(4)) {
                let a: [u8; 4] = b.try_into().unwrap_or([0; 4]);
                *o = f64::from(if self.little_endian {
                    f32::from_le_bytes(a)
                } else {
                    f32::from_be_bytes(a)
                });
            }
        }
    }
}

/// `((8, (64 11 52 0 1 12 0 1023)),(8, (8 7 6 5 4 3 2 1)))`, as AMReX writes it.
impl fmt::Display for RealDescriptor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let join = |v: &[i64]| {
            v.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" ")
        };
        write!(
            f,
            "(({}, ({})),({}, ({})))",
            self.bytes,
            join(&self.format()),
            self.bytes,
            join(&self.order())
        )
    }
}

/// Where one FAB is: a file next to the header and a byte offset in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FabOnDisk {
    /// File name (relative to the header's directory), e.g. `Cell_D_00000`.
    pub file: String,
    /// Byte offset of the FAB (its header, for version 1).
    pub offset: u64,
}

/// A VisMF header (`Cell_H`): AMReX's `VisMF::Header`.
///
/// `version` 1 (`Version_v1`, what AMReX writes by default) stores per-FAB minima and
/// maxima and a FAB header before each FAB's data; versions 2–4 (`NoFabHeader_v1`,
/// `NoFabHeaderMinMax_v1`, `NoFabHeaderFAMinMax_v1`) store raw data and the
/// [`RealDescriptor`] here.
#[derive(Clone, Debug, PartialEq)]
pub struct VisMfHeader {
    /// Header version (1–4).
    pub version: i32,
    /// How the data were written (0 one file per CPU, 1 `NFiles`).
    pub how: i32,
    /// Components.
    pub ncomp: usize,
    /// Ghost cells per direction (written as one number when they are equal).
    pub ngrow: IntVect,
    /// The valid boxes (the BoxArray).
    pub boxes: Vec<IndexBox>,
    /// Where each FAB is.
    pub fabs: Vec<FabOnDisk>,
    /// Per FAB, per component minimum over the valid box (versions 1 and 3).
    pub min: Vec<Vec<f64>>,
    /// Per FAB, per component maximum over the valid box (versions 1 and 3).
    pub max: Vec<Vec<f64>>,
    /// Per component minimum over all FABs (version 4).
    pub fa_min: Vec<f64>,
    /// Per component maximum over all FABs (version 4).
    pub fa_max: Vec<f64>,
    /// Data format of headerless FABs (versions 2–4).
    pub real_descriptor: Option<RealDescriptor>,
}

/// Reads `N,M` then `N` rows of `M` values each followed by a comma.
fn parse_table(c: &mut Cursor<'_>, what: &str) -> PResult<Vec<Vec<f64>>> {
    let n: usize = c.int(what)?;
    c.expect(',')?;
    let m: usize = c.int(what)?;
    let mut rows = Vec::with_capacity(n.min(1 << 20));
    for _ in 0..n {
        let mut row = Vec::with_capacity(m.min(1 << 16));
        for _ in 0..m {
            row.push(c.real(what)?);
            c.expect(',')?;
        }
        rows.push(row);
    }
    Ok(rows)
}

fn write_table(s: &mut String, rows: &[Vec<f64>]) {
    let m = rows.first().map_or(0, Vec::len);
    let _ = writeln!(s, "{},{m}", rows.len());
    for r in rows {
        for x in r {
            let _ = write!(s, "{},", fmt_e(*x, 17));
        }
        s.push('\n');
    }
}

impl VisMfHeader {
    /// Parses the text of a `_H` file of a `space_dim`-dimensional writer.
    pub(crate) fn parse_text(text: &str, space_dim: usize) -> PResult<Self> {
        let mut c = Cursor::new(text);
        let version: i32 = c.int("the VisMF version")?;
        if !(1..=4).contains(&version) {
            return Err(c.error(format!("a VisMF header version 1-4, found {version}")));
        }
        let how = c.int("the VisMF `how`")?;
        let ncomp: usize = c.int("the number of components")?;
        c.skip_ws();
        let ngrow = if c.eat('(') {
            let mut v = IntVect::ZERO;
            for d in 0..space_dim {
                if d > 0 {
                    c.expect(',')?;
                }
                v[d] = c.int("a ghost width")?;
            }
            c.expect(')')?;
            v
        } else {
            let g: i32 = c.int("the ghost width")?;
            let mut v = IntVect::splat(g);
            for d in space_dim..3 {
                v[d] = 0;
            }
            v
        };
        if !ngrow.all_ge(IntVect::ZERO) {
            return Err(c.error(format!("a non-negative ghost width, found {ngrow}")));
        }
        c.expect('(')?;
        let nboxes: usize = c.int("the number of boxes")?;
        let _hash: i64 = c.int("the BoxArray hash (0)")?;
        let mut boxes = Vec::with_capacity(nboxes.min(1 << 20));
        for _ in 0..nboxes {
            let b = c.index_box(space_dim, "a box")?;
            if !b.ok() {
                return Err(c.error(format!("a non-empty box, found {b}")));
            }
            if boxes
                .first()
                .is_some_and(|f: &IndexBox| f.ix_type() != b.ix_type())
            {
                return Err(c.error("boxes of one index type"));
            }
            boxes.push(b);
        }
        c.expect(')')?;
        let nfabs: usize = c.int("the number of FABs")?;
        if nfabs != nboxes {
            return Err(c.error(format!("{nboxes} FABs (one per box), found {nfabs}")));
        }
        // Grown by the ghost width, every box must stay in the index space too.
        for b in &boxes {
            if let Err(e) = b.try_grow_ghost(ngrow) {
                return Err(c.error(format!(
                    "a box that stays inside the i32 index space grown by the ghost width \
                     {ngrow}, found {b}: {e}"
                )));
            }
        }
        let mut fabs = Vec::with_capacity(nfabs.min(1 << 20));
        for _ in 0..nfabs {
            let tag = c.word("`FabOnDisk:`")?;
            if tag != "FabOnDisk:" {
                return Err(c.error(format!("`FabOnDisk:`, found {tag:?}")));
            }
            let file = c.word("a FAB file name")?.to_string();
            if file.contains(['/', '\\']) || file == ".." || file == "." {
                return Err(c.error(format!("a file name without a path, found {file:?}")));
            }
            let offset = c.int("a FAB offset")?;
            fabs.push(FabOnDisk { file, offset });
        }
        let (mut min, mut max, mut fa_min, mut fa_max) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        if version == 1 || version == 3 {
            min = parse_table(&mut c, "a FAB minimum")?;
            max = parse_table(&mut c, "a FAB maximum")?;
            for t in [&min, &max] {
                if t.len() != nboxes || t.iter().any(|r| r.len() != ncomp) {
                    return Err(c.error(format!("{nboxes} x {ncomp} minima and maxima")));
                }
            }
        }
        if version == 4 {
            for v in [&mut fa_min, &mut fa_max] {
                for _ in 0..ncomp {
                    v.push(c.real("a FabArray minimum or maximum")?);
                    c.expect(',')?;
                }
            }
        }
        let real_descriptor = if version >= 2 {
            Some(RealDescriptor::parse(&mut c)?)
        } else {
            None
        };
        Ok(Self {
            version,
            how,
            ncomp,
            ngrow,
            boxes,
            fabs,
            min,
            max,
            fa_min,
            fa_max,
            real_descriptor,
        })
    }

    /// The header text of a `space_dim`-dimensional writer, as AMReX's
    /// `operator<<(ostream&, const VisMF::Header&)` writes it (minima and maxima as
    /// `%.17e`).
    #[must_use]
    pub fn to_text(&self, space_dim: usize) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "{}", self.version);
        let _ = writeln!(s, "{}", self.how);
        let _ = writeln!(s, "{}", self.ncomp);
        let g = self.ngrow;
        if (0..space_dim).all(|d| g[d] == g[0]) {
            let _ = writeln!(s, "{}", g[0]);
        } else {
            let _ = writeln!(s, "{}", fmt_int_vect(g, space_dim));
        }
        let _ = writeln!(s, "({} 0", self.boxes.len());
        for b in &self.boxes {
            let _ = writeln!(s, "{}", fmt_box(b, space_dim));
        }
        s.push_str(")\n");
        let _ = writeln!(s, "{}", self.fabs.len());
        for f in &self.fabs {
            let _ = writeln!(s, "FabOnDisk: {} {}", f.file, f.offset);
        }
        s.push('\n');
        if self.version == 1 || self.version == 3 {
            write_table(&mut s, &self.min);
            s.push('\n');
            write_table(&mut s, &self.max);
            s.push('\n');
        }
        if self.version == 4 {
            for v in [&self.fa_min, &self.fa_max] {
                for x in v {
                    let _ = write!(s, "{},", fmt_e(*x, 17));
                }
                s.push('\n');
            }
        }
        if let Some(rd) = self.real_descriptor {
            let _ = writeln!(s, "{rd}");
        }
        s
    }
}

/// The header AMReX writes before each FAB's data: `FAB <descriptor><box> <ncomp>\n`.
pub(crate) fn fab_header(rd: RealDescriptor, bx: &IndexBox, ncomp: usize, dim: usize) -> String {
    format!("FAB {rd}{} {ncomp}\n", fmt_box(bx, dim))
}

/// Parses a FAB header line (without requiring the newline).
pub(crate) fn parse_fab_header(
    line: &str,
    dim: usize,
) -> PResult<(RealDescriptor, IndexBox, usize)> {
    let mut c = Cursor::new(line);
    let tag = c.word("`FAB`")?;
    if tag != "FAB" {
        return Err(c.error(format!(
            "a binary FAB header `FAB ((...`, found {tag:?} (ASCII and 8-bit FABs are not read)"
        )));
    }
    let rd = RealDescriptor::parse(&mut c)?;
    let bx = c.index_box(dim, "the FAB box")?;
    let ncomp = c.int("the FAB's number of components")?;
    if !c.at_end() {
        return Err(c.error("the end of the FAB header"));
    }
    Ok((rd, bx, ncomp))
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    const CELL_H: &str = "1\n1\n2\n0\n(2 0\n((0,0,0) (7,7,7) (0,0,0))\n((8,0,0) (15,7,7) (0,0,0))\n)\n\
2\nFabOnDisk: Cell_D_00000 0\nFabOnDisk: Cell_D_00000 8278\n\n\
2,2\n0.00000000000000000e+00,1.00000000000000000e+04,\n8.00000000000000000e+00,1.00080000000000000e+04,\n\n\
2,2\n7.07070000000000043e+00,1.00070707000000002e+04,\n1.50707000000000004e+01,1.00150707000000002e+04,\n\n";

    #[test]
    fn cell_h_round_trips() {
        let h = VisMfHeader::parse_text(CELL_H, 3).unwrap();
        assert_eq!(h.version, 1);
        assert_eq!(h.ncomp, 2);
        assert_eq!(h.ngrow, IntVect::ZERO);
        assert_eq!(
            h.boxes[1],
            IndexBox::new(IntVect::new(8, 0, 0), IntVect::new(15, 7, 7))
        );
        assert_eq!(h.fabs[1].offset, 8278);
        assert_eq!(h.min[1], [8.0, 10008.0]);
        assert_eq!(h.max[0][0], 7.0707);
        assert_eq!(h.real_descriptor, None);
        assert_eq!(h.to_text(3), CELL_H);
    }

    #[test]
    fn headerless_versions_carry_the_descriptor() {
        let mut h = VisMfHeader::parse_text(CELL_H, 3).unwrap();
        h.version = 4;
        h.min.clear();
        h.max.clear();
        h.fa_min = vec![0.0, 1e4];
        h.fa_max = vec![15.0707, 10015.0707];
        h.ngrow = IntVect::new(1, 2, 0);
        h.real_descriptor = Some(RealDescriptor {
            bytes: 4,
            little_endian: false,
        });
        let text = h.to_text(3);
        assert!(text.contains("\n(1,2,0)\n"), "{text}");
        assert!(
            text.ends_with("((4, (32 8 23 0 1 9 0 127)),(4, (1 2 3 4)))\n"),
            "{text}"
        );
        assert_eq!(VisMfHeader::parse_text(&text, 3).unwrap(), h);
    }

    #[test]
    fn fab_headers_and_descriptors() {
        let bx = IndexBox::new(IntVect::ZERO, IntVect::splat(7));
        let line = fab_header(RealDescriptor::NATIVE_F64, &bx, 2, 3);
        if cfg!(target_endian = "little") {
            assert_eq!(
                line,
                "FAB ((8, (64 11 52 0 1 12 0 1023)),(8, (8 7 6 5 4 3 2 1)))((0,0,0) (7,7,7) (0,0,0)) 2\n"
            );
        }
        assert_eq!(
            parse_fab_header(&line, 3).unwrap(),
            (RealDescriptor::NATIVE_F64, bx, 2)
        );
        let e = parse_fab_header(
            "FAB ((8, (64 11 52 0 1 12 0 1000)),(8, (8 7 6 5 4 3 2 1)))((0,0,0) (7,7,7) (0,0,0)) 2",
            3,
        )
        .unwrap_err();
        assert!(e.what.contains("IEEE"), "{e:?}");
        assert!(parse_fab_header("FAB: ascii", 3).is_err());
        let mut out = [0.0; 2];
        let be = RealDescriptor {
            bytes: 4,
            little_endian: false,
        };
        be.decode(&[0x3f, 0x80, 0, 0, 0xc0, 0, 0, 0], &mut out);
        assert_eq!(out, [1.0, -2.0]);
    }

    #[test]
    fn bad_headers_are_refused_with_the_line() {
        let e = VisMfHeader::parse_text(
            &CELL_H.replace("FabOnDisk: Cell_D_00000 8278", "FabOnDisk: ../x 1"),
            3,
        )
        .unwrap_err();
        assert_eq!(e.line, 11, "{e:?}");
        let e = VisMfHeader::parse_text(&CELL_H.replace("2,2\n7.07", "2,3\n7.07"), 3).unwrap_err();
        assert!(e.what.contains(','), "{e:?}");
        assert!(VisMfHeader::parse_text("7\n", 3).is_err());
    }
}
