//! The text a format reader returns: the text, where its units (pages,
//! slides, sheet rows, chapters, messages, cells) start, and a note. Its
//! own module so that the readers and the dispatcher that calls them
//! ([`super::extract`]) both depend on it and not on each other.

use std::sync::Arc;

use super::place::{Section, Unit};

/// Extracted text and where the file's units (pages, slides, sheet rows,
/// chapters, messages, cells) start in it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Extracted {
    pub text: String,
    /// Sorted by line; empty for formats without units.
    pub sections: Vec<Section>,
    /// Something worth telling about how the text was read (another
    /// encoding, characters replaced), for the index report.
    pub note: Option<String>,
}

/// Builds extracted text block by block, counting lines, so that sections
/// start where their text does.
#[derive(Default)]
pub struct Builder {
    text: String,
    lines: usize,
    sections: Vec<Section>,
}

impl Builder {
    /// A paragraph (trimmed; nothing if empty), then a blank line.
    pub fn para(&mut self, s: &str) {
        let s = s.trim_matches('\n').trim_end();
        if s.trim().is_empty() {
            return;
        }
        self.line(s);
        self.blank();
    }

    /// One line (or several, if `s` holds newlines).
    pub fn line(&mut self, s: &str) {
        self.text.push_str(s);
        self.text.push('\n');
        self.lines += s.split('\n').count();
    }

    /// An empty line: a paragraph break for the chunker.
    pub fn blank(&mut self) {
        self.text.push('\n');
        self.lines += 1;
    }

    /// A unit starts at the next line.
    pub fn section(
        &mut self,
        unit: Unit,
        number: usize,
        name: Option<Arc<str>>,
        row: Option<usize>,
    ) {
        self.sections.push(Section {
            line: self.lines + 1,
            unit,
            number,
            name,
            row,
        });
    }

    /// Whether no text has been added.
    pub fn is_empty(&self) -> bool {
        self.text.trim().is_empty()
    }

    /// The text, or `Err` naming `what` when there is none.
    pub fn finish_nonempty(self, what: &str) -> Result<Extracted, String> {
        if self.text.trim().is_empty() {
            return Err(format!("{what} has no text"));
        }
        Ok(Extracted {
            text: self.text,
            sections: self.sections,
            note: None,
        })
    }
}
