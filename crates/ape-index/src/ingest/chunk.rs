//! Token-sized chunks on paragraph/line/word boundaries, with line ranges and
//! the Markdown heading breadcrumb they sit under. Each line is tokenized
//! once; a chunk's size is the sum of its lines' counts.

use super::place::{Place, Section};

/// A file's extracted text; `path` is relative to the folder.
#[derive(Clone, Debug)]
pub struct Document {
    pub path: String,
    pub text: String,
    /// Where the file's pages, slides, rows… start (sorted by line).
    pub sections: Vec<Section>,
}

/// A piece of a document, small enough to encode alone.
#[derive(Clone, Debug, PartialEq)]
pub struct Chunk {
    pub path: String,
    /// 1-based inclusive line range in the extracted text.
    pub lines: (usize, usize),
    /// Headings above the chunk, outermost first.
    pub heading: Vec<String>,
    /// Its page, slide, sheet rows, chapter… where the format has units.
    pub place: Option<Place>,
    /// What is encoded: a `path › heading` header line, then the body.
    pub text: String,
}

/// Splits `doc` into chunks of about `max_tokens` tokens as counted by
/// `count` (the LLM's own tokenizer). Lines are packed up to the budget,
/// preferring to break at blank lines and headings once a chunk is at least
/// half full; a line longer than the budget is split between words.
pub fn chunk_document(
    doc: &Document,
    max_tokens: usize,
    count: &dyn Fn(&str) -> usize,
) -> Vec<Chunk> {
    let max_tokens = max_tokens.max(16);
    let mut out = Vec::new();
    let mut heading: Vec<(usize, String)> = Vec::new();
    let mut cur = Building::default();
    for (i, line) in doc.text.lines().enumerate() {
        let n = i + 1;
        if let Some((level, title)) = markdown_heading(line) {
            if cur.tokens * 2 >= max_tokens {
                cur.flush(doc, &mut out);
            }
            heading.retain(|(l, _)| *l < level);
            heading.push((level, title));
        }
        if line.trim().is_empty() {
            if cur.tokens * 2 >= max_tokens {
                cur.flush(doc, &mut out);
            } else {
                cur.push("", 0, n, &heading);
            }
            continue;
        }
        for (piece, tokens) in split_long_line(line, max_tokens, count) {
            if cur.tokens + tokens > max_tokens {
                cur.flush(doc, &mut out);
            }
            cur.push(&piece, tokens, n, &heading);
        }
    }
    cur.flush(doc, &mut out);
    out
}

#[derive(Default)]
struct Building {
    first: usize,
    last: usize,
    tokens: usize,
    body: String,
    heading: Vec<String>,
}

impl Building {
    fn push(&mut self, piece: &str, tokens: usize, line: usize, heading: &[(usize, String)]) {
        if self.body.is_empty() {
            if piece.is_empty() {
                return; // leading blank lines are not part of a chunk
            }
            self.first = line;
            self.heading = heading.iter().map(|(_, t)| t.clone()).collect();
        }
        self.body.push_str(piece);
        self.body.push('\n');
        self.tokens += tokens + 1;
        self.last = line;
    }

    fn flush(&mut self, doc: &Document, out: &mut Vec<Chunk>) {
        let b = std::mem::take(self);
        if b.body.trim().is_empty() {
            return;
        }
        let mut header = doc.path.clone();
        for h in &b.heading {
            header.push_str(" › ");
            header.push_str(h);
        }
        out.push(Chunk {
            path: doc.path.clone(),
            lines: (b.first, b.last),
            place: Place::of(&doc.sections, (b.first, b.last)),
            heading: b.heading,
            text: format!("{header}\n{}", b.body.trim_end()),
        });
    }
}

fn markdown_heading(line: &str) -> Option<(usize, String)> {
    let level = line.chars().take_while(|&c| c == '#').count();
    let rest = line.get(level..)?;
    ((1..=6).contains(&level) && rest.starts_with(' ')).then(|| (level, rest.trim().to_string()))
}

