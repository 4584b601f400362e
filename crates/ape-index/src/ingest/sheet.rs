//! Tables to text: spreadsheets (XLSX, ODS, by calamine) and delimited
//! files (CSV, TSV, by csv). Each row becomes one line, `a | b | c`; the
//! first non-empty row of each table is its header, written as a Markdown
//! heading so that every chunk of the table starts with it (the chunk
//! header repeats the headings above a chunk). Each row is a section, so a
//! chunk knows which sheet rows it holds.
//!
//! A table of [`DIGEST_MIN_ROWS`] rows or more ends with a digest computed
//! from every row ([`digest`]): its row count, rows per value of each
//! column that groups them, each numeric column's range and total, and
//! each group's labels. A small model cannot count 150 rows it reads
//! (asked "how many work in Radio?" over every row of such a table, the
//! 0.5B and 1.5B models both said 3 of 7), but it can copy a number;
//! retrieval can find the digest for such questions, and `--file` reads it
//! with the rows.

use std::io::Cursor;
use std::sync::Arc;

use calamine::{Data, Reader};

use super::container::Archive;
use super::extracted::{Builder, Extracted};
use super::place::Unit;

/// Longest header kept in a chunk's heading (every chunk repeats it).
const MAX_HEADER_CHARS: usize = 400;

/// Tables shorter than this are read whole by any question (a few chunks):
/// no digest.
pub const DIGEST_MIN_ROWS: usize = 20;

/// A column groups rows when it has at most this many distinct values
/// (and each value holds two rows on average).
const DIGEST_MAX_GROUPS: usize = 30;

/// Groups larger than this are counted, not listed.
const DIGEST_MAX_LISTED: usize = 60;

/// Text of an `.xlsx`/`.xlsm`/`.ods`/`.xls` workbook, sheet by sheet.
pub fn workbook(bytes: &[u8], what: &'static str) -> Result<Extracted, String> {
    // calamine reads the zip itself (through zip, which stops every entry
    // at its declared size): the declared sizes are checked, and every
    // entry inflated once, first. (An `.xls` is no zip: a compound file,
    // bounded by the file size limit.)
    if what != "XLS" {
        Archive::open(bytes, what)?.verify_all()?;
    }
    let mut book = calamine::open_workbook_auto_from_rs(Cursor::new(bytes))
        .map_err(|e| unreadable(what, &e.to_string()))?;
    let mut b = Builder::default();
    for (i, name) in book.sheet_names().into_iter().enumerate() {
        let range = match book.worksheet_range(&name) {
            Ok(r) => r,
            Err(e) => return Err(unreadable(what, &e.to_string())),
        };
        let first_row = range.start().map_or(1, |(r, _)| r as usize + 1);
        let rows = range.rows().enumerate().map(|(k, cells)| {
            let cells: Vec<String> = cells.iter().map(cell).collect();
            (first_row + k, cells)
        });
        let sheet: Arc<str> = Arc::from(name.as_str());
        table(&mut b, rows, i + 1, Some(sheet));
    }
    b.finish_nonempty(what)
}

/// Text of a delimited file (`delimiter` `,` or `\t`), already decoded.
pub fn delimited(text: &str, delimiter: u8, what: &'static str) -> Result<Extracted, String> {
    let mut r = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut rows = Vec::new();
    for (k, rec) in r.records().enumerate() {
        let rec = rec.map_err(|e| unreadable(what, &e.to_string()))?;
        // The line a spreadsheet would show this record on: its position,
        // past the blank lines csv skips before it.
        let row = rec.position().map_or(k + 1, |p| {
            let blank = text
                .get(p.byte() as usize..)
                .map_or(0, |t| t.len() - t.trim_start_matches('\n').len());
            p.line() as usize + blank
        });
        rows.push((row, rec.iter().map(str::to_string).collect::<Vec<_>>()));
    }
    let mut b = Builder::default();
    table(&mut b, rows.into_iter(), 1, None);
    b.finish_nonempty(what)
}

