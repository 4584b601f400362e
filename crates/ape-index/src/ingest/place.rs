//! Where a chunk sits in its file, in the units a person navigates by: a
//! PDF page, a slide, a sheet and its rows, a chapter, a mail message, a
//! notebook cell. Line ranges are in the extracted text; for most formats
//! other than plain text they do not exist in the file, so a citation
//! needs one of these to be useful.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// The unit a format is navigated by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    Page,
    Slide,
    /// A spreadsheet sheet, or the one table of a CSV/TSV file (no name).
    Sheet,
    Chapter,
    Message,
    Cell,
}

/// The start of a unit in the extracted text: every line from `line` up to
/// the next section's belongs to it.
#[derive(Clone, Debug, PartialEq)]
pub struct Section {
    /// 1-based line of the extracted text where this section starts.
    pub line: usize,
    pub unit: Unit,
    /// 1-based number of the unit in its file (page 3, slide 2, sheet 1).
    pub number: usize,
    /// Its name where it has one: sheet name, chapter or slide title,
    /// message subject. Shared, because a sheet has a section per row.
    pub name: Option<Arc<str>>,
    /// Table rows only: the sheet's own row number at `line` (1-based, as a
    /// spreadsheet shows it).
    pub row: Option<usize>,
}

/// A chunk's place: the units its first and last line fall in.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Place {
    pub unit: Unit,
    pub first: usize,
    pub last: usize,
    /// The name of unit `first`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Table rows covered, when the chunk lies within one sheet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<(usize, usize)>,
}

impl Place {
    /// The place of lines `first..=last` among `sections` (sorted by line);
    /// `None` when the format has no units or the lines precede them all.
    pub fn of(sections: &[Section], (first, last): (usize, usize)) -> Option<Place> {
        let at = |line: usize| {
            let i = sections.partition_point(|s| s.line <= line);
            i.checked_sub(1).map(|i| &sections[i])
        };
        let a = at(first).or_else(|| sections.first())?;
        let b = at(last).unwrap_or(a);
        let same = a.unit == b.unit && a.number == b.number;
        Some(Place {
            unit: a.unit,
            first: a.number,
            last: b.number.max(a.number),
            name: a.name.as_deref().map(String::from),
            rows: match (same, a.row, b.row) {
                (true, Some(r1), Some(r2)) => Some((r1, r2.max(r1))),
                _ => None,
            },
        })
    }

    /// A PDF page range, as indexes before places were recorded stored it.
    pub fn pages((first, last): (usize, usize)) -> Place {
        Place {
            unit: Unit::Page,
            first,
            last,
            name: None,
            rows: None,
        }
    }

    /// The page range, if this is one (for `--json`'s `pages`).
    pub fn page_range(&self) -> Option<(usize, usize)> {
        (self.unit == Unit::Page).then_some((self.first, self.last))
    }
}

/// "p. 3", "pp. 3–5", "slide 2", "sheet Sales, rows 2–41", "rows 2–41",
/// "chapter 3 “Title”", "message 4 “Subject”", "cells 5–7".
impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let span = |f: &mut fmt::Formatter<'_>, one: &str, many: &str| {
            if self.first == self.last {
                write!(f, "{one} {}", self.first)
            } else {
                write!(f, "{many} {}–{}", self.first, self.last)
            }
        };
        let rows = |f: &mut fmt::Formatter<'_>| match self.rows {
            Some((a, b)) if a == b => write!(f, "row {a}"),
            Some((a, b)) => write!(f, "rows {a}–{b}"),
            None => Ok(()),
        };
        match self.unit {
            Unit::Page if self.first == self.last => write!(f, "p. {}", self.first),
            Unit::Page => write!(f, "pp. {}–{}", self.first, self.last),
            Unit::Slide => span(f, "slide", "slides"),
            Unit::Sheet => match (&self.name, self.first == self.last) {
                (Some(name), true) if self.rows.is_some() => {
                    write!(f, "sheet {name}, ")?;
                    rows(f)
                }
                (Some(name), true) => write!(f, "sheet {name}"),
                (None, true) if self.rows.is_some() => rows(f),
                _ => span(f, "sheet", "sheets"),
            },
            Unit::Chapter | Unit::Message | Unit::Cell => {
                let (one, many) = match self.unit {
                    Unit::Chapter => ("chapter", "chapters"),
                    Unit::Message => ("message", "messages"),
                    _ => ("cell", "cells"),
                };
                span(f, one, many)?;
                match &self.name {
                    Some(name) if self.first == self.last && self.unit != Unit::Cell => {
                        write!(f, " “{name}”")
                    }
                    _ => Ok(()),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(line: usize, unit: Unit, number: usize, name: &str, row: Option<usize>) -> Section {
        Section {
            line,
            unit,
            number,
            name: (!name.is_empty()).then(|| Arc::from(name)),
            row,
        }
    }

    #[test]
    fn lines_map_to_units_rows_and_words() {
        let sheet: Vec<Section> = [
            section(1, Unit::Sheet, 1, "Sales", Some(1)),
            section(2, Unit::Sheet, 1, "Sales", Some(1)),
            section(3, Unit::Sheet, 1, "Sales", Some(3)), // row 2 was empty
            section(4, Unit::Sheet, 1, "Sales", Some(4)),
            section(6, Unit::Sheet, 2, "Costs", Some(1)),
        ]
        .into();
        let p = Place::of(&sheet, (3, 4)).expect("place");
        assert_eq!(p.to_string(), "sheet Sales, rows 3–4");
        assert_eq!(
            Place::of(&sheet, (4, 4)).expect("p").to_string(),
            "sheet Sales, row 4"
        );
        let across = Place::of(&sheet, (4, 7)).expect("place");
        assert_eq!(
            (across.rows, across.to_string()),
            (None, "sheets 1–2".into())
        );

        let pages = [
            section(1, Unit::Page, 1, "", None),
            section(9, Unit::Page, 2, "", None),
        ];
        assert_eq!(Place::of(&pages, (2, 8)).expect("p").to_string(), "p. 1");
        assert_eq!(
            Place::of(&pages, (8, 12)).expect("p").to_string(),
            "pp. 1–2"
        );
        assert_eq!(
            Place::of(&pages, (8, 12)).and_then(|p| p.page_range()),
            Some((1, 2))
        );

        let mail = [section(1, Unit::Message, 1, "Hello", None)];
        assert_eq!(
            Place::of(&mail, (1, 3)).expect("p").to_string(),
            "message 1 “Hello”"
        );
        let chapters = [section(3, Unit::Chapter, 1, "Intro", None)];
        // Lines before the first section (a title page) belong to it.
        assert_eq!(
            Place::of(&chapters, (1, 2)).expect("p").to_string(),
            "chapter 1 “Intro”"
        );
        assert_eq!(Place::of(&[], (1, 2)), None);
        let csv = [
            section(1, Unit::Sheet, 1, "", Some(1)),
            section(2, Unit::Sheet, 1, "", Some(2)),
        ];
        assert_eq!(Place::of(&csv, (1, 2)).expect("p").to_string(), "rows 1–2");
    }
}
