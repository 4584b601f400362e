//! OpenDocument text (ODT) and slides (ODP, PPTX) to text: paragraphs in
//! reading order, outline levels as Markdown headings, one section per
//! slide with its title as heading and its speaker notes after it.

use std::collections::HashMap;
use std::sync::Arc;

use super::container::Archive;
use super::extracted::{Builder, Extracted};
use super::place::Unit;
use super::xml::{attr, name, walk, Ev};

/// Text of an `.odt`: headings (`text:h`, by outline level) and paragraphs.
pub fn odt(bytes: &[u8]) -> Result<Extracted, String> {
    let mut zip = Archive::open(bytes, "ODT")?;
    let xml = zip.text("content.xml")?;
    let mut b = Builder::default();
    for p in odf_paragraphs(&xml, "ODT content.xml")? {
        match p.level {
            Some(level) => b.para(&format!("{} {}", "#".repeat(level), p.text.trim())),
            None => b.para(&p.text),
        }
    }
    b.finish_nonempty("ODT")
}

/// Text of an `.odp`: each `draw:page` is a slide; frames of class `title`
/// give its heading, `presentation:notes` its notes.
pub fn odp(bytes: &[u8]) -> Result<Extracted, String> {
    let mut zip = Archive::open(bytes, "ODP")?;
    let xml = zip.text("content.xml")?;
    let mut slides: Vec<Slide> = Vec::new();
    let (mut in_notes, mut title_depth, mut para) = (0usize, 0usize, None::<String>);
    let mut stack: Vec<String> = Vec::new();
    walk(&xml, "ODP content.xml", |ev| match ev {
        Ev::Start(e) => {
            let n = name(e);
            stack.push(n.to_string());
            match n {
                "page" => slides.push(Slide::default()),
                "notes" => in_notes += 1,
                "frame" if attr(e, "class").as_deref() == Some("title") => {
                    title_depth = stack.len()
                }
                "p" | "h" => para = Some(String::new()),
                "s" => push(&mut para, &spaces(e)),
                "tab" => push(&mut para, "\t"),
                "line-break" => push(&mut para, "\n"),
                _ => {}
            }
        }
        Ev::End(n) => {
            match n {
                "notes" => in_notes = in_notes.saturating_sub(1),
                "frame" if title_depth == stack.len() => title_depth = 0,
                "p" | "h" => {
                    if let (Some(text), Some(slide)) = (para.take(), slides.last_mut()) {
                        slide.add(text, title_depth > 0, in_notes > 0);
                    }
                }
                _ => {}
            }
            stack.pop();
        }
        Ev::Text(t) => push(&mut para, t),
    })?;
    slides_to_text(slides, "ODP")
}

/// Text of a `.pptx`: slides in presentation order (`p:sldIdLst` through
/// the relationships), title placeholders as headings, notes slides after.
pub fn pptx(bytes: &[u8]) -> Result<Extracted, String> {
    let mut zip = Archive::open(bytes, "PPTX")?;
    let order = {
        let pres = zip.text("ppt/presentation.xml")?;
        let rels = relationships(&zip.text("ppt/_rels/presentation.xml.rels")?, "ppt")?;
        let mut ids = Vec::new();
        walk(&pres, "PPTX presentation.xml", |ev| {
            if let Ev::Start(e) = ev {
                if name(e) == "sldId" {
                    // `r:id` (the relationship), not the plain numeric `id`.
                    ids.extend(e.attributes().flatten().find_map(|a| {
                        let key: &str = a.key.0;
                        (key.contains(':') && key.ends_with(":id"))
                            .then(|| {
                                a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                                    .ok()
                                    .map(|v| v.into_owned())
                            })
                            .flatten()
                    }));
                }
            }
        })?;
        ids.into_iter()
            .filter_map(|id| rels.get(&id).map(|(target, _)| target.clone()))
            .collect::<Vec<_>>()
    };
    let mut slides = Vec::new();
    for path in order {
        let mut slide = Slide::default();
        for (text, kind) in drawing_paragraphs(&zip.text(&path)?, &path)? {
            let title = matches!(kind.as_deref(), Some("title" | "ctrTitle"));
            slide.add(text, title, false);
        }
        let (dir, file) = path.rsplit_once('/').unwrap_or(("", path.as_str()));
        let rels_path = format!("{dir}/_rels/{file}.rels");
        if zip.has(&rels_path) {
            let rels = relationships(&zip.text(&rels_path)?, dir)?;
            let notes = rels
                .values()
                .find(|(_, kind)| kind.ends_with("/notesSlide"))
                .map(|(target, _)| target.clone());
            if let Some(notes) = notes.filter(|n| zip.has(n)) {
                for (text, kind) in drawing_paragraphs(&zip.text(&notes)?, &notes)? {
                    // The notes page repeats the slide number and header.
                    if !matches!(
                        kind.as_deref(),
                        Some("sldNum" | "hdr" | "ftr" | "dt" | "sldImg")
                    ) {
                        slide.add(text, false, true);
                    }
                }
            }
        }
        slides.push(slide);
    }
    slides_to_text(slides, "PPTX")
}

#[derive(Default)]
struct Slide {
    title: Vec<String>,
    body: Vec<String>,
    notes: Vec<String>,
}

impl Slide {
    fn add(&mut self, text: String, title: bool, notes: bool) {
        let text = text.trim().to_string();
        if text.is_empty() {
            return;
        }
        match (notes, title) {
            (true, _) => self.notes.push(text),
            (false, true) => self.title.push(text),
            (false, false) => self.body.push(text),
        }
    }
}

