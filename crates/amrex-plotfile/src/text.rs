//! Text helpers: a cursor over AMReX's stream-formatted headers, and C++ `ostream`
//! number formatting (`%.Ng` for the default float format, `%.Ne` for scientific).

use alloc::format;
use alloc::string::{String, ToString};
use core::str::FromStr;

use amrex_box::{IndexBox, IndexType, IntVect};

/// A parse failure: what was expected, and the 1-based line where it was.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ParseError {
    pub(crate) line: usize,
    pub(crate) what: String,
}

pub(crate) type PResult<T> = Result<T, ParseError>;

/// A cursor over header text, reading the way C++ `operator>>` does (whitespace skipped
/// before each item), plus whole lines where AMReX writes one item per line.
pub(crate) struct Cursor<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        Self { text, pos: 0 }
    }

    /// A parse error at the current position.
    pub(crate) fn error(&self, what: impl Into<String>) -> ParseError {
        let line = self.text[..self.pos]
            .bytes()
            .filter(|&b| b == b'\n')
            .count()
            + 1;
        ParseError {
            line,
            what: what.into(),
        }
    }

    fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }

    /// The current line (without its newline), without moving; `None` at the end.
    pub(crate) fn peek_line(&self) -> Option<&'a str> {
        let r = self.rest();
        if r.is_empty() {
            return None;
        }
        let line = r.find('\n').map_or(r, |i| &r[..i]);
        Some(line.strip_suffix('\r').unwrap_or(line))
    }

    pub(crate) fn skip_ws(&mut self) {
        let r = self.rest();
        self.pos += r.len() - r.trim_start().len();
    }

    /// Whether only whitespace is left.
    pub(crate) fn at_end(&mut self) -> bool {
        self.skip_ws();
        self.pos == self.text.len()
    }

    /// The rest of the current line (without the newline), moving past the newline.
    pub(crate) fn line(&mut self) -> PResult<&'a str> {
        let r = self.rest();
        if r.is_empty() {
            return Err(self.error("a line, found the end of the file"));
        }
        let (line, adv) = match r.find('\n') {
            Some(i) => (&r[..i], i + 1),
            None => (r, r.len()),
        };
        self.pos += adv;
        Ok(line.strip_suffix('\r').unwrap_or(line))
    }

    /// Skips whitespace and the character `c`.
    pub(crate) fn expect(&mut self, c: char) -> PResult<()> {
        self.skip_ws();
        if self.rest().starts_with(c) {
            self.pos += c.len_utf8();
            Ok(())
        } else {
            let found = self
                .rest()
                .chars()
                .next()
                .map_or_else(|| "the end of the file".to_string(), |f| format!("{f:?}"));
            Err(self.error(format!("{c:?}, found {found}")))
        }
    }

    /// Skips whitespace; consumes `c` if it is next.
    pub(crate) fn eat(&mut self, c: char) -> bool {
        self.skip_ws();
        if self.rest().starts_with(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }

    /// The next whitespace-delimited word.
    pub(crate) fn word(&mut self, what: &str) -> PResult<&'a str> {
        self.skip_ws();
        let r = self.rest();
        let end = r.find(char::is_whitespace).unwrap_or(r.len());
        if end == 0 {
            return Err(self.error(format!("{what}, found the end of the file")));
        }
        self.pos += end;
        Ok(&r[..end])
    }

    /// A number: the characters up to whitespace, `,`, `(` or `)`.
    fn number<T: FromStr>(&mut self, what: &str) -> PResult<T> {
        self.skip_ws();
        let r = self.rest();
        let end = r
            .find(|c: char| c.is_whitespace() || matches!(c, ',' | '(' | ')'))
            .unwrap_or(r.len());
        let tok = &r[..end];
        match tok.parse() {
            Ok(v) => {
                self.pos += end;
                Ok(v)
            }
            Err(_) => Err(self.error(format!("{what}, found {tok:?}"))),
        }
    }

    pub(crate) fn int<T: FromStr>(&mut self, what: &str) -> PResult<T> {
        self.number(what)
    }

    pub(crate) fn real(&mut self, what: &str) -> PResult<f64> {
        self.number(what)
    }

    /// `(a,b,c)` with `dim` components, padded with zeros to three.
    pub(crate) fn int_vect(&mut self, dim: usize, what: &str) -> PResult<IntVect> {
        self.expect('(')?;
        let mut v = IntVect::ZERO;
        for d in 0..dim {
            if d > 0 {
                self.expect(',')?;
            }
            v[d] = self.int(what)?;
        }
        self.expect(')')?;
        Ok(v)
    }

    /// AMReX's box notation `((lo) (hi) (type))` in `dim` dimensions; missing directions
    /// are `0..=0`, cell-centred.
    pub(crate) fn index_box(&mut self, dim: usize, what: &str) -> PResult<IndexBox> {
        self.expect('(')?;
        let lo = self.int_vect(dim, what)?;
        let hi = self.int_vect(dim, what)?;
        let t = self.int_vect(dim, what)?;
        self.expect(')')?;
        if (0..3).any(|d| !matches!(t[d], 0 | 1)) {
            return Err(self.error(format!("{what}: index type {t} is not 0/1")));
        }
        let b = IndexBox::with_type(lo, hi, IndexType::from_int_vect(t));
        // Every box read from a file passes the index-space rule before anything
        // computes with its corners.
        b.check_index_space()
            .map_err(|e| self.error(format!("{what} inside the i32 index space: {b}: {e}")))?;
        Ok(b)
    }
}