/// Writes one table: an optional `# sheet` heading, the header row as a
/// heading, then the data rows, empty rows left out.
fn table(
    b: &mut Builder,
    rows: impl Iterator<Item = (usize, Vec<String>)>,
    number: usize,
    sheet: Option<Arc<str>>,
) {
    let level = if sheet.is_some() { 2 } else { 1 };
    let mut header: Option<Vec<String>> = None;
    let mut data: Vec<Vec<String>> = Vec::new();
    for (row, cells) in rows {
        let line = row_text(&cells);
        if line.is_empty() {
            continue;
        }
        b.section(Unit::Sheet, number, sheet.clone(), Some(row));
        if header.is_none() {
            header = Some(cells);
            if let Some(name) = &sheet {
                b.line(&format!("# {name}"));
            }
            let mut header = line;
            if header.chars().count() > MAX_HEADER_CHARS {
                header = header.chars().take(MAX_HEADER_CHARS).collect::<String>() + "…";
            }
            b.line(&format!("{} {header}", "#".repeat(level)));
        } else {
            b.line(&line);
            data.push(cells);
        }
    }
    b.blank();
    if let (Some(header), true) = (header, data.len() >= DIGEST_MIN_ROWS) {
        b.section(Unit::Sheet, number, sheet, None);
        b.line(&format!("{} Summary of the table", "#".repeat(level)));
        for line in digest(&header, &data) {
            b.line(&line);
        }
        b.blank();
    }
}

/// What a table's rows add up to, one line per fact, in words a small model
/// can copy: its size; for each text column that groups rows (few distinct
/// values) the rows per value, largest first; each numeric column's range
/// and total; then each group's labels (the first column whose values are
/// all distinct). Counts come first and short, so that a counting question
/// retrieves them, not a long list.
fn digest(header: &[String], rows: &[Vec<String>]) -> Vec<String> {
    let name = |i: usize| match header.get(i).map(|h| h.trim()) {
        Some(h) if !h.is_empty() => h.to_string(),
        _ => format!("column {}", i + 1),
    };
    let width = rows.iter().map(Vec::len).max().unwrap_or(0);
    let cell = |r: &Vec<String>, i: usize| r.get(i).map(|c| flat(c)).unwrap_or_default();
    let columns: Vec<Vec<String>> = (0..width)
        .map(|i| rows.iter().map(|r| cell(r, i)).collect())
        .collect();
    let label = columns.iter().position(|c| {
        let mut seen = std::collections::HashSet::new();
        c.iter().all(|v| !v.is_empty() && seen.insert(v.as_str()))
    });
    let mut counts = vec![format!(
        "{} rows in all (the header row not counted), counted from every row.",
        rows.len()
    )];
    let mut lists = Vec::new();
    for (i, col) in columns.iter().enumerate() {
        let filled: Vec<&str> = col
            .iter()
            .map(String::as_str)
            .filter(|v| !v.is_empty())
            .collect();
        if filled.is_empty() || Some(i) == label {
            continue;
        }
        let numbers: Option<Vec<f64>> = filled.iter().map(|v| number(v)).collect();
        let mut groups: Vec<(&str, Vec<usize>)> = Vec::new();
        if numbers.is_none() {
            for (r, v) in col.iter().enumerate().filter(|(_, v)| !v.is_empty()) {
                if let Some(at) = groups.iter().position(|(g, _)| g == v) {
                    groups[at].1.push(r);
                } else if groups.len() < DIGEST_MAX_GROUPS {
                    groups.push((v, vec![r]));
                } else {
                    groups.clear();
                    break;
                }
            }
        }
        if groups.len() > 1 && groups.len() * 2 <= filled.len() {
            groups.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(b.0)));
            let col_name = name(i);
            for (value, members) in &groups {
                let n = members.len();
                let rows = if n == 1 { "row" } else { "rows" };
                counts.push(format!("{value} {col_name}: {n} {rows}."));
                if let (Some(l), true) = (label, n <= DIGEST_MAX_LISTED) {
                    let labels: Vec<&str> =
                        members.iter().map(|&r| columns[l][r].as_str()).collect();
                    lists.push(format!(
                        "{value} {col_name}, the {} of each of its {n} {rows}: {}.",
                        name(l),
                        labels.join(", ")
                    ));
                }
            }
        }
        if let Some(ns) = numbers {
            let (lo, hi) = ns
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
                    (lo.min(x), hi.max(x))
                });
            let total: f64 = ns.iter().sum();
            counts.push(format!(
                "{}: {} numbers from {} to {}, total {}.",
                name(i),
                ns.len(),
                show(lo),
                show(hi),
                show(total)
            ));
        }
    }
    counts.extend(lists);
    counts
}

/// A cell as a number: plain decimals, with thousands separators or a
/// leading currency sign allowed ("1,200", "$3.50", "-4").
fn number(v: &str) -> Option<f64> {
    let t = v
        .trim()
        .trim_start_matches(['$', '€', '£'])
        .replace(',', "");
    (!t.is_empty()
        && t.bytes()
            .all(|c| c.is_ascii_digit() || b"+-.eE".contains(&c)))
    .then(|| t.parse::<f64>().ok())
    .flatten()
    .filter(|x| x.is_finite())
}

