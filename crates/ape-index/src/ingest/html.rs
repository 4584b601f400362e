//! HTML to text: a page's main content only (its `<main>`, or the element
//! marked `role="main"`, when it has one), without what surrounds it for a
//! browser (navigation, menus, sidebars, hidden overlays such as mdBook's
//! keyboard-shortcut help, which was every page's first chunk); headings
//! become Markdown headings (so chunks get breadcrumbs), block elements
//! become line breaks, scripts and styles are dropped, entities decoded.
//! Not a browser; one pass over the markup per element it drops.

/// Converts an HTML document to Markdown-ish text: its main content when
/// it marks one that holds text, else the whole page, less its chrome.
pub fn to_text(html: &str) -> String {
    if let Some(main) = main_content(html) {
        let text = text_of(main, true);
        if !text.is_empty() {
            return text;
        }
    }
    text_of(html, false)
}

/// The markup inside the page's main element, if it marks one.
fn main_content(html: &str) -> Option<&str> {
    let main = Tags::new(html).find(|t| {
        !t.closing
            && (t.name == "main"
                || attribute(t.attrs, "role").is_some_and(|r| r.eq_ignore_ascii_case("main")))
    })?;
    let end = main.end + subtree_end(&html[main.end..], &main.name);
    Some(&html[main.end..end])
}

/// Text of `html`, dropping chrome: navigation, sidebars, menus, search
/// boxes, dialogs and anything hidden; `header` and `footer` too, except
/// inside the main content (`in_main`), where a header is the article's.
fn text_of(html: &str, in_main: bool) -> String {
    let mut out = String::with_capacity(html.len() / 2);
    let mut rest = html;
    while let Some(lt) = rest.find('<') {
        out.push_str(&decode_entities(&rest[..lt]));
        rest = &rest[lt..];
        let Some(gt) = rest.find('>') else { break };
        let tag = rest[1..gt].trim();
        rest = &rest[gt + 1..];
        let name = tag_name(tag);
        let closing = tag.starts_with('/');
        if !closing
            && matches!(
                name.as_str(),
                "script" | "style" | "head" | "noscript" | "template"
            )
        {
            let end = format!("</{name}");
            let at = find_ignoring_case(rest, &end).unwrap_or(rest.len());
            rest = &rest[at..];
            continue;
        }
        if !closing && is_chrome(&name, tag, in_main) {
            if !VOID.contains(&name.as_str()) && !tag.ends_with('/') {
                rest = &rest[subtree_end(rest, &name)..];
            }
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

/// Elements without content or a closing tag.
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
    "wbr",
];

/// ARIA roles of what is around a page's content rather than in it.
const CHROME_ROLES: &[&str] = &[
    "navigation",
    "menu",
    "menubar",
    "search",
    "dialog",
    "alertdialog",
    "banner",
    "contentinfo",
    "complementary",
    "toolbar",
];

/// Whether the element opened by `tag` (named `name`) is chrome.
fn is_chrome(name: &str, tag: &str, in_main: bool) -> bool {
    let attrs = tag.get(name.len()..).unwrap_or("");
    match name {
        "nav" | "aside" | "dialog" | "form" | "button" | "select" | "svg" => return true,
        "header" | "footer" if !in_main => return true,
        _ => {}
    }
    if attribute(attrs, "hidden").is_some() || attribute(attrs, "aria-hidden") == Some("true") {
        return true;
    }
    if attribute(attrs, "role")
        .is_some_and(|r| CHROME_ROLES.iter().any(|c| r.eq_ignore_ascii_case(c)))
    {
        return true;
    }
    // A help or pop-up overlay a script shows (mdBook's "Keyboard
    // shortcuts" is a plain div hidden by its style sheet).
    attribute(attrs, "id")
        .into_iter()
        .chain(attribute(attrs, "class"))
        .flat_map(|v| v.split(|c: char| c.is_whitespace()))
        .any(|w| {
            let w = w.to_ascii_lowercase();
            w == "hidden"
                || w.ends_with("-popup")
                || w.ends_with("-help-container")
                || w == "sidebar"
        })
}

/// The lower-cased name of the tag whose inside (between `<` and `>`) is
/// `tag`.
fn tag_name(tag: &str) -> String {
    tag.trim_start_matches('/')
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect::<String>()
        .to_ascii_lowercase()
}

/// The value of attribute `name` in a tag's attributes, quoted or not
/// (`""` for a bare one such as `hidden`).
fn attribute<'a>(attrs: &'a str, name: &str) -> Option<&'a str> {
    Attributes(attrs)
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v)
}

/// A tag's attributes as (name, value), values unquoted; what a quoted
/// value holds is never taken for an attribute.
struct Attributes<'a>(&'a str);

impl<'a> Iterator for Attributes<'a> {
    type Item = (&'a str, &'a str);

