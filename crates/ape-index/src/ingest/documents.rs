//! Which text files are documents a reader reads, by what each file is
//! rather than by its extension alone. A folder of documentation as a tool
//! builds it (mdBook, rustdoc, Sphinx) is mostly not prose: images as SVG
//! path data, the site's own scripts and style sheets, search indexes,
//! source maps. Each of those costs a vector and a KV state and crowds
//! retrieval, so the walk passes them over by default, each with its
//! reason (`--all-files` reads them, as does an `--include` glob).
//!
//! A script or style sheet is the site's own when a web page lives in its
//! folder or one above it, and no project manifest (`package.json`,
//! `Cargo.toml`, …) does: the same `app.js` is code in a code folder and
//! an asset in a built site.

use std::collections::HashSet;

/// How the reason of a file passed over by these rules begins.
pub const NOT_A_DOCUMENT: &str = "not a document";

/// Files that say "this folder is a code project": its scripts are code.
const MANIFESTS: &[&str] = &[
    "package.json",
    "deno.json",
    "tsconfig.json",
    "Cargo.toml",
    "pyproject.toml",
    "setup.py",
    "go.mod",
    "pom.xml",
    "build.gradle",
    "build.gradle.kts",
    "Gemfile",
    "composer.json",
];

/// Generated lock files: exact versions, no prose (`.lock` files are passed
/// over as binary already).
const LOCK_FILES: &[&str] = &[
    "package-lock.json",
    "npm-shrinkwrap.json",
    "pnpm-lock.yaml",
    "go.sum",
    "composer.lock",
];

/// Where a folder's web pages and project manifests are.
pub(super) struct Site {
    /// Folders (relative, `""` for the root) that hold an HTML page.
    pages: HashSet<String>,
    /// Folders that hold a project manifest.
    projects: HashSet<String>,
}

impl Site {
    /// From the folder's files, by path relative to it.
    pub fn of<'a>(paths: impl IntoIterator<Item = &'a str>) -> Self {
        let (mut pages, mut projects) = (HashSet::new(), HashSet::new());
        for rel in paths {
            let (dir, name) = split(rel);
            if has_extension(name, &["html", "htm", "xhtml"]) {
                pages.insert(dir.to_string());
            }
            if MANIFESTS.contains(&name) {
                projects.insert(dir.to_string());
            }
        }
        Self { pages, projects }
    }

    /// Whether `dir` or a folder above it holds a web page, and none of
    /// them a project manifest.
    fn built_site(&self, dir: &str) -> bool {
        let (mut page, mut project) = (false, false);
        for d in ancestors(dir) {
            page |= self.pages.contains(d);
            project |= self.projects.contains(d);
        }
        page && !project
    }

    /// Why the file at `rel` is not a document, or `None` when it is.
    pub fn passed_over(&self, rel: &str) -> Option<&'static str> {
        let (dir, name) = split(rel);
        let lower = name.to_ascii_lowercase();
        if has_extension(&lower, &["svg"]) {
            return Some("an image (SVG)");
        }
        if has_extension(&lower, &["map"]) {
            return Some("a source map (generated)");
        }
        if LOCK_FILES.contains(&lower.as_str()) {
            return Some("a lock file (generated)");
        }
        let script = has_extension(&lower, &["js", "mjs", "cjs"]);
        let data = script || has_extension(&lower, &["json"]);
        if data
            && ["searchindex", "search-index", "search_index"]
                .iter()
                .any(|p| lower.starts_with(p))
        {
            return Some("a search index (generated)");
        }
        if script && self.built_site(dir) {
            return Some("a script of the web site (its pages load it)");
        }
        if has_extension(&lower, &["css"]) && self.built_site(dir) {
            return Some("a style sheet of the web site (its pages load it)");
        }
        None
    }
}

/// `dir/name` → (`dir`, `name`); the root's files have `""`.
fn split(rel: &str) -> (&str, &str) {
    rel.rsplit_once('/').unwrap_or(("", rel))
}

/// `a/b/c`, `a/b`, `a`, `""`.
fn ancestors(dir: &str) -> impl Iterator<Item = &str> {
    let mut next = Some(dir);
    std::iter::from_fn(move || {
        let d = next?;
        next = if d.is_empty() {
            None
        } else {
            Some(d.rsplit_once('/').map_or("", |(up, _)| up))
        };
        Some(d)
    })
}

fn has_extension(name: &str, exts: &[&str]) -> bool {
    name.rsplit_once('.')
        .is_some_and(|(_, e)| exts.iter().any(|x| e.eq_ignore_ascii_case(x)))
}

/// Why an HTML page is not a document of its own, from its markup: a
/// print copy of the site (every page again on one, printed on load:
/// mdBook's `print.html`), or a page that only sends the browser on.
pub fn html_copy(html: &str) -> Option<String> {
    if scripts(html).any(|s| s.contains("window.print")) {
        return Some("a print copy of the site's pages (each page is read on its own)".into());
    }
    let mut head = html.len().min(8 << 10);
    while !html.is_char_boundary(head) {
        head -= 1;
    }
    let lower_head = html[..head].to_ascii_lowercase();
    if lower_head.contains("http-equiv=\"refresh\"") || lower_head.contains("http-equiv=refresh") {
        let body = super::html::to_text(html);
        if body.len() < 400 {
            return Some("a redirect page (it only sends the browser on)".into());
        }
    }
    None
}

/// Fewer words than this and two files saying the same is no sign that one
/// copies the other (two empty index pages, one line of licence).
const COPY_MIN_WORDS: usize = 24;

