//! Jupyter notebooks to text: markdown cells as they are, code cells as
//! fenced blocks in the kernel's language, outputs left out (they are
//! results, often large, and rarely what a question is about).

use serde::Deserialize;

use super::extracted::{Builder, Extracted};
use super::place::Unit;

#[derive(Deserialize)]
struct Notebook {
    cells: Vec<Cell>,
    #[serde(default)]
    metadata: serde_json::Value,
}

#[derive(Deserialize)]
struct Cell {
    cell_type: String,
    #[serde(default)]
    source: Source,
}

/// A cell's source: one string, or a list of lines (nbformat allows both).
#[derive(Deserialize, Default)]
#[serde(untagged)]
enum Source {
    #[default]
    None,
    One(String),
    Lines(Vec<String>),
}

/// Text of an `.ipynb`, one section per cell.
pub fn to_text(text: &str) -> Result<Extracted, String> {
    let nb: Notebook =
        serde_json::from_str(text).map_err(|e| format!("unreadable notebook ({e})"))?;
    let lang = nb
        .metadata
        .pointer("/kernelspec/language")
        .or_else(|| nb.metadata.pointer("/language_info/name"))
        .and_then(|v| v.as_str())
        .unwrap_or("")
        .to_string();
    let mut b = Builder::default();
    for (i, cell) in nb.cells.iter().enumerate() {
        let src = match &cell.source {
            Source::None => String::new(),
            Source::One(s) => s.clone(),
            Source::Lines(l) => l.concat(),
        };
        let src = src.replace("\r\n", "\n");
        if src.trim().is_empty() {
            continue;
        }
        b.section(Unit::Cell, i + 1, None, None);
        match cell.cell_type.as_str() {
            "code" => b.para(&format!("```{lang}\n{}\n```", src.trim_end())),
            _ => b.para(&src),
        }
    }
    b.finish_nonempty("notebook")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::place::Place;

    #[test]
    fn cells_in_order_outputs_left_out() {
        let nb = r##"{"cells": [
            {"cell_type": "markdown", "source": ["# Churn\n", "Monthly churn is 2.1%."]},
            {"cell_type": "code", "source": "df.churn.mean()", "outputs": [{"text": "SECRET"}]}
        ], "metadata": {"kernelspec": {"language": "python"}}, "nbformat": 4}"##;
        let x = to_text(nb).expect("notebook");
        assert_eq!(
            x.text,
            "# Churn\nMonthly churn is 2.1%.\n\n```python\ndf.churn.mean()\n```\n\n"
        );
        let last = x.text.lines().count() - 1;
        assert_eq!(
            Place::of(&x.sections, (last, last)).expect("p").to_string(),
            "cell 2"
        );
        assert!(to_text("{\"cells\": 3}").is_err());
    }
}