/// The line with its token count, or its word-aligned pieces if it alone
/// exceeds the budget; a word that alone exceeds it (a base64 data URI, a
/// minified line) is cut between characters, so no piece is over budget.
fn split_long_line(
    line: &str,
    max_tokens: usize,
    count: &dyn Fn(&str) -> usize,
) -> Vec<(String, usize)> {
    let total = count(line);
    if total <= max_tokens {
        return vec![(line.to_string(), total)];
    }
    let mut parts: Vec<(String, usize)> = Vec::new();
    let (mut cur, mut cur_tokens) = (String::new(), 0);
    for word in line.split_inclusive(' ') {
        let t = count(word);
        if cur_tokens + t > max_tokens && !cur.is_empty() {
            parts.push((std::mem::take(&mut cur), cur_tokens));
            cur_tokens = 0;
        }
        if t > max_tokens {
            parts.extend(split_unbroken(word, max_tokens, count));
            continue;
        }
        cur.push_str(word);
        cur_tokens += t;
    }
    if !cur.is_empty() {
        parts.push((cur, cur_tokens));
    }
    parts
}

/// `word` in pieces of at most `max_tokens` tokens each, cut between
/// characters: each piece is the longest prefix of what is left that
/// fits. A prefix that fits doubles until one does not, then bisection
/// finds the cut inside it: each piece costs counts of a few times its own
/// length, never of the whole rest (a 4 MB minified line would otherwise
/// cost its length squared).
fn split_unbroken(
    word: &str,
    max_tokens: usize,
    count: &dyn Fn(&str) -> usize,
) -> Vec<(String, usize)> {
    let mut parts = Vec::new();
    let mut rest = word;
    while !rest.is_empty() {
        // The shortest prefix known not to fit; none: all of `rest` fits.
        let mut width = char_boundary(rest, max_tokens.max(1));
        let limit = loop {
            if width >= rest.len() {
                let t = count(rest);
                if t <= max_tokens {
                    break None;
                }
                break Some(rest.len());
            }
            if count(&rest[..width]) > max_tokens {
                break Some(width);
            }
            width = char_boundary(rest, width * 2);
        };
        let Some(limit) = limit else {
            parts.push((rest.to_string(), count(rest)));
            break;
        };
        let ends: Vec<usize> = rest[..limit]
            .char_indices()
            .map(|(i, c)| i + c.len_utf8())
            .collect();
        // ends[lo] fits (one character always does: a piece holds at least
        // one), ends[hi] does not.
        let (mut lo, mut hi) = (0, ends.len() - 1);
        let mut lo_tokens = count(&rest[..ends[0]]);
        while hi > lo + 1 {
            let mid = lo + (hi - lo) / 2;
            let t = count(&rest[..ends[mid]]);
            if t <= max_tokens {
                (lo, lo_tokens) = (mid, t);
            } else {
                hi = mid;
            }
        }
        parts.push((rest[..ends[lo]].to_string(), lo_tokens));
        rest = &rest[ends[lo]..];
    }
    parts
}