    fn next(&mut self) -> Option<(&'a str, &'a str)> {
        let s = self
            .0
            .trim_start_matches(|c: char| c.is_whitespace() || c == '/');
        if s.is_empty() {
            return None;
        }
        let name_end = s
            .find(|c: char| c.is_whitespace() || c == '=' || c == '/')
            .unwrap_or(s.len());
        let name = &s[..name_end];
        let after = s[name_end..].trim_start();
        let Some(value) = after.strip_prefix('=') else {
            self.0 = &s[name_end..];
            return Some((name, ""));
        };
        let value = value.trim_start();
        let (v, rest) = match value.chars().next() {
            Some(q @ ('"' | '\'')) => {
                let inner = &value[1..];
                let end = inner.find(q).unwrap_or(inner.len());
                (&inner[..end], inner.get(end + 1..).unwrap_or(""))
            }
            _ => {
                let end = value.find(char::is_whitespace).unwrap_or(value.len());
                (&value[..end], &value[end..])
            }
        };
        self.0 = rest;
        Some((name, v))
    }
}

/// Where the element just opened (named `name`) ends in `rest` (what
/// follows its opening tag): after its matching closing tag, counting
/// elements of the same name inside it; the end of `rest` if unclosed.
fn subtree_end(rest: &str, name: &str) -> usize {
    let mut depth = 1usize;
    for tag in Tags::new(rest) {
        if tag.name != name {
            continue;
        }
        if tag.closing {
            depth -= 1;
            if depth == 0 {
                return tag.end;
            }
        } else if !tag.self_closing {
            depth += 1;
        }
    }
    rest.len()
}

/// One tag of a page.
struct Tag<'a> {
    name: String,
    attrs: &'a str,
    closing: bool,
    self_closing: bool,
    /// Where the text after the tag starts.
    end: usize,
}

/// The tags of a page in order, skipping what is inside scripts, styles
/// and comments (whose `<` are not tags).
struct Tags<'a> {
    html: &'a str,
    at: usize,
}

impl<'a> Tags<'a> {
    fn new(html: &'a str) -> Self {
        Self { html, at: 0 }
    }
}

impl<'a> Iterator for Tags<'a> {
    type Item = Tag<'a>;

    fn next(&mut self) -> Option<Tag<'a>> {
        loop {
            let rest = &self.html[self.at..];
            let lt = self.at + rest.find('<')?;
            if self.html[lt..].starts_with("<!--") {
                let close = self.html[lt..]
                    .find("-->")
                    .map_or(self.html.len(), |e| lt + e + 3);
                self.at = close;
                continue;
            }
            let gt = lt + self.html[lt..].find('>')?;
            let inside = self.html[lt + 1..gt].trim();
            self.at = gt + 1;
            let name = tag_name(inside);
            if name.is_empty() {
                continue;
            }
            let closing = inside.starts_with('/');
            if !closing && matches!(name.as_str(), "script" | "style") {
                let end = format!("</{name}");
                self.at += find_ignoring_case(&self.html[self.at..], &end)
                    .unwrap_or(self.html.len() - self.at);
            }
            let attrs = inside
                .trim_start_matches('/')
                .get(name.len()..)
                .unwrap_or("");
            return Some(Tag {
                self_closing: inside.ends_with('/') || VOID.contains(&name.as_str()),
                name,
                attrs,
                closing,
                end: self.at.max(gt + 1).min(self.html.len()),
            });
        }
    }
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

    /// An mdBook page, as rustup installs the Rust Book: the chapter, not
    /// the help overlay, the menus, the sidebar or the page links.
    #[test]
    fn a_page_is_read_for_its_main_content() {
        let page = r#"<!DOCTYPE HTML><html><head><title>Comments</title></head><body>
            <div id="mdbook-help-container"><div id="mdbook-help-popup">
            <h2 class="mdbook-help-title">Keyboard shortcuts</h2><p>Press S to search</p></div></div>
            <div id="mdbook-body-container"><nav id="mdbook-sidebar" class="sidebar"><ol><li>Intro</li></ol></nav>
            <div class="page-wrapper"><div id="mdbook-menu-bar"><h1 class="menu-title">The Book</h1>
            <ul role="menu"><li><button>Light</button></li></ul></div>
            <div id="mdbook-search-wrapper" class="hidden"><form><input type="search"></form></div>
            <div class="content"><main><h2 id="c">Comments</h2><p>Comments start with <code>//</code>.</p>
            <aside>See also</aside><div hidden>secret</div></main>
            <nav class="nav-wrapper" aria-label="Page navigation"><a href="a.html">Previous</a></nav>
            </div></div></div></body></html>"#;
        assert_eq!(to_text(page), "## Comments\n\nComments start with //.");
        // `role="main"` (Sphinx) and nested elements of the main's name.
        let sphinx = r#"<div class="related" role="navigation">Index</div><div class="body" role="main">
            <div><h1>Title</h1></div><p>Body &amp; more</p></div><div class="footer">Built by Sphinx</div>"#;
        assert_eq!(to_text(sphinx), "# Title\n\nBody & more");
        // An article's own header stays; a page's goes.
        let article = "<header>Site</header><main><header><h1>Post</h1></header><p>Text</p></main>";
        assert_eq!(to_text(article), "# Post\n\nText");
        // A main with no text is no main: the page, less its chrome.
        let empty = "<nav>Menu</nav><main> </main><p>Text</p><footer>(c)</footer>";
        assert_eq!(to_text(empty), "Text");
        // Only real attributes count, never words inside a quoted value.
        let quoted = r#"<p title="a hidden b">kept</p><p data-x='role=navigation'>also</p>"#;
        assert_eq!(to_text(quoted), "kept\n\nalso");
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