/// A number as a person writes it: integers without a decimal point, others
/// to at most 4 decimals.
fn show(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        let s = format!("{x:.4}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// `a | b | c`, cells flattened to one line, trailing empty cells dropped.
fn row_text(cells: &[String]) -> String {
    let end = cells
        .iter()
        .rposition(|c| !c.trim().is_empty())
        .map_or(0, |i| i + 1);
    cells[..end]
        .iter()
        .map(|c| flat(c))
        .collect::<Vec<_>>()
        .join(" | ")
}

/// A cell on one line, runs of whitespace as one space.
fn flat(cell: &str) -> String {
    cell.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn cell(d: &Data) -> String {
    match d {
        Data::DateTime(dt) if dt.is_datetime() => match dt.as_datetime() {
            Some(t) if t.time() == Default::default() => t.date().to_string(),
            Some(t) => format!("{} {}", t.date(), t.time()),
            None => d.to_string(),
        },
        Data::Error(e) => format!("#{e:?}"),
        other => other.to_string(),
    }
}

fn unreadable(what: &str, e: &str) -> String {
    if e.contains("password") {
        format!("encrypted {what} (password-protected)")
    } else {
        format!("unreadable {what} ({e})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::place::Place;

    #[test]
    fn every_chunk_of_a_table_can_carry_its_header_and_rows() {
        let csv = "name,role,joined\n\nAda,engineer,2021\n\"Lin, Jo\",\"ops\nlead\",2022\n";
        let x = delimited(csv, b',', "CSV").expect("csv");
        assert_eq!(
            x.text,
            "# name | role | joined\nAda | engineer | 2021\nLin, Jo | ops lead | 2022\n\n"
        );
        // Line 3 is record 4 (record 2 was empty).
        assert_eq!(
            Place::of(&x.sections, (2, 3)).expect("place").to_string(),
            "rows 3–4"
        );
        let tsv = delimited("a\tb\n1\t2\n", b'\t', "TSV").expect("tsv");
        assert_eq!(tsv.text, "# a | b\n1 | 2\n\n");
        assert!(delimited("\n\n", b',', "CSV").is_err());
    }

    /// A table of `n` people in departments picked by a generator, as CSV,
    /// and the truth counted here, apart from the digest's code.
    fn staff(n: usize) -> (String, Vec<(String, Vec<String>)>) {
        let depts = ["Radio", "News", "Sport", "Legal", "Finance"];
        let mut x = 17u32;
        let mut csv = String::from("name,department,salary\n");
        let mut truth: Vec<(String, Vec<String>)> =
            depts.iter().map(|d| (d.to_string(), vec![])).collect();
        for i in 0..n {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            let d = ((x >> 16) % 5) as usize;
            let name = format!("Person {i}");
            csv.push_str(&format!("{name},{},\"{},{:03}\"\n", depts[d], 1 + i % 3, i));
            truth[d].1.push(name);
        }
        (csv, truth)
    }

    #[test]
    fn a_long_table_ends_with_counts_labels_and_totals_taken_from_every_row() {
        let (csv, truth) = staff(150);
        let x = delimited(&csv, b',', "CSV").expect("csv");
        let (_, digest) = x
            .text
            .split_once("# Summary of the table\n")
            .expect("a digest after the rows");
        assert!(digest.starts_with("150 rows in all"), "{digest}");
        for (dept, names) in &truth {
            let line = digest
                .lines()
                .find(|l| l.starts_with(&format!("{dept} department: ")))
                .unwrap_or_else(|| panic!("no line for {dept}: {digest}"));
            let n = names.len();
            assert!(line == format!("{dept} department: {n} rows."), "{line}");
            let list = format!(
                "{dept} department, the name of each of its {n} rows: {}.",
                names.join(", ")
            );
            assert!(digest.lines().any(|l| l == list), "{list}\n{digest}");
        }
        // Salaries "1,000" … "3,149": 150 numbers, their total summed here.
        let total: usize = (0..150).map(|i| (1 + i % 3) * 1000 + i).sum();
        assert!(
            digest.contains(&format!(
                "salary: 150 numbers from 1000 to 3149, total {total}."
            )),
            "{digest}"
        );
        // The digest is its own unit, after the rows: no row range.
        let line = x
            .text
            .lines()
            .position(|l| l.starts_with("# Summary"))
            .expect("line")
            + 1;
        let place = Place::of(&x.sections, (line, line)).expect("place");
        assert_eq!(place.rows, None);
        // Short tables have none.
        let (short, _) = staff(DIGEST_MIN_ROWS - 1);
        assert!(!delimited(&short, b',', "CSV")
            .expect("csv")
            .text
            .contains("Summary"));
    }
}
