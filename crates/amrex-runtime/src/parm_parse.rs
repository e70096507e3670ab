//! AMReX's inputs-file reader (`ParmParse`): `key = value ...` definitions from an inputs
//! file and from the command line, read back with typed queries.
//!
//! # The format
//!
//! - A definition is a key, `=`, and one or more whitespace-separated values:
//!   `amr.n_cell = 64 64 8`. Spaces around `=` are optional (`amr.max_level=1`).
//! - `#` starts a comment that runs to the end of the line (outside quotes).
//! - A value in double quotes may hold spaces and `#`: `title = "run #3"`.
//! - In a file, a definition ends at the end of its line; one line may hold several
//!   (`a = 1 b = 2`): a word followed by `=` starts the next one.
//! - A key given twice keeps both definitions; queries read the **last** one, as AMReX's
//!   do. Command-line definitions are added after the file's, so they override it.
//!
//! A scalar query reads the first value of the key's last definition (AMReX ignores
//! the rest too); an array query reads them all.
//!
//! # Prefixes
//!
//! AMReX programs read their keys through a prefixed view, `ParmParse pp("amr")`, so that
//! `pp.query("max_level")` reads `amr.max_level`. Here that is [`ParmParse::prefixed`],
//! which gives a [`Prefixed`] view with the same queries.
//!
//! # Errors
//!
//! Every error says which key and, where it comes from the text, which source (the file
//! name, or `command line`) and which line: a malformed line, a missing required key, a
//! value that does not parse as the type asked for, an array of the wrong length.
//!
//! Not supported (each would be an error, never a silent difference): AMReX's `FILE =`
//! includes and the arithmetic expressions of `queryWithParser`.

use alloc::borrow::ToOwned;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;
use core::sync::atomic::{AtomicBool, Ordering};

/// Where a definition came from: a source name (a file name or `command line`) and a
/// 1-based line (0 for definitions added by [`ParmParse::add`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    /// The file name, `command line`, or `added`.
    pub source: String,
    /// The 1-based line in the source (the command line is line 1).
    pub line: usize,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}", self.source)
        } else {
            write!(f, "{}:{}", self.source, self.line)
        }
    }
}

/// What went wrong reading or querying inputs.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParmParseError {
    /// A line that is not a sequence of `key = value ...` definitions.
    Malformed {
        /// Where.
        origin: Origin,
        /// The offending text (the line, trimmed).
        text: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A required key that no definition gives.
    Missing {
        /// The full key (prefix included).
        key: String,
    },
    /// A value that does not parse as the type asked for.
    WrongType {
        /// The full key.
        key: String,
        /// The value's position in its definition (0-based).
        index: usize,
        /// The value as written.
        value: String,
        /// The type asked for (`integer`, `real`, `boolean`, ...).
        expected: &'static str,
        /// Where the definition is.
        origin: Origin,
    },
    /// An array query for a fixed number of values found a different number.
    WrongLength {
        /// The full key.
        key: String,
        /// The number of values asked for.
        expected: usize,
        /// The number given.
        found: usize,
        /// Where the definition is.
        origin: Origin,
    },
    /// An inputs file that could not be read.
    Io {
        /// The path.
        path: String,
        /// The operating system's message.
        message: String,
    },
}

impl fmt::Display for ParmParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParmParseError::Malformed {
                origin,
                text,
                reason,
            } => {
                write!(f, "{origin}: malformed inputs line `{text}`: {reason}")
            }
            ParmParseError::Missing { key } => write!(f, "required input `{key}` is not given"),
            ParmParseError::WrongType {
                key,
                index,
                value,
                expected,
                origin,
            } => write!(
                f,
                "{origin}: input `{key}` value {index} is `{value}`, which is not {} {expected}",
                if expected.starts_with(['a', 'e', 'i', 'o', 'u']) {
                    "an"
                } else {
                    "a"
                }
            ),
            ParmParseError::WrongLength {
                key,
                expected,
                found,
                origin,
            } => write!(
                f,
                "{origin}: input `{key}` has {found} value(s); {expected} are needed"
            ),
            ParmParseError::Io { path, message } => {
                write!(f, "cannot read inputs file {path}: {message}")
            }
        }
    }
}

