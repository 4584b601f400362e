//! Token-sized chunks on paragraph/line/word boundaries, with line ranges and
//! the Markdown heading breadcrumb they sit under.

use std::path::PathBuf;

use super::Document;

/// A piece of a document, small enough to encode alone.
#[derive(Clone, Debug, PartialEq)]
pub struct Chunk {
    pub path: PathBuf,
    /// 1-based inclusive line range in the file.
    pub lines: (usize, usize),
    /// Headings above the chunk, outermost first.
    pub heading: Vec<String>,
    /// What is encoded: `path › heading` header line, then the body.
    pub text: String,
}

/// Splits `doc` into chunks of at most about `max_tokens` tokens as counted by
/// `count` (the LLM's own tokenizer). Paragraphs are packed together; a
/// paragraph too long on its own is split between lines, a line between words.
pub fn chunk_document(
    doc: &Document,
    max_tokens: usize,
    count: &dyn Fn(&str) -> usize,
) -> Vec<Chunk> {
    let mut out = Vec::new();
    let mut heading: Vec<(usize, String)> = Vec::new();
    let mut cur: Option<Building> = None;
    for (i, line) in doc.text.lines().enumerate() {
        let n = i + 1;
        if let Some((level, title)) = markdown_heading(line) {
            flush(&mut cur, doc, &mut out);
            heading.retain(|(l, _)| *l < level);
            heading.push((level, title));
        }
        for piece in split_long_line(line, max_tokens, count) {
            let crumbs: Vec<String> = heading.iter().map(|(_, t)| t.clone()).collect();
            let b = cur.get_or_insert_with(|| Building::new(n, crumbs));
            let candidate = format!("{}{}\n", b.body, piece);
            if b.has_content() && count(&candidate) > max_tokens {
                flush(&mut cur, doc, &mut out);
                let crumbs: Vec<String> = heading.iter().map(|(_, t)| t.clone()).collect();
                cur.insert(Building::new(n, crumbs)).push(&piece, n);
            } else {
                b.push(&piece, n);
            }
        }
        // Prefer to break between paragraphs once a chunk is reasonably full.
        if line.trim().is_empty() {
            if let Some(b) = &cur {
                if count(&b.body) * 4 >= max_tokens * 3 {
                    flush(&mut cur, doc, &mut out);
                }
            }
        }
    }
    flush(&mut cur, doc, &mut out);
    out
}

struct Building {
    first: usize,
    last: usize,
    body: String,
    heading: Vec<String>,
}

impl Building {
    fn new(first: usize, heading: Vec<String>) -> Self {
        Self {
            first,
            last: first,
            body: String::new(),
            heading,
        }
    }
    fn has_content(&self) -> bool {
        !self.body.trim().is_empty()
    }
    fn push(&mut self, piece: &str, line: usize) {
        if self.body.is_empty() && piece.trim().is_empty() {
            self.first = line + 1; // leading blank lines are not part of the chunk
            return;
        }
        self.body.push_str(piece);
        self.body.push('\n');
        self.last = line;
    }
}

fn flush(cur: &mut Option<Building>, doc: &Document, out: &mut Vec<Chunk>) {
    if let Some(b) = cur.take().filter(Building::has_content) {
        let mut header = doc.path.display().to_string();
        for h in &b.heading {
            header.push_str(" › ");
            header.push_str(h);
        }
        out.push(Chunk {
            path: doc.path.clone(),
            lines: (b.first, b.last),
            heading: b.heading,
            text: format!("{header}\n{}", b.body.trim_end()),
        });
    }
}

fn markdown_heading(line: &str) -> Option<(usize, String)> {
    let level = line.chars().take_while(|&c| c == '#').count();
    let rest = line.get(level..)?;
    (1..=6).contains(&level).then_some(())?;
    rest.starts_with(' ')
        .then(|| (level, rest.trim().to_string()))
}

/// A line that alone exceeds the budget is cut between words.
fn split_long_line(line: &str, max_tokens: usize, count: &dyn Fn(&str) -> usize) -> Vec<String> {
    if count(line) <= max_tokens {
        return vec![line.to_string()];
    }
    let mut parts = vec![String::new()];
    for word in line.split_inclusive(' ') {
        let last = parts
            .last_mut()
            .map(|p| format!("{p}{word}"))
            .unwrap_or_default();
        if count(&last) > max_tokens && parts.last().is_some_and(|p| !p.is_empty()) {
            parts.push(word.to_string());
        } else if let Some(p) = parts.last_mut() {
            *p = last;
        }
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> usize {
        s.split_whitespace().count()
    }

    fn doc(text: &str) -> Document {
        Document {
            path: "notes/a.md".into(),
            text: text.into(),
        }
    }

    #[test]
    fn packs_paragraphs_with_line_ranges_and_breadcrumbs() {
        let text = "# Guide\n\nintro words here\n\n## Setup\n\none two three four\nfive six\n\nseven eight nine ten eleven\n";
        let chunks = chunk_document(&doc(text), 8, &words);
        assert_eq!(chunks[0].lines, (1, 4));
        assert_eq!(chunks[0].heading, ["Guide"]);
        assert!(chunks[0].text.starts_with("notes/a.md › Guide\n# Guide"));
        let setup: Vec<_> = chunks
            .iter()
            .filter(|c| c.heading == ["Guide", "Setup"])
            .collect();
        assert!(setup.len() >= 2);
        assert!(setup.iter().all(|c| words(&c.text) <= 8 + 5));
        assert_eq!(setup[0].lines.0, 5);
        assert_eq!(chunks.last().map(|c| c.lines.1), Some(10));
    }

    #[test]
    fn long_lines_split_between_words_only() {
        let line = (0..50)
            .map(|i| format!("w{i}"))
            .collect::<Vec<_>>()
            .join(" ");
        let chunks = chunk_document(&doc(&line), 10, &words);
        assert!(chunks.len() >= 5);
        let rejoined: Vec<String> = chunks
            .iter()
            .flat_map(|c| {
                c.text
                    .lines()
                    .skip(1)
                    .flat_map(|l| l.split_whitespace().map(String::from))
                    .collect::<Vec<_>>()
            })
            .collect();
        assert_eq!(rejoined.len(), 50);
        assert!(rejoined.iter().all(|w| w.starts_with('w')));
    }
}
