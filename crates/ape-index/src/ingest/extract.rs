//! Text out of a file, by format. Text files come in the encodings real
//! folders hold (UTF-8, UTF-16 with a byte-order mark, Windows-1252 /
//! Latin-1 for older notes and exported mail); a file is refused, with a
//! clear reason, only when it cannot be read as text at all (binary
//! content, a damaged or encrypted document, a zip bomb). Formats with
//! units a person navigates by (pages, slides, sheets, chapters, messages,
//! cells) report where each starts, for citations.

use std::path::Path;

pub use super::extracted::{Builder, Extracted};

/// Formats we read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Markdown, plain text, XML, logs, source code: used as is.
    Text,
    /// No extension, or one we do not know: text if its content is (the
    /// walk sniffs it first), else silently passed over, as ripgrep does.
    Sniffed,
    /// Tags stripped, headings kept as Markdown headings.
    Html,
    /// Text per page (pdf-extract).
    Pdf,
    /// Paragraphs of `word/document.xml`, heading styles kept.
    Docx,
    /// OpenDocument text: paragraphs, outline levels as headings.
    Odt,
    /// Slides with their notes: PPTX and ODP.
    Pptx,
    Odp,
    /// Workbooks: sheets as tables (calamine).
    Xlsx,
    Ods,
    /// Excel 97–2003 (BIFF, read by calamine too).
    Xls,
    /// Word and PowerPoint 97–2003: named in the report, not read.
    Legacy,
    /// Delimited tables.
    Csv,
    Tsv,
    /// Chapters in spine order.
    Epub,
    /// Mail: one message, or a mailbox of them.
    Eml,
    Mbox,
    /// Jupyter notebooks: markdown and code cells.
    Ipynb,
}

const TEXT_EXTENSIONS: &[&str] = &[
    "md", "markdown", "mdx", "txt", "text", "rst", "adoc", "org", "tex", "rs", "py", "js", "ts",
    "tsx", "jsx", "go", "c", "h", "cc", "cpp", "hpp", "java", "kt", "swift", "rb", "php", "cs",
    "scala", "lua", "pl", "r", "jl", "sh", "bash", "zsh", "fish", "ps1", "toml", "yaml", "yml",
    "json", "ini", "cfg", "conf", "sql", "proto", "graphql", "css", "scss", "vue", "svelte", "xml",
    "log",
];

/// Extensions of formats that are never text, passed over without reading
/// them (sniffing a video would only confirm it).
const BINARY_EXTENSIONS: &[&str] = &[
    "png",
    "jpg",
    "jpeg",
    "gif",
    "bmp",
    "webp",
    "ico",
    "tif",
    "tiff",
    "heic",
    "psd",
    "svgz",
    "mp3",
    "wav",
    "flac",
    "ogg",
    "m4a",
    "aac",
    "mp4",
    "mkv",
    "mov",
    "avi",
    "webm",
    "zip",
    "gz",
    "tgz",
    "bz2",
    "xz",
    "zst",
    "7z",
    "rar",
    "tar",
    "jar",
    "war",
    "iso",
    "dmg",
    "img",
    "exe",
    "dll",
    "so",
    "dylib",
    "o",
    "a",
    "lib",
    "class",
    "pyc",
    "wasm",
    "bin",
    "dat",
    "db",
    "sqlite",
    "gguf",
    "safetensors",
    "onnx",
    "pt",
    "pth",
    "npy",
    "npz",
    "parquet",
    "arrow",
    "woff",
    "woff2",
    "ttf",
    "otf",
    "eot",
    "msg",
    "key",
    "numbers",
    "pages",
    "odg",
    "lock",
];

/// The format of `path`, if it may be one we index (`Sniffed`: only if its
/// content is text).
pub fn kind(path: &Path) -> Option<Kind> {
    let Some(ext) = path.extension().and_then(|e| e.to_str()) else {
        return Some(Kind::Sniffed);
    };
    let ext = ext.to_ascii_lowercase();
    Some(match ext.as_str() {
        "html" | "htm" | "xhtml" => Kind::Html,
        "pdf" => Kind::Pdf,
        "docx" => Kind::Docx,
        "odt" => Kind::Odt,
        "pptx" => Kind::Pptx,
        "odp" => Kind::Odp,
        "xlsx" | "xlsm" => Kind::Xlsx,
        "ods" => Kind::Ods,
        "xls" => Kind::Xls,
        "doc" | "ppt" => Kind::Legacy,
        "csv" => Kind::Csv,
        "tsv" | "tab" => Kind::Tsv,
        "epub" => Kind::Epub,
        "eml" => Kind::Eml,
        "mbox" | "mbx" => Kind::Mbox,
        "ipynb" => Kind::Ipynb,
        e if TEXT_EXTENSIONS.contains(&e) => Kind::Text,
        e if BINARY_EXTENSIONS.contains(&e) => return None,
        _ => Kind::Sniffed,
    })
}