impl core::error::Error for ParmParseError {}

/// A type an input value can be read as.
pub trait ParmValue: Sized {
    /// The type's name in error messages.
    const KIND: &'static str;
    /// The value, or `None` if the text is not one.
    fn parse_value(text: &str) -> Option<Self>;
}

macro_rules! parm_value_via_from_str {
    ($kind:literal: $($t:ty),*) => {$(
        impl ParmValue for $t {
            const KIND: &'static str = $kind;
            fn parse_value(text: &str) -> Option<Self> {
                text.parse().ok()
            }
        }
    )*};
}
parm_value_via_from_str!("integer": i32, i64, u32, u64, usize);

macro_rules! parm_value_real {
    ($($t:ty),*) => {$(
        impl ParmValue for $t {
            const KIND: &'static str = "real";
            /// Decimal or scientific notation; Fortran's `d` exponent (`1.5d-3`) as well,
            /// which inputs files carried over from Fortran codes use.
            fn parse_value(text: &str) -> Option<Self> {
                text.parse().ok().or_else(|| text.replace(['d', 'D'], "e").parse().ok())
            }
        }
    )*};
}
parm_value_real!(f64, f32);

impl ParmValue for bool {
    const KIND: &'static str = "boolean";
    /// `true`/`false`/`t`/`f` in any case, or an integer (non-zero is true), as AMReX
    /// reads booleans.
    fn parse_value(text: &str) -> Option<Self> {
        match text.to_ascii_lowercase().as_str() {
            "true" | "t" => Some(true),
            "false" | "f" => Some(false),
            other => other.parse::<i64>().ok().map(|v| v != 0),
        }
    }
}

impl ParmValue for String {
    const KIND: &'static str = "string";
    fn parse_value(text: &str) -> Option<Self> {
        Some(text.to_owned())
    }
}

#[derive(Debug)]
struct Definition {
    key: String,
    values: Vec<String>,
    origin: Origin,
    /// Whether a query has read this key (AMReX's `m_count > 0`): set through `&self`,
    /// so that queries stay `&self` and the table stays `Sync`.
    used: AtomicBool,
}

impl Clone for Definition {
    fn clone(&self) -> Self {
        Self {
            key: self.key.clone(),
            values: self.values.clone(),
            origin: self.origin.clone(),
            used: AtomicBool::new(self.used.load(Ordering::Relaxed)),
        }
    }
}

/// A table of inputs: every definition read from files, the command line and
/// [`ParmParse::add`], in the order given.
#[derive(Clone, Debug, Default)]
pub struct ParmParse {
    defs: Vec<Definition>,
}

impl ParmParse {
    /// An empty table.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads inputs text; `source` names it in errors (a file name, say).
    ///
    /// # Errors
    /// [`ParmParseError::Malformed`] for the first line that is not definitions.
    pub fn from_text(text: &str, source: &str) -> Result<Self, ParmParseError> {
        let mut pp = Self::new();
        pp.read_text(text, source)?;
        Ok(pp)
    }

