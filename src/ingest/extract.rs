//! Text out of a file, by format. Text files come in the encodings real
//! folders hold (UTF-8, UTF-16 with a byte-order mark, Windows-1252 /
//! Latin-1 for older notes and exported mail); a file is refused, with a
//! clear reason, only when it is not text at all (binary content, a broken
//! PDF or DOCX).

use std::path::Path;

/// Formats we read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Markdown, plain text, reStructuredText, source code: used as is.
    Text,
    /// Tags stripped, headings kept as Markdown headings.
    Html,
    /// Text per page (pdf-extract).
    Pdf,
    /// Paragraphs of `word/document.xml`, heading styles kept.
    Docx,
}

/// Extracted text; `page_starts[i]` is the 1-based line where page `i + 1`
/// begins (PDF only, empty otherwise).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Extracted {
    pub text: String,
    pub page_starts: Vec<usize>,
    /// Something worth telling about how the text was read (another
    /// encoding, characters replaced), for the index report.
    pub note: Option<String>,
}

const TEXT_EXTENSIONS: &[&str] = &[
    "md", "markdown", "mdx", "txt", "text", "rst", "adoc", "org", "tex", "rs", "py", "js", "ts",
    "tsx", "jsx", "go", "c", "h", "cc", "cpp", "hpp", "java", "kt", "swift", "rb", "php", "cs",
    "scala", "lua", "pl", "r", "jl", "sh", "bash", "zsh", "fish", "ps1", "toml", "yaml", "yml",
    "json", "ini", "cfg", "conf", "csv", "sql", "proto", "graphql", "css", "scss", "vue", "svelte",
];

/// The format of `path`, if it is one we index.
pub fn kind(path: &Path) -> Option<Kind> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    match ext.as_str() {
        "html" | "htm" | "xhtml" => Some(Kind::Html),
        "pdf" => Some(Kind::Pdf),
        "docx" => Some(Kind::Docx),
        e if TEXT_EXTENSIONS.contains(&e) => Some(Kind::Text),
        _ => None,
    }
}

/// Extracts the text of a file of a format [`kind`] accepts; `Err` says why
/// it cannot be used.
pub fn extract(path: &Path, bytes: &[u8]) -> Result<Extracted, String> {
    match kind(path) {
        Some(Kind::Pdf) => pdf(bytes),
        Some(Kind::Docx) => super::docx::to_text(bytes).map(|text| Extracted {
            text,
            ..Extracted::default()
        }),
        _ => text(path, bytes).map(|(text, note)| Extracted {
            text,
            note,
            ..Extracted::default()
        }),
    }
}

fn pdf(bytes: &[u8]) -> Result<Extracted, String> {
    // pdf-extract can panic on malformed files; a bad file must not abort the run.
    let pages = std::panic::catch_unwind(|| pdf_extract::extract_text_from_mem_by_pages(bytes))
        .map_err(|_| "unreadable PDF".to_string())?
        .map_err(|e| format!("unreadable PDF: {e}"))?;
    let mut out = Extracted::default();
    let mut line = 1;
    for page in pages {
        let page = page.trim_matches('\n');
        out.page_starts.push(line);
        out.text.push_str(page);
        out.text.push_str("\n\n");
        line += page.lines().count() + 1;
    }
    if out.text.trim().is_empty() {
        return Err("PDF has no extractable text (scanned?)".into());
    }
    Ok(out)
}

fn text(path: &Path, bytes: &[u8]) -> Result<(String, Option<String>), String> {
    let (text, note) = decode(bytes)?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let text = match kind(path) {
        Some(Kind::Html) => super::html::to_text(text),
        _ => text.replace("\r\n", "\n"),
    };
    Ok((text, note))
}

/// Bytes to text: UTF-8 as is; UTF-16 by its byte-order mark; anything else
/// that has no NUL byte as Windows-1252 (every byte maps, so nothing is
/// lost; a real Latin-1 or cp1252 file reads correctly). NUL bytes without a
/// UTF-16 mark mean binary.
fn decode(bytes: &[u8]) -> Result<(String, Option<String>), String> {
    if let Some((enc, _)) = encoding_rs::Encoding::for_bom(bytes) {
        if enc != encoding_rs::UTF_8 {
            let (text, _, replaced) = enc.decode(bytes);
            let note = format!(
                "decoded as {}{}",
                enc.name(),
                if replaced {
                    ", some characters replaced"
                } else {
                    ""
                }
            );
            return Ok((text.into_owned(), Some(note)));
        }
    }
    if bytes.contains(&0) {
        return Err("binary content".into());
    }
    match std::str::from_utf8(bytes) {
        Ok(t) => Ok((t.to_string(), None)),
        Err(e) => {
            let (text, _, _) = encoding_rs::WINDOWS_1252.decode(bytes);
            Ok((
                text.into_owned(),
                Some(format!(
                    "not UTF-8 (byte {}): decoded as Windows-1252",
                    e.valid_up_to()
                )),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_text_encoding_and_rejects_only_binary() {
        let p = Path::new("a.txt");
        assert_eq!(
            extract(p, b"ok\r\nfine").map(|e| e.text).as_deref(),
            Ok("ok\nfine")
        );
        assert_eq!(extract(p, b"\x00\x01"), Err("binary content".into()));
        // Latin-1 / Windows-1252: read, and said so.
        let latin1 = extract(p, b"Caf\xe9 cr\xe8me \x93quoted\x94").expect("latin-1");
        assert_eq!(latin1.text, "Café crème \u{201c}quoted\u{201d}");
        assert!(latin1.note.expect("note").contains("Windows-1252"));
        // UTF-16 with a byte-order mark, little and big endian.
        let le: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain("Grüße".encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        let be: Vec<u8> = [0xFE, 0xFF]
            .into_iter()
            .chain("Grüße".encode_utf16().flat_map(u16::to_be_bytes))
            .collect();
        assert_eq!(extract(p, &le).expect("utf-16le").text, "Grüße");
        assert_eq!(extract(p, &be).expect("utf-16be").text, "Grüße");
        // UTF-8 with a BOM: the mark goes, no note.
        let bom = extract(p, "\u{feff}plain".as_bytes()).expect("bom");
        assert_eq!((bom.text.as_str(), bom.note), ("plain", None));
        assert!(extract(Path::new("x.pdf"), b"%PDF-1.4 garbage")
            .unwrap_err()
            .contains("PDF"));
        assert!(extract(Path::new("x.docx"), b"PK not a zip")
            .unwrap_err()
            .contains("DOCX"));
        assert_eq!(kind(Path::new("x.PNG")), None);
        assert_eq!(kind(Path::new("x.HTM")), Some(Kind::Html));
    }
}