fn slides_to_text(slides: Vec<Slide>, what: &str) -> Result<Extracted, String> {
    let mut b = Builder::default();
    for (i, s) in slides.into_iter().enumerate() {
        let n = i + 1;
        let title = s.title.join(" ").replace('\n', " ");
        let name = (!title.is_empty()).then(|| Arc::<str>::from(title.as_str()));
        b.section(Unit::Slide, n, name, None);
        b.para(&if title.is_empty() {
            format!("# Slide {n}")
        } else {
            format!("# Slide {n}: {title}")
        });
        for p in &s.body {
            b.para(p);
        }
        if !s.notes.is_empty() {
            b.para(&format!("Notes: {}", s.notes.join("\n")));
        }
    }
    b.finish_nonempty(what)
}

/// A paragraph of ODF text: its outline level if it is a heading.
struct OdfParagraph {
    text: String,
    level: Option<usize>,
}

/// `text:p` and `text:h` in document order. A paragraph inside another
/// (a footnote, a frame) comes out on its own, before its parent ends.
fn odf_paragraphs(xml: &str, what: &str) -> Result<Vec<OdfParagraph>, String> {
    let mut out = Vec::new();
    let mut open: Vec<OdfParagraph> = Vec::new();
    let mut in_body = false;
    walk(xml, what, |ev| match ev {
        Ev::Start(e) => match name(e) {
            "body" => in_body = true,
            "p" if in_body => open.push(OdfParagraph {
                text: String::new(),
                level: None,
            }),
            "h" if in_body => open.push(OdfParagraph {
                text: String::new(),
                level: Some(
                    attr(e, "outline-level")
                        .and_then(|l| l.parse::<usize>().ok())
                        .unwrap_or(1)
                        .clamp(1, 6),
                ),
            }),
            "s" => {
                if let Some(p) = open.last_mut() {
                    p.text.push_str(&spaces(e));
                }
            }
            "tab" => open.last_mut().into_iter().for_each(|p| p.text.push('\t')),
            "line-break" => open.last_mut().into_iter().for_each(|p| p.text.push('\n')),
            _ => {}
        },
        Ev::End("p" | "h") => out.extend(open.pop()),
        Ev::End("body") => in_body = false,
        Ev::End(_) => {}
        Ev::Text(t) => {
            if let Some(p) = open.last_mut() {
                p.text.push_str(t);
            }
        }
    })?;
    out.retain(|p| !p.text.trim().is_empty());
    Ok(out)
}

/// DrawingML paragraphs (`a:p` of `a:t` runs) in document order, each with
/// the placeholder type of the shape it sits in (`title`, `body`, …).
fn drawing_paragraphs(xml: &str, what: &str) -> Result<Vec<(String, Option<String>)>, String> {
    let mut out = Vec::new();
    let (mut shape_kind, mut para, mut in_t) = (None::<String>, None::<String>, false);
    walk(xml, what, |ev| match ev {
        Ev::Start(e) => match name(e) {
            "sp" => shape_kind = None,
            "ph" => shape_kind = Some(attr(e, "type").unwrap_or_else(|| "body".into())),
            "p" => para = Some(String::new()),
            "t" => in_t = true,
            "br" => push(&mut para, "\n"),
            _ => {}
        },
        Ev::End("t") => in_t = false,
        Ev::End("p") => {
            if let Some(text) = para.take() {
                out.push((text, shape_kind.clone()));
            }
        }
        Ev::End("sp") => shape_kind = None,
        Ev::End(_) => {}
        Ev::Text(t) if in_t => push(&mut para, t),
        Ev::Text(_) => {}
    })?;
    Ok(out)
}

/// `Id → (target path inside the package, relationship type)` of a
/// `.rels` part whose targets are relative to `dir`.
fn relationships(xml: &str, dir: &str) -> Result<HashMap<String, (String, String)>, String> {
    let mut out = HashMap::new();
    walk(xml, "PPTX relationships", |ev| {
        if let Ev::Start(e) = ev {
            if name(e) == "Relationship" {
                if let (Some(id), Some(target)) = (attr(e, "Id"), attr(e, "Target")) {
                    let kind = attr(e, "Type").unwrap_or_default();
                    out.insert(id, (resolve(dir, &target), kind));
                }
            }
        }
    })?;
    Ok(out)
}

/// `target` relative to `dir` inside a zip package (`..` allowed, `/`
/// meaning the package root).
pub fn resolve(dir: &str, target: &str) -> String {
    let mut parts: Vec<&str> = if target.starts_with('/') {
        Vec::new()
    } else {
        dir.split('/').filter(|p| !p.is_empty()).collect()
    };
    for p in target.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    parts.join("/")
}

fn push(para: &mut Option<String>, s: &str) {
    if let Some(p) = para {
        p.push_str(s);
    }
}

/// The spaces an ODF `text:s` stands for (`text:c` of them, default 1).
fn spaces(e: &quick_xml::events::BytesStart<'_>) -> String {
    let n = attr(e, "c").and_then(|c| c.parse().ok()).unwrap_or(1usize);
    " ".repeat(n.min(64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_paths_resolve_like_urls() {
        assert_eq!(resolve("ppt", "slides/slide1.xml"), "ppt/slides/slide1.xml");
        assert_eq!(
            resolve("ppt/slides", "../notesSlides/notesSlide1.xml"),
            "ppt/notesSlides/notesSlide1.xml"
        );
        assert_eq!(resolve("ppt", "/ppt/slides/s.xml"), "ppt/slides/s.xml");
    }
}
