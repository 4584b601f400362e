//! Text out of a file, by format. Returns a clear reason for files that look
//! indexable but are not usable (binary content, invalid UTF-8).

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
            page_starts: vec![],
        }),
        _ => text(path, bytes).map(|text| Extracted {
            text,
            page_starts: vec![],
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

fn text(path: &Path, bytes: &[u8]) -> Result<String, String> {
    if bytes.contains(&0) {
        return Err("binary content".into());
    }
    let text = std::str::from_utf8(bytes)
        .map_err(|e| format!("invalid UTF-8 at byte {}", e.valid_up_to()))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    Ok(match kind(path) {
        Some(Kind::Html) => super::html::to_text(text),
        _ => text.replace("\r\n", "\n"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_binary_and_invalid_utf8_with_a_reason() {
        let p = Path::new("a.txt");
        assert_eq!(
            extract(p, b"ok\r\nfine").map(|e| e.text).as_deref(),
            Ok("ok\nfine")
        );
        assert_eq!(extract(p, b"\x00\x01"), Err("binary content".into()));
        assert!(extract(p, b"caf\xe9")
            .unwrap_err()
            .contains("UTF-8 at byte 3"));
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