/// How files like `path` are read, as a number each index records per
/// file: a kind's number rises when its text changes (tables gained their
/// digest: 1; web pages read for their main content: 1, and a further 1
/// for copies of others passed over unless every file is read,
/// `documents_only`), so that existing indexes read
/// those files again, and only those.
pub fn reading(path: &Path, documents_only: bool) -> u32 {
    match kind(path) {
        Some(Kind::Xlsx | Kind::Ods | Kind::Xls | Kind::Csv | Kind::Tsv) => 1,
        // Main content only, chrome dropped: 1; and copies passed over: +1.
        Some(Kind::Html) => 1 + u32::from(documents_only),
        _ => 0,
    }
}

/// Whether the start of a file (its first few KiB) reads as text, by the
/// same test as [`extract`]: no NUL byte, unless a UTF-16 byte-order mark.
pub fn looks_like_text(head: &[u8]) -> bool {
    match encoding_rs::Encoding::for_bom(head) {
        Some((enc, _)) if enc != encoding_rs::UTF_8 => true,
        _ => !head.contains(&0),
    }
}

/// Whether a source's line numbers are the file's own (so an editor can
/// open it at the line); other formats are opened by the desktop.
pub fn lines_are_the_files(path: &Path) -> bool {
    matches!(kind(path), Some(Kind::Text | Kind::Sniffed))
}