/// What a file's chunks say, as a hash: their bodies' words, without the
/// `path › heading` header each chunk carries and without heading lines,
/// so a page copied under another path or name, or the same stub page
/// under many titles (an old edition's "this page has moved"), has one
/// signature. `None` for too little text to tell.
pub fn text_signature<'a>(bodies: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let mut h = blake3::Hasher::new();
    let mut words = 0;
    for text in bodies {
        let body = text.split_once('\n').map_or("", |(_, b)| b);
        for line in body.lines().filter(|l| !l.trim_start().starts_with('#')) {
            for w in line.split_whitespace() {
                h.update(w.as_bytes());
                h.update(b" ");
                words += 1;
            }
        }
    }
    (words >= COPY_MIN_WORDS).then(|| h.finalize().to_hex().to_string())
}

/// Why a file is passed over as a copy of `original`.
pub fn copy_reason(original: &str) -> String {
    format!("{NOT_A_DOCUMENT}: a copy of {original} (the same text)")
}

/// The contents of each `<script>` element.
fn scripts(html: &str) -> impl Iterator<Item = &str> {
    let mut rest = html;
    std::iter::from_fn(move || {
        let open = find_ci(rest, "<script")?;
        let after = &rest[open..];
        let body = after.find('>').map_or(after.len(), |g| g + 1);
        let end = find_ci(&after[body..], "</script").map_or(after.len(), |e| body + e);
        let s = &after[body..end];
        rest = &after[end..];
        Some(s)
    })
}

fn find_ci(hay: &str, needle: &str) -> Option<usize> {
    let n = needle.as_bytes();
    hay.as_bytes()
        .windows(n.len())
        .position(|w| w.eq_ignore_ascii_case(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(rels: &[&str]) -> Site {
        Site::of(rels.iter().copied())
    }

    /// A built book's assets are passed over; the same names in a code
    /// project, or beside no page, are documents.
    #[test]
    fn a_sites_assets_are_not_documents_but_a_projects_code_is() {
        let book = site(&[
            "book/index.html",
            "book/ch01.html",
            "book/book-a0b1.js",
            "book/css/general.css",
            "book/img/ferris.svg",
            "notes/app.js",
        ]);
        let why = |r| book.passed_over(r);
        assert!(why("book/book-a0b1.js").is_some_and(|w| w.contains("script")));
        assert!(why("book/css/general.css").is_some_and(|w| w.contains("style sheet")));
        assert!(why("book/img/ferris.svg").is_some_and(|w| w.contains("image")));
        assert_eq!(why("book/ch01.html"), None);
        assert_eq!(why("notes/app.js"), None, "no page above it");
        let web_app = site(&["index.html", "package.json", "src/app.js", "src/app.css"]);
        assert_eq!(web_app.passed_over("src/app.js"), None);
        assert_eq!(web_app.passed_over("src/app.css"), None);
        // Generated whatever the folder.
        let code = site(&["Cargo.toml", "src/main.rs"]);
        assert!(code.passed_over("web/searchindex-1f.js").is_some());
        assert!(code.passed_over("dist/app.js.map").is_some());
        assert!(code.passed_over("package-lock.json").is_some());
        assert_eq!(code.passed_over("src/main.rs"), None);
        assert_eq!(code.passed_over("package.json"), None);
    }

    #[test]
    fn print_copies_and_redirects_are_not_pages_of_their_own() {
        let print = "<html><body><main><h1>All</h1><p>Every chapter.</p></main>\
            <script>window.addEventListener('load', function() { window.setTimeout(window.print, 100); });</script></body></html>";
        assert!(html_copy(print).is_some_and(|w| w.contains("print copy")));
        let redirect = r#"<html><head><meta http-equiv="refresh" content="0; URL=ch01.html"></head><body>Redirecting to <a href="ch01.html">ch01.html</a></body></html>"#;
        assert!(html_copy(redirect).is_some_and(|w| w.contains("redirect")));
        // A page that talks about printing in its text is a page.
        let about = "<html><body><p>Call <code>window.print()</code> to print.</p><script>hljs()</script></body></html>";
        assert_eq!(html_copy(about), None);
        assert_eq!(html_copy("<p>plain</p>"), None);
        assert_eq!(html_copy("<script>unclosed window.prin"), None);
    }

    #[test]
    fn copies_have_one_signature_whatever_their_path_and_title() {
        let stub = |title: &str| {
            format!(
                "old/{title}.html › {title}\n## {title}\nThe 2018 edition of the book is no longer \
                 distributed with Rust's documentation. If you came here via a link or web search, \
                 you may want to check out the current version of the book instead."
            )
        };
        let a = text_signature([stub("Comments").as_str()]);
        assert!(a.is_some());
        assert_eq!(a, text_signature([stub("Functions").as_str()]));
        // Spacing and line breaks do not matter; the words do.
        let respaced = stub("Comments").replace(". ", ".\n  ");
        assert_eq!(a, text_signature([respaced.as_str()]));
        let other = stub("Comments").replace("current", "old");
        assert_ne!(a, text_signature([other.as_str()]));
        // Too little to tell.
        assert_eq!(text_signature(["a.md › A\n# A\nTODO"]), None);
    }

    #[test]
    fn ancestors_run_up_to_the_root() {
        assert_eq!(ancestors("a/b").collect::<Vec<_>>(), ["a/b", "a", ""]);
        assert_eq!(ancestors("").collect::<Vec<_>>(), [""]);
    }
}
