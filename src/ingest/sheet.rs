//! Tables to text: spreadsheets (XLSX, ODS, by calamine) and delimited
//! files (CSV, TSV, by csv). Each row becomes one line, `a | b | c`; the
//! first non-empty row of each table is its header, written as a Markdown
//! heading so that every chunk of the table starts with it (the chunk
//! header repeats the headings above a chunk). Each row is a section, so a
//! chunk knows which sheet rows it holds.

use std::io::Cursor;
use std::sync::Arc;

use calamine::{Data, Reader};

use super::container::Archive;
use super::extract::{Builder, Extracted};
use super::place::Unit;

/// Longest header kept in a chunk's heading (every chunk repeats it).
const MAX_HEADER_CHARS: usize = 400;

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
    let mut header_done = false;
    for (row, cells) in rows {
        let line = row_text(&cells);
        if line.is_empty() {
            continue;
        }
        b.section(Unit::Sheet, number, sheet.clone(), Some(row));
        if !header_done {
            header_done = true;
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
        }
    }
    b.blank();
}

/// `a | b | c`, cells flattened to one line, trailing empty cells dropped.
fn row_text(cells: &[String]) -> String {
    let end = cells
        .iter()
        .rposition(|c| !c.trim().is_empty())
        .map_or(0, |i| i + 1);
    cells[..end]
        .iter()
        .map(|c| c.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join(" | ")
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
}
