//! EPUB to text: the spine's documents in reading order (container.xml →
//! the package document → its spine), each a chapter whose title is its
//! first heading, or its `<title>`.

use std::collections::HashMap;
use std::sync::Arc;

use super::container::Archive;
use super::extracted::{Builder, Extracted};
use super::office::resolve;
use super::place::Unit;
use super::xml::{attr, name, walk, Ev};

/// Text of an `.epub`.
pub fn to_text(bytes: &[u8]) -> Result<Extracted, String> {
    let mut zip = Archive::open(bytes, "EPUB")?;
    let container = zip.text("META-INF/container.xml")?;
    let mut opf_path = None;
    walk(&container, "EPUB container.xml", |ev| {
        if let Ev::Start(e) = ev {
            if name(e) == "rootfile" && opf_path.is_none() {
                opf_path = attr(e, "full-path");
            }
        }
    })?;
    let opf_path = opf_path.ok_or("unreadable EPUB: container.xml names no package")?;
    let opf = zip.text(&opf_path)?;
    let dir = opf_path.rsplit_once('/').map_or("", |(d, _)| d);
    let (mut items, mut spine) = (HashMap::new(), Vec::new());
    walk(&opf, "EPUB package document", |ev| {
        if let Ev::Start(e) = ev {
            match name(e) {
                "item" => {
                    if let (Some(id), Some(href)) = (attr(e, "id"), attr(e, "href")) {
                        items.insert(id, resolve(dir, &percent_decode(&href)));
                    }
                }
                "itemref" => spine.extend(attr(e, "idref")),
                _ => {}
            }
        }
    })?;
    if zip.has("META-INF/encryption.xml") {
        let enc = zip.text("META-INF/encryption.xml")?;
        // Font obfuscation also lists files here; encrypted text is DRM.
        let drm = spine
            .iter()
            .filter_map(|id| items.get(id))
            .any(|path| enc.contains(path.rsplit('/').next().unwrap_or(path)));
        if drm {
            return Err("encrypted EPUB (DRM-protected)".into());
        }
    }
    let mut b = Builder::default();
    let mut chapter = 0;
    for id in &spine {
        let Some(path) = items.get(id) else { continue };
        let html = zip.text(path)?;
        let text = super::html::to_text(&html);
        if text.trim().is_empty() {
            continue; // a cover image or a blank page
        }
        chapter += 1;
        let heading = text
            .lines()
            .find_map(|l| {
                l.trim_start_matches('#')
                    .strip_prefix(' ')
                    .filter(|_| l.starts_with('#'))
            })
            .map(str::trim)
            .filter(|h| !h.is_empty())
            .map(String::from);
        let title = heading.clone().or_else(|| html_title(&html));
        b.section(
            Unit::Chapter,
            chapter,
            title.as_deref().map(Arc::from),
            None,
        );
        if heading.is_none() {
            b.para(&format!(
                "# {}",
                title.unwrap_or_else(|| format!("Chapter {chapter}"))
            ));
        }
        b.para(&text);
    }
    b.finish_nonempty("EPUB")
}

fn html_title(html: &str) -> Option<String> {
    let lower = html.to_ascii_lowercase();
    let start = lower.find("<title")?;
    let open_end = lower[start..].find('>')? + start + 1;
    let end = lower[open_end..].find("</title")? + open_end;
    let t = super::html::decode_entities(&html[open_end..end]);
    let t = t.split_whitespace().collect::<Vec<_>>().join(" ");
    (!t.is_empty()).then_some(t)
}

/// `%20` and friends in an href (EPUB hrefs are URLs).
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hrefs_and_titles() {
        assert_eq!(percent_decode("ch%201.xhtml"), "ch 1.xhtml");
        assert_eq!(percent_decode("a%2"), "a%2");
        assert_eq!(
            html_title("<html><head><TITLE> The  Sea &amp; Sky</title></head>").as_deref(),
            Some("The Sea & Sky")
        );
    }
}
