//! Re-indentation: replacement lines shifted to sit where the matched
//! lines sit.

use std::borrow::Cow;

/// How to shift the indentation of replacement lines so they sit where the
/// matched lines sit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reindent {
    /// Leave lines as written.
    Keep,
    /// Replace the leading-whitespace prefix `from` with `to`.
    Swap {
        /// The prefix the replacement was written with.
        from: String,
        /// The prefix the file uses there.
        to: String,
    },
    /// Shift by `delta` columns (a tab counts `tab` columns) and write the
    /// result with tabs (`use_tabs`) or spaces.
    Columns {
        /// Columns to add (negative: remove).
        delta: isize,
        /// Columns a tab stands for.
        tab: usize,
        /// Write indentation with tabs.
        use_tabs: bool,
    },
    /// Scale indentation by `num / den` (tabs count 4 columns): a model that
    /// wrote 2-space indents for a 4-space file, or the reverse.
    Scale {
        /// Multiplier.
        num: usize,
        /// Divisor.
        den: usize,
        /// Write indentation with tabs.
        use_tabs: bool,
    },
}

pub(super) fn leading_ws(line: &str) -> &str {
    &line[..line.len() - crate::text::trim_start(line).len()]
}

pub(super) fn common_prefix<'s>(items: impl Iterator<Item = &'s str>) -> Option<&'s str> {
    let mut prefix: Option<&str> = None;
    for item in items {
        prefix = Some(match prefix {
            None => item,
            Some(p) => {
                let len = p.bytes().zip(item.bytes()).take_while(|(a, b)| a == b).count();
                &p[..len]
            }
        });
    }
    prefix
}

pub(super) fn columns(ws: &str, tab: usize) -> usize {
    ws.chars().fold(0, |col, c| if c == '\t' { col + tab - col % tab } else { col + 1 })
}

impl Reindent {
    /// Infer the shift from pairs of (block line as written, file line it
    /// matched). Blank lines are ignored.
    pub fn infer<'s>(pairs: impl IntoIterator<Item = (&'s str, &'s str)>) -> Reindent {
        let pairs: Vec<(&str, &str)> = pairs
            .into_iter()
            .filter(|(a, b)| !a.trim().is_empty() && !b.trim().is_empty())
            .map(|(a, b)| (leading_ws(a), leading_ws(b)))
            .collect();
        if pairs.iter().all(|(a, b)| a == b) {
            return Reindent::Keep;
        }
        let from = common_prefix(pairs.iter().map(|p| p.0)).unwrap_or("");
        let to = common_prefix(pairs.iter().map(|p| p.1)).unwrap_or("");
        if pairs.iter().all(|(a, b)| a[from.len()..] == b[to.len()..]) {
            return Reindent::Swap { from: from.to_string(), to: to.to_string() };
        }
        let use_tabs = pairs.iter().any(|(_, b)| b.contains('\t'));
        for tab in [4, 8, 2] {
            let delta = columns(pairs[0].1, tab) as isize - columns(pairs[0].0, tab) as isize;
            if pairs.iter().all(|(a, b)| columns(b, tab) as isize - columns(a, tab) as isize == delta) {
                return Reindent::Columns { delta, tab, use_tabs };
            }
        }
        if let Some(scale) = Self::scale(&pairs, use_tabs) {
            return scale;
        }
        let (a, b) = pairs[0];
        Reindent::Swap { from: a.to_string(), to: b.to_string() }
    }

    /// The one ratio of indentation columns that maps every written prefix
    /// to the file's, if there is one.
    fn scale(pairs: &[(&str, &str)], use_tabs: bool) -> Option<Reindent> {
        let cols: Vec<(usize, usize)> = pairs.iter().map(|(a, b)| (columns(a, 4), columns(b, 4))).collect();
        let &(a, b) = cols.iter().find(|(a, _)| *a > 0)?;
        let g = gcd(a, b).max(1);
        let (num, den) = (b / g, a / g);
        (num > 0 && cols.iter().all(|&(a, b)| a * num == b * den)).then_some(Reindent::Scale { num, den, use_tabs })
    }

    /// `line` re-indented.
    pub fn apply(&self, line: &str) -> String {
        self.reindented(line).into_owned()
    }

    /// `line` re-indented, borrowed where it stays as written (every line
    /// of an exact match): a reply of thousands of blocks copies none.
    pub fn reindented<'a>(&self, line: &'a str) -> Cow<'a, str> {
        // Before the indentation is measured: most lines are kept.
        if let Reindent::Keep = self {
            return Cow::Borrowed(line);
        }
        let ws = leading_ws(line);
        let rest = &line[ws.len()..];
        match self {
            Reindent::Keep => Cow::Borrowed(line),
            // A blank line is kept as it is.
            _ if rest.is_empty() => Cow::Borrowed(line),
            Reindent::Swap { from, to } => match ws.strip_prefix(from.as_str()) {
                Some(tail) => Cow::Owned(format!("{to}{tail}{rest}")),
                None => Cow::Borrowed(line),
            },
            Reindent::Columns { delta, tab, use_tabs } => {
                let col = (columns(ws, *tab) as isize + delta).max(0) as usize;
                Cow::Owned(format!("{}{rest}", indent(col, *tab, *use_tabs)))
            }
            Reindent::Scale { num, den, use_tabs } => {
                Cow::Owned(format!("{}{rest}", indent(columns(ws, 4) * num / den, 4, *use_tabs)))
            }
        }
    }
}

/// Indentation `col` columns wide, with tabs of `tab` columns or spaces.
fn indent(col: usize, tab: usize, use_tabs: bool) -> String {
    if use_tabs { format!("{}{}", "\t".repeat(col / tab), " ".repeat(col % tab)) } else { " ".repeat(col) }
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}