    /// Adds the definitions in `text` after those already here (so they override them).
    ///
    /// # Errors
    /// [`ParmParseError::Malformed`] for the first bad line; nothing is added then.
    pub fn read_text(&mut self, text: &str, source: &str) -> Result<(), ParmParseError> {
        let mut new = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let origin = Origin {
                source: source.to_owned(),
                line: n + 1,
            };
            parse_line(line, &origin, &mut new)?;
        }
        self.defs.extend(new);
        Ok(())
    }

    /// Reads an inputs file.
    ///
    /// # Errors
    /// [`ParmParseError::Io`] if it cannot be read, [`ParmParseError::Malformed`] for a
    /// bad line.
    #[cfg(feature = "std")]
    pub fn from_file(path: impl AsRef<std::path::Path>) -> Result<Self, ParmParseError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| ParmParseError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        Self::from_text(&text, &path.display().to_string())
    }

    /// AMReX's start-up reading of a program's arguments (without the program name): if
    /// the first argument holds no `=`, it is an inputs file, read first; the remaining
    /// arguments are definitions (`amr.max_level=1`, or `amr.max_level = 1` as separate
    /// words), added after the file's so that they override them.
    ///
    /// # Errors
    /// As [`ParmParse::from_file`], and [`ParmParseError::Malformed`] for arguments that
    /// are not definitions.
    #[cfg(feature = "std")]
    pub fn from_args<S: AsRef<str>>(args: &[S]) -> Result<Self, ParmParseError> {
        let (mut pp, rest) = match args.first() {
            Some(first) if !first.as_ref().contains('=') => {
                (Self::from_file(first.as_ref())?, &args[1..])
            }
            _ => (Self::new(), args),
        };
        pp.read_command_line(rest)?;
        Ok(pp)
    }

    /// Adds command-line definitions after those already here, read as AMReX reads its
    /// command line: the arguments joined by spaces into one line, so
    /// `"amr.n_cell=32 32 16"` (one argument) is three values and `amr.n_cell = 32 32 16`
    /// (five arguments) the same; a value that holds spaces needs its double quotes
    /// (`'plot_file="a b"'`).
    ///
    /// # Errors
    /// [`ParmParseError::Malformed`] if the words are not definitions; nothing is added.
    pub fn read_command_line<S: AsRef<str>>(&mut self, args: &[S]) -> Result<(), ParmParseError> {
        let mut line = String::new();
        for a in args {
            line.push_str(a.as_ref());
            line.push(' ');
        }
        let origin = Origin {
            source: "command line".to_owned(),
            line: 1,
        };
        let mut new = Vec::new();
        parse_line(&line, &origin, &mut new)?;
        self.defs.extend(new);
        Ok(())
    }

    /// Adds a definition (AMReX's `ParmParse::add`/`addarr`); it overrides earlier ones.
    pub fn add<V: ToString>(&mut self, key: &str, values: &[V]) {
        self.defs.push(Definition {
            key: key.to_owned(),
            values: values.iter().map(ToString::to_string).collect(),
            origin: Origin {
                source: "added".to_owned(),
                line: 0,
            },
            // AMReX counts an added key as used.
            used: AtomicBool::new(true),
        });
    }

    /// A view that prefixes every key with `prefix.` (AMReX's `ParmParse pp("amr")`).
    #[must_use]
    pub fn prefixed<'a>(&'a self, prefix: &str) -> Prefixed<'a> {
        Prefixed {
            table: self,
            prefix: prefix.to_owned(),
        }
    }

    /// Every key defined, in first-definition order, each once.
    #[must_use]
    pub fn keys(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for d in &self.defs {
            if !out.contains(&d.key.as_str()) {
                out.push(&d.key);
            }
        }
        out
    }

    /// The last definition of `key`, which counts as reading it (AMReX's `ppindex`).
    fn last(&self, key: &str) -> Option<&Definition> {
        let d = self.defs.iter().rev().find(|d| d.key == key)?;
        d.used.store(true, Ordering::Relaxed);
        Some(d)
    }

    /// The definitions of the keys no query has read (nor [`contains`](Self::contains)),
    /// sorted by key, each key's definitions in the order given: `(key, values)`.
    /// Definitions [`add`](Self::add)ed count as read, as in AMReX.
    #[must_use]
    pub fn unused(&self) -> Vec<(&str, &[String])> {
        let read = |key: &str| {
            self.defs
                .iter()
                .any(|d| d.key == key && d.used.load(Ordering::Relaxed))
        };
        let mut out: Vec<(&str, &[String])> = self
            .defs
            .iter()
            .filter(|d| !read(&d.key))
            .map(|d| (d.key.as_str(), d.values.as_slice()))
            .collect();
        out.sort_by(|a, b| a.0.cmp(b.0));
        out
    }

    /// What AMReX prints at `Finalize` when some inputs were never read (with
    /// `amrex.verbose` > 0), `None` when all were: `Unused ParmParse Variables:`, then
    /// one `  [TOP]::key(nvals = N)  :: [v1, v2]` line per [`unused`](Self::unused)
    /// definition, then an empty line.
    #[must_use]
    pub fn unused_report(&self) -> Option<String> {
        let unused = self.unused();
        if unused.is_empty() {
            return None;
        }
        let mut s = String::from("Unused ParmParse Variables:\n");
        for (key, values) in unused {
            s.push_str(&format!(
                "  [TOP]::{key}(nvals = {})  :: [{}]\n",
                values.len(),
                values.join(", ")
            ));
        }
        s.push('\n');
        Some(s)
    }

    /// Whether `key` is defined.
    #[must_use]
    pub fn contains(&self, key: &str) -> bool {
        self.last(key).is_some()
    }

    /// The number of values of `key`'s last definition (0 if it has none).
    #[must_use]
    pub fn count_values(&self, key: &str) -> usize {
        self.last(key).map_or(0, |d| d.values.len())
    }

    /// The number of times `key` is defined (AMReX's `countname`).
    #[must_use]
    pub fn count_definitions(&self, key: &str) -> usize {
        self.defs.iter().filter(|d| d.key == key).count()
    }

    /// The first value of `key`'s last definition, which must exist.
    ///
    /// # Errors
    /// [`ParmParseError::Missing`], or [`ParmParseError::WrongType`].
    pub fn get<T: ParmValue>(&self, key: &str) -> Result<T, ParmParseError> {
        self.query(key)?.ok_or_else(|| ParmParseError::Missing {
            key: key.to_owned(),
        })
    }

    /// The first value of `key`'s last definition, `None` if `key` is not defined.
    ///
    /// # Errors
    /// [`ParmParseError::WrongType`] if it is defined but does not parse.
    pub fn query<T: ParmValue>(&self, key: &str) -> Result<Option<T>, ParmParseError> {
        let Some(d) = self.last(key) else {
            return Ok(None);
        };
        parse_at(d, 0).map(Some)
    }

    /// [`ParmParse::query`], with `default` where `key` is not defined.
    ///
    /// # Errors
    /// [`ParmParseError::WrongType`].
    pub fn query_or<T: ParmValue>(&self, key: &str, default: T) -> Result<T, ParmParseError> {
        Ok(self.query(key)?.unwrap_or(default))
    }

    /// Every value of `key`'s last definition, which must exist.
    ///
    /// # Errors
    /// [`ParmParseError::Missing`], or [`ParmParseError::WrongType`].
    pub fn get_arr<T: ParmValue>(&self, key: &str) -> Result<Vec<T>, ParmParseError> {
        self.query_arr(key)?.ok_or_else(|| ParmParseError::Missing {
            key: key.to_owned(),
        })
    }

    /// Every value of `key`'s last definition, `None` if `key` is not defined.
    ///
    /// # Errors
    /// [`ParmParseError::WrongType`].
    pub fn query_arr<T: ParmValue>(&self, key: &str) -> Result<Option<Vec<T>>, ParmParseError> {
        let Some(d) = self.last(key) else {
            return Ok(None);
        };
        (0..d.values.len())
            .map(|i| parse_at(d, i))
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }

    /// Exactly `n` values of `key`'s last definition, `None` if `key` is not defined.
    ///
    /// # Errors
    /// [`ParmParseError::WrongLength`] if it has another number of values, or
    /// [`ParmParseError::WrongType`].
    pub fn query_arr_n<T: ParmValue>(
        &self,
        key: &str,
        n: usize,
    ) -> Result<Option<Vec<T>>, ParmParseError> {
        let Some(d) = self.last(key) else {
            return Ok(None);
        };
        if d.values.len() != n {
            return Err(ParmParseError::WrongLength {
                key: key.to_owned(),
                expected: n,
                found: d.values.len(),
                origin: d.origin.clone(),
            });
        }
        self.query_arr(key)
    }

    /// Exactly `n` values of `key`'s last definition, which must exist.
    ///
    /// # Errors
    /// [`ParmParseError::Missing`], [`ParmParseError::WrongLength`] or
    /// [`ParmParseError::WrongType`].
    pub fn get_arr_n<T: ParmValue>(&self, key: &str, n: usize) -> Result<Vec<T>, ParmParseError> {
        self.query_arr_n(key, n)?
            .ok_or_else(|| ParmParseError::Missing {
                key: key.to_owned(),
            })
    }
}