/// `(a,b,c)` in `dim` dimensions.
pub(crate) fn fmt_int_vect(v: IntVect, dim: usize) -> String {
    let mut s = String::from("(");
    for d in 0..dim {
        if d > 0 {
            s.push(',');
        }
        s.push_str(&v[d].to_string());
    }
    s.push(')');
    s
}

/// AMReX's box notation `((lo) (hi) (type))` in `dim` dimensions.
pub(crate) fn fmt_box(b: &IndexBox, dim: usize) -> String {
    format!(
        "({} {} {})",
        fmt_int_vect(b.lo(), dim),
        fmt_int_vect(b.hi(), dim),
        fmt_int_vect(b.ix_type().ix_type(), dim)
    )
}

fn non_finite(x: f64) -> Option<String> {
    if x.is_nan() {
        Some(if x.is_sign_negative() { "-nan" } else { "nan" }.to_string())
    } else if x.is_infinite() {
        Some(if x < 0.0 { "-inf" } else { "inf" }.to_string())
    } else {
        None
    }
}

/// Splits Rust's `{:e}` output into mantissa and exponent.
fn split_exp(s: &str) -> (&str, i32) {
    let (m, e) = s.split_once('e').unwrap_or((s, "0"));
    (m, e.parse().unwrap_or(0))
}

fn c_exponent(e: i32) -> String {
    format!("e{}{:02}", if e < 0 { '-' } else { '+' }, e.unsigned_abs())
}

/// C's `%.{prec}e`: what `os << std::scientific << std::setprecision(prec) << x` prints.
pub(crate) fn fmt_e(x: f64, prec: usize) -> String {
    if let Some(s) = non_finite(x) {
        return s;
    }
    let s = format!("{x:.prec$e}");
    let (m, e) = split_exp(&s);
    format!("{m}{}", c_exponent(e))
}

fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// C's `%.{prec}g`: what `os << std::setprecision(prec) << x` prints with the default
/// float format (AMReX writes plotfile headers with precision 17).
pub(crate) fn fmt_g(x: f64, prec: usize) -> String {
    if let Some(s) = non_finite(x) {
        return s;
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    let p = prec.max(1);
    // The exponent after rounding to `p` significant digits decides the style.
    let s = format!("{x:.*e}", p - 1);
    let (m, e) = split_exp(&s);
    if e < -4 || e >= p as i32 {
        format!("{}{}", strip_zeros(m), c_exponent(e))
    } else {
        let decimals = (p as i32 - 1 - e) as usize;
        strip_zeros(&format!("{x:.decimals$}")).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g_format_matches_c() {
        // Values checked against glibc's printf("%.17g").
        assert_eq!(fmt_g(0.03125, 17), "0.03125");
        assert_eq!(fmt_g(1.5, 17), "1.5");
        assert_eq!(fmt_g(0.1, 17), "0.10000000000000001");
        assert_eq!(fmt_g(1.0, 17), "1");
        assert_eq!(fmt_g(-2.0, 17), "-2");
        assert_eq!(fmt_g(0.0, 17), "0");
        assert_eq!(fmt_g(1e-5, 17), "1.0000000000000001e-05");
        assert_eq!(fmt_g(0.0001, 17), "0.0001");
        assert_eq!(fmt_g(1e17, 17), "1e+17");
        assert_eq!(fmt_g(1e16, 17), "10000000000000000");
        assert_eq!(fmt_g(123456.789, 6), "123457");
        assert_eq!(fmt_g(999999.5, 6), "1e+06");
        assert_eq!(fmt_g(1.0 / 3.0, 17), "0.33333333333333331");
        assert_eq!(fmt_g(f64::NAN, 17), "nan");
        assert_eq!(fmt_g(f64::NEG_INFINITY, 17), "-inf");
    }

    #[test]
    fn e_format_matches_c() {
        assert_eq!(fmt_e(0.0, 17), "0.00000000000000000e+00");
        assert_eq!(fmt_e(0.08, 17), "8.00000000000000017e-02");
        assert_eq!(fmt_e(10008.0, 17), "1.00080000000000000e+04");
        assert_eq!(fmt_e(-1.5e-300, 3), "-1.500e-300");
        assert_eq!(fmt_e(1e100, 1), "1.0e+100");
    }

    #[test]
    fn cursor_reads_items_and_lines() {
        let mut c =
            Cursor::new("HyperCLaw-V1.1\n2\nden sity\nx\n ((0,0,0) (3,4,5) (1,0,0)) 7 \n(1,2)");
        assert_eq!(c.line().unwrap(), "HyperCLaw-V1.1");
        assert_eq!(c.int::<usize>("n").unwrap(), 2);
        assert_eq!(c.line().unwrap(), "");
        assert_eq!(c.line().unwrap(), "den sity");
        assert_eq!(c.word("w").unwrap(), "x");
        let b = c.index_box(3, "box").unwrap();
        assert_eq!(fmt_box(&b, 3), "((0,0,0) (3,4,5) (1,0,0))");
        assert_eq!(c.int::<i32>("step").unwrap(), 7);
        assert_eq!(c.int_vect(2, "iv").unwrap(), IntVect::new(1, 2, 0));
        assert!(c.at_end());
        let e = c.int::<i32>("more").unwrap_err();
        assert_eq!(e.line, 6);
        let mut c = Cursor::new("\n\n(1;2)");
        let e = c.int_vect(2, "iv").unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.what.contains("1;2"), "{}", e.what);
    }
}
