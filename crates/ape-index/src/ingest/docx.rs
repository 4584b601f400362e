//! DOCX to text: the paragraphs of `word/document.xml`, with `HeadingN`
//! styles turned into Markdown headings so chunks get breadcrumbs.

use super::container::Archive;

/// Text of a `.docx` file.
pub fn to_text(bytes: &[u8]) -> Result<String, String> {
    let xml = Archive::open(bytes, "DOCX")?.text("word/document.xml")?;
    Ok(paragraphs(&xml).join("\n\n"))
}

fn paragraphs(xml: &str) -> Vec<String> {
    let mut out = Vec::new();
    for para in xml.split("</w:p>") {
        let Some(start) = para.rfind("<w:p>").or_else(|| para.rfind("<w:p ")) else {
            continue;
        };
        let para = &para[start..];
        let mut text = String::new();
        let mut rest = para;
        while let Some(lt) = rest.find('<') {
            rest = &rest[lt..];
            let Some(gt) = rest.find('>') else { break };
            let tag = &rest[1..gt];
            rest = &rest[gt + 1..];
            if tag == "w:t" || tag.starts_with("w:t ") {
                let end = rest.find("</w:t>").unwrap_or(rest.len());
                text.push_str(&super::html::decode_entities(&rest[..end]));
                rest = &rest[end..];
            } else if tag.starts_with("w:tab") {
                text.push('\t');
            } else if tag.starts_with("w:br") {
                text.push('\n');
            }
        }
        if text.trim().is_empty() {
            continue;
        }
        match heading_level(para) {
            Some(level) => out.push(format!("{} {}", "#".repeat(level), text.trim())),
            None => out.push(text),
        }
    }
    out
}

fn heading_level(para: &str) -> Option<usize> {
    let at = para.find("w:pStyle w:val=\"")? + "w:pStyle w:val=\"".len();
    let style = &para[at..para[at..].find('"')? + at];
    let n = style.strip_prefix("Heading")?.parse::<usize>().ok()?;
    Some(n.clamp(1, 6))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// A minimal .docx: only what Word's text lives in.
    pub fn docx(xml_body: &str) -> Vec<u8> {
        let mut buf = std::io::Cursor::new(Vec::new());
        let mut z = zip::ZipWriter::new(&mut buf);
        let opts = zip::write::SimpleFileOptions::default();
        z.start_file("word/document.xml", opts).expect("zip");
        let xml =
            format!("<?xml version=\"1.0\"?><w:document><w:body>{xml_body}</w:body></w:document>");
        z.write_all(xml.as_bytes()).expect("zip");
        z.finish().expect("zip");
        buf.into_inner()
    }

    #[test]
    fn paragraphs_and_headings() {
        let body = "<w:p><w:pPr><w:pStyle w:val=\"Heading2\"/></w:pPr><w:r><w:t>Setup</w:t></w:r></w:p>\
                    <w:p><w:r><w:t xml:space=\"preserve\">Fish &amp; </w:t></w:r><w:r><w:t>chips</w:t></w:r></w:p>";
        assert_eq!(
            to_text(&docx(body)).expect("docx"),
            "## Setup\n\nFish & chips"
        );
    }
}