/// A prefixed view of a [`ParmParse`] table (AMReX's `ParmParse pp("prefix")`): every
/// query reads `prefix.key`.
#[derive(Clone, Debug)]
pub struct Prefixed<'a> {
    table: &'a ParmParse,
    prefix: String,
}

impl Prefixed<'_> {
    /// The full key this view reads for `key`.
    #[must_use]
    pub fn full_key(&self, key: &str) -> String {
        if self.prefix.is_empty() {
            key.to_owned()
        } else {
            format!("{}.{key}", self.prefix)
        }
    }

    /// [`ParmParse::contains`] for `prefix.key`.
    #[must_use]
    pub fn contains(&self, key: &str) -> bool {
        self.table.contains(&self.full_key(key))
    }

    /// [`ParmParse::get`] for `prefix.key`.
    ///
    /// # Errors
    /// As [`ParmParse::get`].
    pub fn get<T: ParmValue>(&self, key: &str) -> Result<T, ParmParseError> {
        self.table.get(&self.full_key(key))
    }

    /// [`ParmParse::query`] for `prefix.key`.
    ///
    /// # Errors
    /// As [`ParmParse::query`].
    pub fn query<T: ParmValue>(&self, key: &str) -> Result<Option<T>, ParmParseError> {
        self.table.query(&self.full_key(key))
    }

    /// [`ParmParse::query_or`] for `prefix.key`.
    ///
    /// # Errors
    /// As [`ParmParse::query_or`].
    pub fn query_or<T: ParmValue>(&self, key: &str, default: T) -> Result<T, ParmParseError> {
        self.table.query_or(&self.full_key(key), default)
    }

    /// [`ParmParse::get_arr`] for `prefix.key`.
    ///
    /// # Errors
    /// As [`ParmParse::get_arr`].
    pub fn get_arr<T: ParmValue>(&self, key: &str) -> Result<Vec<T>, ParmParseError> {
        self.table.get_arr(&self.full_key(key))
    }

    /// [`ParmParse::query_arr`] for `prefix.key`.
    ///
    /// # Errors
    /// As [`ParmParse::query_arr`].
    pub fn query_arr<T: ParmValue>(&self, key: &str) -> Result<Option<Vec<T>>, ParmParseError> {
        self.table.query_arr(&self.full_key(key))
    }

    /// [`ParmParse::query_arr_n`] for `prefix.key`.
    ///
    /// # Errors
    /// As [`ParmParse::query_arr_n`].
    pub fn query_arr_n<T: ParmValue>(
        &self,
        key: &str,
        n: usize,
    ) -> Result<Option<Vec<T>>, ParmParseError> {
        self.table.query_arr_n(&self.full_key(key), n)
    }

    /// [`ParmParse::get_arr_n`] for `prefix.key`.
    ///
    /// # Errors
    /// As [`ParmParse::get_arr_n`].
    pub fn get_arr_n<T: ParmValue>(&self, key: &str, n: usize) -> Result<Vec<T>, ParmParseError> {
        self.table.get_arr_n(&self.full_key(key), n)
    }
}

