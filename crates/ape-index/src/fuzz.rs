//! Fuzz targets, run as bounded property tests in every `cargo test`:
//! every format reader on mutated real files (bytes flipped, inserted, cut
//! short), the HTML reader on its own markup and the chunker on any text;
//! the mutation helpers are public under the `fuzzing` feature, for the
//! service's targets (request parser, origin guard). The property is the one a server left running
//! needs: any input gives a value or an error, never a panic. Each target
//! runs a fixed number of cases (`CASES`, or `PROPTEST_CASES`), seeded
//! afresh each run so CI keeps exploring; proptest writes a failing case
//! to `proptest-regressions/`, and a fix turns it into a named test beside
//! the code it broke.

use proptest::prelude::*;
use proptest::sample::Index;

/// Cases per target: about a second each on two cores.
pub const CASES: u32 = 192;

pub fn config() -> ProptestConfig {
    ProptestConfig {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|c| c.parse().ok())
            .unwrap_or(CASES),
        // Shrinking a reader's crash can take long; the case is saved anyway.
        max_shrink_iters: 256,
        ..ProptestConfig::default()
    }
}

/// Edits to apply to a seed file: (where, byte) flips and inserts, and
/// where to cut it short.
pub fn edits() -> impl Strategy<Value = (Vec<(Index, u8, bool)>, Option<Index>)> {
    (
        prop::collection::vec((any::<Index>(), any::<u8>(), any::<bool>()), 0..24),
        prop::option::weighted(0.3, any::<Index>()),
    )
}

pub fn mutate(seed: &[u8], (edits, cut): &(Vec<(Index, u8, bool)>, Option<Index>)) -> Vec<u8> {
    let mut b = seed.to_vec();
    for (at, byte, insert) in edits {
        if b.is_empty() {
            b.push(*byte);
            continue;
        }
        let i = at.index(b.len());
        if *insert {
            b.insert(i, *byte);
        } else {
            b[i] = *byte;
        }
    }
    if let Some(cut) = cut {
        let n = cut.index(b.len() + 1);
        b.truncate(n);
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::extract::extract;
    use std::path::Path;

    /// Real files of every format: the committed fixtures (written by
    /// independent writers) and a PDF and a DOCX made here.
    fn seeds() -> Vec<(String, Vec<u8>)> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/formats");
        let mut seeds: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
            .map(|d| {
                d.filter_map(Result::ok)
                    .filter_map(|e| {
                        let name = e.file_name().to_string_lossy().into_owned();
                        Some((name, std::fs::read(e.path()).ok()?))
                    })
                    .collect()
            })
            .unwrap_or_default();
        seeds.push(("report.pdf".into(), crate::ingest::pdf::tests::small_pdf()));
        seeds.push(("letter.docx".into(), docx()));
        seeds.push((
            "page.html".into(),
            b"<html><head><style>p{}</style></head><body><h1>T</h1><p>a &amp; b &#x263A;</p>\
              <table><tr><td>1</td></tr></table><script>x</script></body></html>"
                .to_vec(),
        ));
        seeds.sort();
        seeds
    }

    fn docx() -> Vec<u8> {
        use std::io::Write;
        let mut buf = std::io::Cursor::new(Vec::new());
        let mut z = zip::ZipWriter::new(&mut buf);
        let o = zip::write::SimpleFileOptions::default();
        let _ = z.start_file("word/document.xml", o);
        let _ = z.write_all(
            br#"<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Title</w:t></w:r></w:p><w:p><w:r><w:t>Body text.</w:t></w:r></w:p></w:body></w:document>"#,
        );
        let _ = z.finish();
        buf.into_inner()
    }

    proptest! {
        #![proptest_config(config())]

        /// Every reader, on every seed mutated: a text or a reason.
        #[test]
        fn format_readers_never_panic(pick in any::<Index>(), e in edits()) {
            let seeds = seeds();
            let (name, seed) = &seeds[pick.index(seeds.len())];
            let bytes = mutate(seed, &e);
            let _ = extract(Path::new(name), &bytes);
        }

        /// The HTML reader on markup made of the pieces it acts on (main
        /// content, chrome it drops, attributes quoted and not, comments,
        /// scripts, unclosed tags): it never panics, and what it drops never
        /// shows.
        #[test]
        fn html_markup_never_panics(pieces in prop::collection::vec(prop::sample::select(vec![
            "<main>", "</main>", "<div role=main>", "<div role='main' class=\"a\">", "</div>", "<div>",
            "<nav>", "</nav>", "<div hidden>", "<div class=\"x hidden\">", "<aside>", "</aside>",
            "<header>", "</header>", "<p>", "</p>", "<h2>", "</h2>", "<!--", "-->", "<script>", "</script>",
            "<input hidden>", "<br/>", "<", ">", "=", "\"", "'", "word", "é", "&amp;", " ",
            "<div title=\"a hidden b\">", "<span aria-hidden=true>", "</span>",
        ]), 0..60)) {
            let html: String = pieces.concat();
            let text = crate::ingest::extract::extract(Path::new("x.html"), html.as_bytes())
                .map(|x| x.text)
                .unwrap_or_default();
            prop_assert!(!text.contains("<nav>"), "{text:?}");
        }

        /// HTML and the chunker on arbitrary text: every chunk within budget.
        #[test]
        fn html_and_chunking_never_panic(text in "\\PC{0,600}") {
            let _ = crate::ingest::extract::extract(Path::new("x.html"), text.as_bytes());
            let doc = crate::ingest::Document { path: "a.md".into(), text: text.clone(), sections: vec![] };
            let count = |s: &str| s.chars().count().div_ceil(3);
            for c in crate::ingest::chunk_document(&doc, 16, &count) {
                let body = c.text.split_once('\n').map_or("", |(_, b)| b);
                for line in body.lines() {
                    prop_assert!(count(line) <= 16, "{line:?}");
                }
            }
        }
    }
}
