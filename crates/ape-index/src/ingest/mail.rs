//! Mail to text (mail-parser): each message's Subject as a heading, then
//! From, To and Date, the attachments by name, and the plain-text body
//! (an HTML-only body converted to text). An `.mbox` gives one section per
//! message.

use std::io::BufReader;
use std::sync::Arc;

use mail_parser::mailbox::mbox::MessageIterator;
use mail_parser::{Address, Message, MessageParser, MimeHeaders};

use super::extracted::{Builder, Extracted};
use super::place::Unit;

/// Text of one `.eml` message.
pub fn eml(bytes: &[u8]) -> Result<Extracted, String> {
    let msg = MessageParser::default()
        .parse(bytes)
        .filter(|m| {
            m.from().is_some() || m.to().is_some() || m.subject().is_some() || m.date().is_some()
        })
        .ok_or("unreadable email (no message headers)")?;
    let mut b = Builder::default();
    message(&mut b, &msg, 1);
    b.finish_nonempty("email")
}

/// Text of an `.mbox` mailbox, message by message.
pub fn mbox(bytes: &[u8]) -> Result<Extracted, String> {
    if !bytes.starts_with(b"From ") {
        return Err("unreadable mbox (does not start with a \"From \" line)".into());
    }
    let parser = MessageParser::default();
    let mut b = Builder::default();
    let mut n = 0;
    for m in MessageIterator::new(BufReader::new(bytes)) {
        let m = m.map_err(|e| format!("unreadable mbox ({e})"))?;
        if let Some(msg) = parser.parse(m.contents()) {
            n += 1;
            message(&mut b, &msg, n);
        }
    }
    b.finish_nonempty("mbox")
}

fn message(b: &mut Builder, msg: &Message<'_>, n: usize) {
    let subject = msg
        .subject()
        .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|s| !s.is_empty());
    b.section(Unit::Message, n, subject.as_deref().map(Arc::from), None);
    b.line(&format!(
        "# {}",
        subject.as_deref().unwrap_or("(no subject)")
    ));
    for (label, addr) in [("From", msg.from()), ("To", msg.to()), ("Cc", msg.cc())] {
        if let Some(a) = addr.map(addresses).filter(|a| !a.is_empty()) {
            b.line(&format!("{label}: {a}"));
        }
    }
    if let Some(date) = msg.date() {
        b.line(&format!("Date: {}", date.to_rfc3339()));
    }
    let files: Vec<&str> = msg
        .attachments()
        .filter_map(|a| a.attachment_name())
        .collect();
    if !files.is_empty() {
        b.line(&format!("Attachments: {}", files.join(", ")));
    }
    b.blank();
    for i in 0..msg.text_body_count() {
        if let Some(body) = msg.body_text(i) {
            b.para(&body.replace("\r\n", "\n"));
        }
    }
}

fn addresses(a: &Address<'_>) -> String {
    a.iter()
        .map(|x| match (x.name(), x.address()) {
            (Some(n), Some(e)) => format!("{n} <{e}>"),
            (Some(n), None) => n.to_string(),
            (None, Some(e)) => e.to_string(),
            (None, None) => String::new(),
        })
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::place::Place;

    const MAIL: &str = "From: Ada <ada@example.org>\r\nTo: ops@example.org\r\n\
        Subject: Backup window\r\nDate: Tue, 3 Mar 2026 09:00:00 +0000\r\n\
        Content-Type: text/html\r\n\r\n<p>The window is <b>02:00</b> UTC.</p>\r\n";

    #[test]
    fn headers_become_a_heading_and_html_bodies_text() {
        let x = eml(MAIL.as_bytes()).expect("eml");
        assert!(x.text.starts_with("# Backup window\nFrom: Ada <ada@example.org>\nTo: ops@example.org\nDate: 2026-03-03T09:00:00"), "{}", x.text);
        assert!(x.text.contains("The window is 02:00 UTC."), "{}", x.text);
        assert!(!x.text.contains("<b>"));
        let mbox_text = format!("From ada Tue Mar  3 09:00:00 2026\n{MAIL}\nFrom bo Tue Mar  3 10:00:00 2026\nSubject: Second\n\nbody two\n");
        let m = mbox(mbox_text.as_bytes()).expect("mbox");
        let last = m.text.lines().count();
        assert_eq!(
            Place::of(&m.sections, (last, last))
                .expect("place")
                .to_string(),
            "message 2 “Second”"
        );
        assert!(eml(b"\x01\x02 no headers").is_err());
    }
}