fn parse_at<T: ParmValue>(d: &Definition, index: usize) -> Result<T, ParmParseError> {
    let value = &d.values[index];
    T::parse_value(value).ok_or_else(|| ParmParseError::WrongType {
        key: d.key.clone(),
        index,
        value: value.clone(),
        expected: T::KIND,
        origin: d.origin.clone(),
    })
}

#[derive(Debug, PartialEq)]
enum Token {
    Word(String),
    Quoted(String),
    Equals,
}

/// Splits a line into words, quoted strings and `=`, dropping a `#` comment.
fn tokens(line: &str, origin: &Origin) -> Result<Vec<Token>, ParmParseError> {
    let malformed = |reason| ParmParseError::Malformed {
        origin: origin.clone(),
        text: line.trim().to_owned(),
        reason,
    };
    let mut out = Vec::new();
    let mut chars = line.chars().peekable();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut Vec<Token>| {
        if !word.is_empty() {
            out.push(Token::Word(core::mem::take(word)));
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '#' => break,
            '=' => {
                flush(&mut word, &mut out);
                out.push(Token::Equals);
            }
            '"' => {
                if !word.is_empty() {
                    return Err(malformed("a quote inside a word"));
                }
                let mut s = String::new();
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some(ch) => s.push(ch),
                        None => return Err(malformed("an unterminated quoted string")),
                    }
                }
                out.push(Token::Quoted(s));
            }
            c if c.is_whitespace() => flush(&mut word, &mut out),
            c => word.push(c),
        }
    }
    flush(&mut word, &mut out);
    Ok(out)
}

