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
        e if TEXT_EXTENSIONS.contains(&e) => Some(Kind::Text),
        _ => None,
    }
}

/// Reads `path` as text; `Err` says why it cannot be used.
pub fn extract(path: &Path, bytes: &[u8]) -> Result<String, String> {
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
        assert_eq!(extract(p, b"ok\r\nfine").as_deref(), Ok("ok\nfine"));
        assert_eq!(extract(p, b"\x00\x01"), Err("binary content".into()));
        assert!(extract(p, b"caf\xe9")
            .unwrap_err()
            .contains("UTF-8 at byte 3"));
        assert_eq!(kind(Path::new("x.PNG")), None);
        assert_eq!(kind(Path::new("x.HTM")), Some(Kind::Html));
    }
}