/// The first character boundary of `s` at or after byte `at` (its length
/// past the end).
fn char_boundary(s: &str, at: usize) -> usize {
    (at..s.len())
        .find(|&i| s.is_char_boundary(i))
        .unwrap_or(s.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> usize {
        s.split_whitespace().count()
    }

    /// A stand-in tokenizer for unbroken text: four characters a token.
    fn quads(s: &str) -> usize {
        s.chars().count().div_ceil(4)
    }

    /// One 200 KB line with no space (a base64 data URI) must not become
    /// one chunk past the budget: it failed to encode at the head of the
    /// state backlog on every pass.
    #[test]
    fn an_unbroken_line_is_cut_to_the_budget() {
        let uri = format!(
            "<img src=\"data:image/png;base64,{}\">",
            "QUJD".repeat(50_000)
        );
        let text = format!("# Logo\n\nbefore\n\n{uri}\n\nafter words here\n");
        let chunks = chunk_document(&doc(&text), 256, &quads);
        assert!(chunks.len() > 100, "{} chunks", chunks.len());
        for c in &chunks {
            let body = c.text.split_once('\n').map(|(_, b)| b).unwrap_or("");
            assert!(quads(body) <= 256 + 1, "{} tokens", quads(body));
        }
        // Nothing lost: the pieces join back into the line.
        let joined: String = chunks
            .iter()
            .map(|c| c.text.split_once('\n').map(|(_, b)| b).unwrap_or(""))
            .collect::<Vec<_>>()
            .join("")
            .replace(char::is_whitespace, "");
        assert!(joined.contains(&uri.replace(' ', "")));
        assert!(chunks
            .last()
            .is_some_and(|c| c.text.ends_with("after words here")));
    }

    /// A 4 MB minified line (an mdBook search index) costs counts of a few
    /// times its length, not its length squared: every piece used to
    /// bisect over the whole rest (hours with a real tokenizer). Cut at
    /// character boundaries, each piece within budget, nothing lost.
    #[test]
    fn a_long_unbroken_line_is_cut_in_linear_work() {
        let line = "é{\"tf\":1.0},".repeat(300_000);
        let counted = std::cell::Cell::new(0usize);
        let count = |s: &str| {
            counted.set(counted.get() + s.len());
            quads(s)
        };
        let parts = split_unbroken(&line, 256, &count);
        assert!(
            counted.get() < 40 * line.len(),
            "{} bytes counted for a {}-byte line",
            counted.get(),
            line.len()
        );
        assert!(parts.iter().all(|(p, t)| *t <= 256 && quads(p) == *t));
        assert!(parts[..parts.len() - 1].iter().all(|(_, t)| *t == 256));
        assert_eq!(
            parts.iter().map(|(p, _)| p.as_str()).collect::<String>(),
            line
        );
    }

    fn doc(text: &str) -> Document {
        Document {
            path: "notes/a.md".into(),
            text: text.into(),
            sections: vec![],
        }
    }

    #[test]
    fn packs_lines_with_line_ranges_and_breadcrumbs() {
        let text = "# Guide\n\nintro words here\n\n## Setup\n\none two three four five six seven\n\
                    eight nine ten eleven twelve\n\nthirteen fourteen fifteen sixteen seventeen\n";
        let chunks = chunk_document(&doc(text), 16, &words);
        assert_eq!(chunks[0].lines.0, 1);
        assert_eq!(chunks[0].heading, ["Guide"]);
        assert!(chunks[0].text.starts_with("notes/a.md › Guide\n# Guide"));
        let last = chunks.last().expect("chunks");
        assert_eq!(last.heading, ["Guide", "Setup"]);
        assert_eq!(last.lines.1, 10);
        assert!(chunks.len() >= 2);
        // Every line of the document lands in exactly one chunk.
        let covered: usize = chunks.iter().map(|c| c.lines.1 - c.lines.0 + 1).sum();
        assert!(covered <= 10);
        for c in &chunks {
            assert!(words(&c.text) <= 16 + 8, "{c:?}");
        }
    }

    #[test]
    fn chunks_know_their_pages() {
        let line = |p: usize| format!("page {p} has exactly ten words on this line here\n\n");
        let text: String = (1..=3).map(line).collect();
        let page = |line, number| Section {
            line,
            unit: crate::ingest::Unit::Page,
            number,
            name: None,
            row: None,
        };
        let d = Document {
            path: "r.pdf".into(),
            text,
            sections: vec![page(1, 1), page(3, 2), page(5, 3)],
        };
        let pages = |chunks: Vec<Chunk>| -> Vec<_> {
            chunks
                .iter()
                .map(|c| c.place.as_ref().and_then(Place::page_range))
                .collect()
        };
        assert_eq!(pages(chunk_document(&d, 64, &words)), [Some((1, 3))]);
        assert_eq!(
            pages(chunk_document(&d, 16, &words)),
            [Some((1, 1)), Some((2, 2)), Some((3, 3))]
        );
    }

    #[test]
    fn long_lines_split_between_words_only() {
        let line = (0..50)
            .map(|i| format!("w{i}"))
            .collect::<Vec<_>>()
            .join(" ");
        let chunks = chunk_document(&doc(&line), 16, &words);
        assert!(chunks.len() >= 3);
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
        let want: Vec<String> = (0..50).map(|i| format!("w{i}")).collect();
        assert_eq!(rejoined, want);
    }
}
