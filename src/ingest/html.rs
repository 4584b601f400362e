//! HTML to text: headings become Markdown headings (so chunks get
//! breadcrumbs), block elements become line breaks, scripts and styles are
//! dropped, entities decoded. Not a browser; enough for documentation pages.

/// Converts an HTML document to Markdown-ish text.
pub fn to_text(html: &str) -> String {
    let mut out = String::with_capacity(html.len() / 2);
    let mut rest = html;
    while let Some(lt) = rest.find('<') {
        out.push_str(&decode_entities(&rest[..lt]));
        rest = &rest[lt..];
        let Some(gt) = rest.find('>') else { break };
        let tag = rest[1..gt].trim();
        rest = &rest[gt + 1..];
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase();
        let closing = tag.starts_with('/');
        if !closing && matches!(name.as_str(), "script" | "style" | "head" | "noscript") {
            let end = format!("</{name}");
            let at = find_ignoring_case(rest, &end).unwrap_or(rest.len());
            rest = &rest[at..];
            continue;
        }
        match name.as_str() {
            h if h.len() == 2 && h.starts_with('h') && h.as_bytes()[1].is_ascii_digit() => {
                out.push_str("\n\n");
                if !closing {
                    let level = (h.as_bytes()[1] - b'0') as usize;
                    out.push_str(&"#".repeat(level.clamp(1, 6)));
                    out.push(' ');
                }
            }
            "p" | "div" | "section" | "article" | "table" | "ul" | "ol" | "pre" | "blockquote" => {
                out.push_str("\n\n")
            }
            "br" => out.push('\n'),
            "li" | "tr" if !closing => out.push('\n'),
            "td" | "th" => out.push(' '),
            _ => {}
        }
    }
    out.push_str(&decode_entities(rest));
    tidy(&out)
}

/// Where `needle` (ASCII) first occurs in `hay`, in any letter case,
/// without copying `hay`: the page is scanned once however many
/// `<style>`s it has (a lowercased copy per tag made a page of a million
/// empty ones quadratic).
fn find_ignoring_case(hay: &str, needle: &str) -> Option<usize> {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    let first = *n.first()?;
    h.iter().enumerate().find_map(|(i, &b)| {
        (b == first && h.len() - i >= n.len() && h[i..i + n.len()].eq_ignore_ascii_case(n))
            .then_some(i)
    })
}

/// Collapses runs of spaces and of blank lines.
fn tidy(s: &str) -> String {
    let mut out = String::new();
    let mut blank = 0;
    for line in s.lines() {
        let line = line.split_whitespace().collect::<Vec<_>>().join(" ");
        if line.is_empty() {
            blank += 1;
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank > 0 { "\n\n" } else { "\n" });
        }
        blank = 0;
        out.push_str(&line);
    }
    out
}

/// Decodes the XML/HTML character entities in `s`.
pub(super) fn decode_entities(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let end = rest.find(';').filter(|&e| e <= 10);
        let decoded = end.and_then(|e| entity(&rest[1..e]));
        match (end, decoded) {
            (Some(e), Some(c)) => {
                out.push(c);
                rest = &rest[e + 1..];
            }
            _ => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn entity(name: &str) -> Option<char> {
    match name {
        "amp" => Some('&'),
        "lt" => Some('<'),
        "gt" => Some('>'),
        "quot" => Some('"'),
        "apos" => Some('\''),
        "nbsp" => Some(' '),
        n if n.starts_with("#x") || n.starts_with("#X") => u32::from_str_radix(&n[2..], 16)
            .ok()
            .and_then(char::from_u32),
        n if n.starts_with('#') => n[1..].parse().ok().and_then(char::from_u32),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::{find_ignoring_case, to_text};

    #[test]
    fn closing_tags_are_found_in_any_case() {
        assert_eq!(find_ignoring_case("a</STYLE>", "</style"), Some(1));
        assert_eq!(find_ignoring_case("</sty", "</style"), None);
        assert_eq!(find_ignoring_case("é</Style", "</style"), Some(2));
    }

    /// A million empty styles (15 MB): one pass over the page. The old
    /// copy-per-tag scan copied about n²/2 bytes here, hours of work.
    #[test]
    fn a_page_of_a_million_styles_is_read_in_one_pass() {
        let page = "<style></style>".repeat(1_000_000) + "<p>after</p>";
        assert_eq!(to_text(&page), "after");
    }

    #[test]
    fn keeps_headings_and_text_drops_scripts() {
        let html = "<html><head><title>T</title><style>p{}</style></head><body>\
            <h1>Guide</h1><p>Use <b>fish</b> &amp; chips&nbsp;now.</p>\
            <script>alert('x')</script><h2 class=x>Setup</h2><ul><li>one</li><li>two &#x263A;</li></ul></body></html>";
        assert_eq!(
            to_text(html),
            "# Guide\n\nUse fish & chips now.\n\n## Setup\n\none\ntwo ☺"
        );
    }
}
