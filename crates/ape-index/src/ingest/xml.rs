//! The one XML reading loop the container formats share: elements by local
//! name (namespace prefixes differ between writers), text with entities
//! resolved, and malformed documents refused with a reason.

use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

/// What a format reader sees of a document.
pub enum Ev<'e, 'x> {
    /// An element opens (an empty element opens and closes at once).
    Start(&'e BytesStart<'x>),
    /// An element closes: its local name.
    End(&'e str),
    /// Character data (entities and character references resolved).
    Text(&'e str),
}

/// Walks `xml`, calling `f` for each element and text; `what` names the
/// document in the error ("ODT content.xml").
pub fn walk(xml: &str, what: &str, mut f: impl FnMut(Ev<'_, '_>)) -> Result<(), String> {
    let mut r = Reader::from_str(xml);
    let mut depth = 0usize;
    let malformed = |at: u64, e: &dyn std::fmt::Display| {
        format!("malformed {what} (XML error at byte {at}: {e})")
    };
    loop {
        let ev = r
            .read_event()
            .map_err(|e| malformed(r.error_position(), &e))?;
        match ev {
            Event::Start(e) => {
                depth += 1;
                f(Ev::Start(&e));
            }
            Event::Empty(e) => {
                f(Ev::Start(&e));
                f(Ev::End(e.local_name().as_ref()));
            }
            Event::End(e) => {
                depth = depth.saturating_sub(1);
                f(Ev::End(e.local_name().as_ref()));
            }
            Event::Text(t) => f(Ev::Text(&t.xml10_content())),
            Event::CData(t) => f(Ev::Text(&t)),
            Event::GeneralRef(g) => {
                let c = match g.resolve_char_ref() {
                    Ok(Some(c)) => c,
                    Ok(None) => match &*g {
                        "lt" => '<',
                        "gt" => '>',
                        "amp" => '&',
                        "apos" => '\'',
                        "quot" => '"',
                        "nbsp" => '\u{a0}',
                        _ => continue, // an entity a DTD would define: dropped
                    },
                    Err(e) => return Err(malformed(r.buffer_position(), &e)),
                };
                f(Ev::Text(c.encode_utf8(&mut [0; 4])));
            }
            Event::Eof if depth > 0 => {
                return Err(malformed(
                    r.buffer_position(),
                    &"document ends inside an element",
                ))
            }
            Event::Eof => return Ok(()),
            _ => {}
        }
    }
}

/// The local name of an element.
pub fn name<'e>(e: &'e BytesStart<'_>) -> &'e str {
    e.local_name().into_inner()
}

/// The value of the attribute whose local name is `local`.
pub fn attr(e: &BytesStart<'_>, local: &str) -> Option<String> {
    e.attributes()
        .flatten()
        .find(|a| a.key.local_name().into_inner() == local)
        .and_then(|a| {
            a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                .ok()
                .map(|v| v.into_owned())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(xml: &str) -> Result<String, String> {
        let mut out = String::new();
        walk(xml, "test", |ev| match ev {
            Ev::Start(e) => out.push_str(&format!("<{}>", name(e))),
            Ev::End(n) => out.push_str(&format!("</{n}>")),
            Ev::Text(t) => out.push_str(t),
        })?;
        Ok(out)
    }

    #[test]
    fn names_entities_and_malformed_input() {
        assert_eq!(
            texts("<w:p a:x='1'>Fish &amp; chips &#x263A;<w:br/></w:p>").expect("ok"),
            "<p>Fish & chips ☺<br></br></p>"
        );
        assert!(texts("<a><b></a>")
            .unwrap_err()
            .starts_with("malformed test"));
        assert!(texts("<a><b>text").unwrap_err().contains("ends inside"));
        let mut got = None;
        walk("<t:h t:outline-level=\"2\"/>", "x", |ev| {
            if let Ev::Start(e) = ev {
                got = attr(e, "outline-level");
            }
        })
        .expect("ok");
        assert_eq!(got.as_deref(), Some("2"));
    }
}