/// Parses one line's definitions into `out`.
fn parse_line(
    line: &str,
    origin: &Origin,
    out: &mut Vec<Definition>,
) -> Result<(), ParmParseError> {
    let malformed = |reason| ParmParseError::Malformed {
        origin: origin.clone(),
        text: line.trim().to_owned(),
        reason,
    };
    let toks = tokens(line, origin)?;
    let mut i = 0;
    while i < toks.len() {
        let key = match &toks[i] {
            Token::Word(w) => w.clone(),
            Token::Quoted(_) => return Err(malformed("a key must not be quoted")),
            Token::Equals => return Err(malformed("`=` without a key before it")),
        };
        if toks.get(i + 1) != Some(&Token::Equals) {
            return Err(malformed("a key must be followed by `=`"));
        }
        i += 2;
        let mut values = Vec::new();
        while i < toks.len() {
            match &toks[i] {
                // A word followed by `=` is the next definition's key.
                Token::Word(_) if toks.get(i + 1) == Some(&Token::Equals) => break,
                Token::Word(w) | Token::Quoted(w) => values.push(w.clone()),
                Token::Equals => return Err(malformed("`=` where a value belongs")),
            }
            i += 1;
        }
        if values.is_empty() {
            return Err(malformed("a key with no value"));
        }
        out.push(Definition {
            key,
            values,
            origin: origin.clone(),
            used: AtomicBool::new(false),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    const INPUTS: &str = "\
# the tutorial's layout
max_step  = 40
geometry.prob_hi     =  1.0  1.0  0.125
amr.n_cell          = 64 64 8   # cells
amr.max_level       = 2       # maximum level number allowed --
                              # number of levels = max_level + 1
adv.do_subcycle = 1
amr.plot_file  = plt
title = \"run #3 of 4\"
a = 1 b = 2 3
amr.max_level = 1
dt = 1.5d-3
";

    #[test]
    fn unused_keys_are_reported_as_amrex_does() {
        let mut pp =
            ParmParse::from_text("b.x = 1 2\na = t\nb.x = 3\nc = \"p q\"\n", "in").unwrap();
        pp.add("d", &[4]);
        assert!(pp.contains("c"));
        // Never read: `a` and both definitions of `b.x`, sorted by key; `c` was read
        // (`contains` counts), `d` was added.
        let unused = pp.unused();
        assert_eq!(unused.len(), 3);
        assert_eq!(
            pp.unused_report().unwrap(),
            "Unused ParmParse Variables:\n  [TOP]::a(nvals = 1)  :: [t]\n  [TOP]::b.x(nvals = 2)  :: [1, 2]\n  [TOP]::b.x(nvals = 1)  :: [3]\n\n"
        );
        let _: Option<i32> = pp.prefixed("b").query("x").unwrap();
        let _: Option<bool> = pp.query("a").unwrap();
        assert_eq!(pp.unused_report(), None);
        // A clone carries what was read so far.
        assert!(pp.clone().unused().is_empty());
    }

    #[test]
    fn reads_the_tutorial_layout() {
        let pp = ParmParse::from_text(INPUTS, "inputs").unwrap();
        assert_eq!(pp.get::<i32>("max_step").unwrap(), 40);
        assert_eq!(
            pp.get_arr::<f64>("geometry.prob_hi").unwrap(),
            vec![1.0, 1.0, 0.125]
        );
        assert_eq!(
            pp.get_arr_n::<i32>("amr.n_cell", 3).unwrap(),
            vec![64, 64, 8]
        );
        // The later definition wins.
        assert_eq!(pp.get::<i32>("amr.max_level").unwrap(), 1);
        assert_eq!(pp.count_definitions("amr.max_level"), 2);
        assert!(pp.get::<bool>("adv.do_subcycle").unwrap());
        assert_eq!(pp.get::<String>("amr.plot_file").unwrap(), "plt");
        assert_eq!(pp.get::<String>("title").unwrap(), "run #3 of 4");
        assert_eq!(pp.get::<i32>("a").unwrap(), 1);
        assert_eq!(pp.get_arr::<i32>("b").unwrap(), vec![2, 3]);
        assert_eq!(pp.get::<f64>("dt").unwrap(), 1.5e-3);
        assert_eq!(pp.count_values("geometry.prob_hi"), 3);
        assert_eq!(pp.keys()[0], "max_step");
    }

    #[test]
    fn prefixes_defaults_and_missing_keys() {
        let pp = ParmParse::from_text(INPUTS, "inputs").unwrap();
        let amr = pp.prefixed("amr");
        assert_eq!(amr.full_key("n_cell"), "amr.n_cell");
        assert_eq!(amr.get::<i32>("max_level").unwrap(), 1);
        assert_eq!(amr.query::<i32>("regrid_int").unwrap(), None);
        assert_eq!(amr.query_or("regrid_int", 2).unwrap(), 2);
        assert_eq!(amr.query_or("max_level", 7).unwrap(), 1);
        assert!(amr.contains("plot_file") && !amr.contains("chk_int"));
        assert_eq!(
            amr.get::<i32>("chk_int"),
            Err(ParmParseError::Missing {
                key: "amr.chk_int".into()
            })
        );
        let e = amr.get_arr::<i32>("nope").unwrap_err();
        assert_eq!(e.to_string(), "required input `amr.nope` is not given");
    }

    #[test]
    fn wrong_types_and_lengths_name_key_file_and_line() {
        let pp = ParmParse::from_text(INPUTS, "inputs").unwrap();
        let e = pp.get::<i32>("geometry.prob_hi").unwrap_err();
        assert_eq!(
            e,
            ParmParseError::WrongType {
                key: "geometry.prob_hi".into(),
                index: 0,
                value: "1.0".into(),
                expected: "integer",
                origin: Origin {
                    source: "inputs".into(),
                    line: 3
                },
            }
        );
        assert_eq!(
            e.to_string(),
            "inputs:3: input `geometry.prob_hi` value 0 is `1.0`, which is not an integer"
        );
        let e = pp.get::<bool>("amr.plot_file").unwrap_err();
        assert!(e.to_string().contains("not a boolean"), "{e}");
        let e = pp.get_arr_n::<i32>("amr.n_cell", 2).unwrap_err();
        assert_eq!(
            e.to_string(),
            "inputs:4: input `amr.n_cell` has 3 value(s); 2 are needed"
        );
        // An array with one bad element says which.
        let pp = ParmParse::from_text("x = 1 2 three", "f").unwrap();
        assert!(matches!(
            pp.get_arr::<i64>("x"),
            Err(ParmParseError::WrongType { index: 2, .. })
        ));
        assert!(matches!(pp.get::<u32>("x"), Ok(1)));
        let neg = ParmParse::from_text("n = -1", "f").unwrap();
        assert!(matches!(
            neg.get::<usize>("n"),
            Err(ParmParseError::WrongType { .. })
        ));
    }

    #[test]
    fn booleans_as_amrex_reads_them() {
        let pp = ParmParse::from_text("a = true\nb = F\nc = 0\nd = 2\ne = yes", "f").unwrap();
        assert!(pp.get::<bool>("a").unwrap());
        assert!(!pp.get::<bool>("b").unwrap());
        assert!(!pp.get::<bool>("c").unwrap());
        assert!(pp.get::<bool>("d").unwrap());
        assert!(pp.get::<bool>("e").is_err());
    }

    #[test]
    fn malformed_lines_are_errors_with_their_line() {
        for (text, reason) in [
            ("ok = 1\nmax_step 40", "a key must be followed by `=`"),
            ("ok = 1\n= 40", "`=` without a key before it"),
            ("ok = 1\nkey =", "a key with no value"),
            ("ok = 1\nkey = \"open", "an unterminated quoted string"),
            ("ok = 1\nkey = = 2", "`=` where a value belongs"),
            ("ok = 1\nkey = 1 = 2", "a key with no value"),
            ("ok = 1\n\"key\" = 2", "a key must not be quoted"),
            ("ok = 1\nkey = ab\"c\"", "a quote inside a word"),
        ] {
            let e = ParmParse::from_text(text, "inputs").unwrap_err();
            match &e {
                ParmParseError::Malformed {
                    origin, reason: r, ..
                } => {
                    assert_eq!((origin.line, *r), (2, reason), "{text:?}");
                }
                other => panic!("{text:?}: {other:?}"),
            }
            assert!(
                e.to_string().starts_with("inputs:2: malformed inputs line"),
                "{e}"
            );
        }
        // A bad line adds nothing to an existing table.
        let mut pp = ParmParse::from_text("a = 1", "f").unwrap();
        assert!(pp.read_text("b = 2\nc", "g").is_err());
        assert!(!pp.contains("b"));
    }

    #[test]
    fn command_line_overrides_the_file() {
        let mut pp = ParmParse::from_text(INPUTS, "inputs").unwrap();
        pp.read_command_line(&[
            "amr.max_level=0",
            "amr.n_cell",
            "=",
            "32",
            "32",
            "4",
            "name=\"a b\"",
            "geometry.prob_hi=1 1 0.125",
        ])
        .unwrap();
        assert_eq!(pp.get::<i32>("amr.max_level").unwrap(), 0);
        assert_eq!(pp.get_arr::<i32>("amr.n_cell").unwrap(), vec![32, 32, 4]);
        assert_eq!(pp.get::<String>("name").unwrap(), "a b");
        // One argument with spaces is several values, as AMReX joins its arguments.
        assert_eq!(
            pp.get_arr::<f64>("geometry.prob_hi").unwrap(),
            vec![1.0, 1.0, 0.125]
        );
        let e = pp.read_command_line(&["amr.max_level"]).unwrap_err();
        assert!(
            e.to_string().starts_with("command line:1: malformed"),
            "{e}"
        );
        pp.add("adv.phierr", &[1.01, 1.1]);
        assert_eq!(pp.get_arr::<f64>("adv.phierr").unwrap(), vec![1.01, 1.1]);
    }

    #[cfg(feature = "std")]
    #[test]
    fn from_args_reads_the_file_then_the_overrides() {
        let dir = std::env::temp_dir().join(format!("amrex-parmparse-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("inputs");
        std::fs::write(&path, INPUTS).unwrap();
        let p = path.display().to_string();
        let pp = ParmParse::from_args(&[p.as_str(), "max_step=3"]).unwrap();
        assert_eq!(pp.get::<i32>("max_step").unwrap(), 3);
        assert_eq!(pp.get::<i32>("amr.max_level").unwrap(), 1);
        // Without a file name, the arguments alone.
        let pp = ParmParse::from_args(&["max_step=3"]).unwrap();
        assert_eq!(pp.keys(), vec!["max_step"]);
        let missing = dir.join("absent");
        let e = ParmParse::from_args(&[missing.display().to_string()]).unwrap_err();
        assert!(matches!(e, ParmParseError::Io { .. }), "{e:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