/// Extracts the text of a file of a format [`kind`] accepts; `Err` says why
/// it cannot be used.
pub fn extract(path: &Path, bytes: &[u8]) -> Result<Extracted, String> {
    let decoded = |bytes: &[u8]| -> Result<(String, Option<String>), String> {
        let (text, note) = decode(bytes)?;
        let text = text
            .strip_prefix('\u{feff}')
            .map(String::from)
            .unwrap_or(text);
        Ok((text.replace("\r\n", "\n"), note))
    };
    let plain = |(text, note): (String, Option<String>)| {
        Ok(Extracted {
            text,
            note,
            ..Extracted::default()
        })
    };
    let with_note =
        |x: Result<Extracted, String>, note: Option<String>| x.map(|x| Extracted { note, ..x });
    match kind(path) {
        Some(Kind::Pdf) => super::pdf::to_text(bytes),
        Some(Kind::Docx) => super::docx::to_text(bytes).map(|text| Extracted {
            text,
            ..Extracted::default()
        }),
        Some(Kind::Odt) => super::office::odt(bytes),
        Some(Kind::Odp) => super::office::odp(bytes),
        Some(Kind::Pptx) => super::office::pptx(bytes),
        Some(Kind::Xlsx) => super::sheet::workbook(bytes, "XLSX"),
        Some(Kind::Ods) => super::sheet::workbook(bytes, "ODS"),
        Some(Kind::Xls) => super::sheet::workbook(bytes, "XLS"),
        Some(Kind::Legacy) => {
            let ext = path
                .extension()
                .and_then(|e| e.to_str())
                .unwrap_or("")
                .to_ascii_lowercase();
            Err(format!(
                "Office 97–2003 format (.{ext}): save it as .{ext}x to index it"
            ))
        }
        Some(Kind::Epub) => super::epub::to_text(bytes),
        Some(Kind::Eml) => super::mail::eml(bytes),
        Some(Kind::Mbox) => super::mail::mbox(bytes),
        Some(k @ (Kind::Csv | Kind::Tsv)) => {
            let (text, note) = decoded(bytes)?;
            let (delim, what) = if k == Kind::Csv {
                (b',', "CSV")
            } else {
                (b'\t', "TSV")
            };
            with_note(super::sheet::delimited(&text, delim, what), note)
        }
        Some(Kind::Ipynb) => {
            let (text, note) = decoded(bytes)?;
            with_note(super::notebook::to_text(&text), note)
        }
        Some(Kind::Html) => {
            let (text, note) = decoded(bytes)?;
            Ok(Extracted {
                text: super::html::to_text(&text),
                note,
                ..Extracted::default()
            })
        }
        // A mailbox saved without an extension (Thunderbird's "Inbox").
        Some(Kind::Sniffed) if bytes.starts_with(b"From ") => {
            super::mail::mbox(bytes).or_else(|_| plain(decoded(bytes)?))
        }
        Some(Kind::Text | Kind::Sniffed) | None => plain(decoded(bytes)?),
    }
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

    /// The fact's place in the fixture written by an independent writer
    /// (scripts/make-fixtures.py), as a citation would show it.
    fn place_of(file: &str, fact: &str) -> (String, Option<String>) {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/formats")
            .join(file);
        let bytes = std::fs::read(&path).expect("fixture");
        let x = extract(&path, &bytes).unwrap_or_else(|e| panic!("{file}: {e}"));
        let line = x
            .text
            .lines()
            .position(|l| l.contains(fact))
            .unwrap_or_else(|| panic!("{file}: {fact:?} not in\n{}", x.text))
            + 1;
        let place = super::super::place::Place::of(&x.sections, (line, line));
        (x.text, place.map(|p| p.to_string()))
    }

    #[test]
    fn every_format_reads_its_fixture_with_the_fact_at_its_place() {
        let cases = [
            (
                "review.pptx",
                "scheduled for the ninth of October",
                Some("slide 2"),
            ),
            ("review.pptx", "budget is 40,000 euros", Some("slide 2")),
            ("offsite.odp", "served in the glasshouse", Some("slide 2")),
            ("offsite.odp", "vegan menu", Some("slide 2")),
            (
                "staff.xlsx",
                "Lighthouse maintenance",
                Some("sheet Staff, row 42"),
            ),
            (
                "staff.xlsx",
                "Lantern wicks | 312",
                Some("sheet Inventory, row 2"),
            ),
            ("tides.ods", "Solva | 07:15", Some("sheet Tides, row 3")),
            ("tides.csv", "Harbour mouth | Lindqvist | 7", Some("row 3")),
            ("moorings.tsv", "B5 | Petrel", Some("row 3")),
            (
                "voyages.epub",
                "painted the ship's name",
                Some("chapter 2 “The Azores”"),
            ),
            (
                "generator.eml",
                "tested every Thursday",
                Some("message 1 “Generator test”"),
            ),
            (
                "generator.eml",
                "Attachments: checklist.pdf",
                Some("message 1 “Generator test”"),
            ),
            ("station.mbox", "chart cupboard", Some("message 2 “Keys”")),
            ("churn.ipynb", "1.7 percent", Some("cell 3")),
            ("guide.odt", "old crow burrows", None),
            ("NOTES", "fog signal", None),
            ("inventory.xml", "red locker", None),
            ("beacon.log", "287 kHz", None),
        ];
        for (file, fact, want) in cases {
            let (_, got) = place_of(file, fact);
            assert_eq!(got.as_deref(), want, "{file}: {fact}");
        }
        // Headings carry structure into every chunk's breadcrumb.
        let (odt, _) = place_of("guide.odt", "old crow burrows");
        assert!(odt.contains("# Field guide\n\n"), "{odt}");
        assert!(odt.contains("## Nesting\n\n"), "{odt}");
        let (xlsx, _) = place_of("staff.xlsx", "Lantern");
        assert!(
            xlsx.starts_with("# Staff\n## Name | Team | Start\nPerson 0 | Ops"),
            "{xlsx}"
        );
        let (pptx, _) = place_of("review.pptx", "Heron");
        assert!(pptx.contains("# Slide 2: Launch plan"), "{pptx}");
        let (nb, _) = place_of("churn.ipynb", "pandas");
        assert!(nb.contains("```python\nimport pandas as pd\n```"), "{nb}");
        assert!(!nb.contains("OUTPUT-NOT-INDEXED"));
        let (mail, _) = place_of("generator.eml", "Thursday");
        assert!(
            !mail.contains("<b>"),
            "the plain-text body, not the HTML: {mail}"
        );
    }

    #[test]
    fn damaged_and_locked_documents_are_refused_with_a_reason() {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
        let locked = std::fs::read(fixtures.join("faults/locked.docx")).expect("fixture");
        let err = extract(Path::new("locked.docx"), &locked).unwrap_err();
        assert!(err.starts_with("encrypted DOCX"), "{err}");
        let xlsx = std::fs::read(fixtures.join("formats/staff.xlsx")).expect("fixture");
        let err = extract(Path::new("cut.xlsx"), &xlsx[..xlsx.len() / 2]).unwrap_err();
        assert!(err.contains("XLSX"), "{err}");
        let err = extract(
            Path::new("bad.epub"),
            &super::super::container::tests::zip_of(&[(
                "META-INF/container.xml",
                b"<container><rootfiles><rootfile full-path=\"a.opf\"></rootfiles>",
            )]),
        )
        .unwrap_err();
        assert!(err.starts_with("malformed EPUB"), "{err}");
        assert_eq!(
            extract(Path::new("binary.txt"), b"\x7fELF\x00\x00").unwrap_err(),
            "binary content"
        );
        let pdf = b"%PDF-1.7\n1 0 obj <<>> endobj\ntrailer << /Root 1 0 R /Encrypt 2 0 R >>\n%%EOF";
        let err = extract(Path::new("locked.pdf"), pdf).unwrap_err();
        assert!(err.starts_with("encrypted PDF"), "{err}");
        let err = extract(Path::new("old.DOC"), b"\xd0\xcf\x11\xe0").unwrap_err();
        assert_eq!(
            err,
            "Office 97–2003 format (.doc): save it as .docx to index it"
        );
        // An EPUB whose chapters are listed as encrypted is DRM'd.
        let container =
            b"<container><rootfiles><rootfile full-path=\"b.opf\"/></rootfiles></container>";
        let opf = b"<package><manifest><item id=\"c\" href=\"c1.xhtml\"/></manifest><spine><itemref idref=\"c\"/></spine></package>";
        let enc = b"<encryption><EncryptedData><CipherData><CipherReference URI=\"c1.xhtml\"/></CipherData></EncryptedData></encryption>";
        let drm = super::super::container::tests::zip_of(&[
            ("META-INF/container.xml", container),
            ("b.opf", opf),
            ("META-INF/encryption.xml", enc),
            ("c1.xhtml", b"<p>x</p>"),
        ]);
        assert_eq!(
            extract(Path::new("book.epub"), &drm).unwrap_err(),
            "encrypted EPUB (DRM-protected)"
        );
    }
}
