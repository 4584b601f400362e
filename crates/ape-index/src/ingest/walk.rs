//! Finding a folder's files as ripgrep does (`.gitignore`, `.ignore`, hidden
//! files skipped), following symlinks only while they stay inside the folder.
//! A bad entry never aborts the walk: it is skipped with a reason.

use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use super::documents::{Site, NOT_A_DOCUMENT};
use super::extract::{looks_like_text, Kind};

/// Files larger than this are skipped (rarely prose worth encoding).
pub const MAX_FILE_BYTES: u64 = 16 << 20;

/// A file found by the walk (not yet read).
#[derive(Clone, Debug)]
pub struct FileEntry {
    /// Path relative to the folder, `/`-separated.
    pub rel: String,
    pub abs: PathBuf,
    pub size: u64,
    /// Modification time, nanoseconds since the epoch.
    pub mtime_ns: u128,
}

/// A file that was not indexed, and why.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Skipped {
    pub path: String,
    pub reason: String,
}

/// Which files to consider beyond the ignore files: gitignore-style globs
/// relative to the folder. With `include` globs, only matching files count,
/// whatever they are; without, files that are not documents (a site's
/// scripts, images, search indexes: [`super::documents`]) are passed over
/// unless `all_files`.
#[derive(Clone, Debug, Default)]
pub struct Filters {
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    pub all_files: bool,
}

impl Filters {
    /// Whether only documents are read: no `include` glob and not
    /// `all_files` ([`super::documents`]).
    pub fn documents_only(&self) -> bool {
        self.include.is_empty() && !self.all_files
    }
}

fn overrides(root: &Path, f: &Filters) -> std::io::Result<ignore::overrides::Override> {
    let mut b = ignore::overrides::OverrideBuilder::new(root);
    let bad = |e: ignore::Error| {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("bad glob: {e}"))
    };
    for g in &f.include {
        b.add(g).map_err(bad)?;
    }
    for g in &f.exclude {
        b.add(&format!("!{g}")).map_err(bad)?;
    }
    b.build().map_err(bad)
}

/// The walk every listing shares: ignore files, hidden entries skipped,
/// symlinks followed (a caller keeps only what stays inside the root).
fn walker(root: &Path, filters: &Filters) -> std::io::Result<ignore::Walk> {
    Ok(ignore::WalkBuilder::new(root)
        .follow_links(true)
        .require_git(false)
        .overrides(overrides(root, filters)?)
        .sort_by_file_name(|a, b| a.cmp(b))
        .build())
}

/// The directories the walk enters, as real paths inside `root` (itself
/// included), each once: what a watcher watches. Ignored and hidden ones
/// (`.git`, a gitignored `node_modules`) and symlinks out of the folder
/// are left out, as the walk leaves their files out.
pub fn directories(root: &Path, filters: &Filters) -> std::io::Result<Vec<PathBuf>> {
    let root = root.canonicalize()?;
    let mut dirs = std::collections::BTreeSet::new();
    for entry in walker(&root, filters)?.flatten() {
        if !entry.file_type().is_some_and(|t| t.is_dir()) {
            continue;
        }
        if let Ok(real) = entry.path().canonicalize() {
            if real.starts_with(&root) {
                dirs.insert(real);
            }
        }
    }
    Ok(dirs.into_iter().collect())
}

/// Lists the indexable files under `root`, sorted by path.
pub fn walk(root: &Path, filters: &Filters) -> std::io::Result<(Vec<FileEntry>, Vec<Skipped>)> {
    let root = root.canonicalize()?;
    if !root.is_dir() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotADirectory,
            "not a folder",
        ));
    }
    let (mut files, mut skipped) = (Vec::new(), Vec::new());
    for entry in walker(&root, filters)? {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                let path = error_path(&e).map(|p| rel(&root, &p)).unwrap_or_default();
                skipped.push(Skipped {
                    path,
                    reason: short_error(&e),
                });
                continue;
            }
        };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let path = entry.path();
        let rel_path = rel(&root, path);
        match path.canonicalize() {
            Ok(real) if real.starts_with(&root) => {}
            Ok(_) => {
                skipped.push(Skipped {
                    path: rel_path,
                    reason: "symlink leaves the folder".into(),
                });
                continue;
            }
            Err(e) => {
                skipped.push(Skipped {
                    path: rel_path,
                    reason: e.to_string(),
                });
                continue;
            }
        }
        match super::extract::kind(path) {
            None => continue, // not a format we index: silently ignored, like images
            Some(Kind::Sniffed) => match sniff(path) {
                Ok(true) => {}
                Ok(false) => continue, // binary: passed over, as ripgrep does
                Err(e) => {
                    skipped.push(Skipped {
                        path: rel_path,
                        reason: e.to_string(),
                    });
                    continue;
                }
            },
            Some(_) => {}
        }
        match entry.metadata() {
            Ok(m) if m.len() > MAX_FILE_BYTES => skipped.push(Skipped {
                path: rel_path,
                reason: format!("larger than {} MiB", MAX_FILE_BYTES >> 20),
            }),
            Ok(m) if m.len() > MINIFIED_HEAD && minifiable(path) => match minified(path) {
                Ok(Some(width)) => skipped.push(Skipped {
                    path: rel_path,
                    reason: format!(
                        "minified or generated: lines of {width} characters on average"
                    ),
                }),
                Ok(None) => files.push(entry_of(rel_path, path, &m)),
                Err(e) => skipped.push(Skipped {
                    path: rel_path,
                    reason: e.to_string(),
                }),
            },
            Ok(m) => files.push(entry_of(rel_path, path, &m)),
            Err(e) => skipped.push(Skipped {
                path: rel_path,
                reason: e.to_string(),
            }),
        }
    }
    if filters.documents_only() {
        let site = Site::of(files.iter().map(|f| f.rel.as_str()));
        files.retain(|f| match site.passed_over(&f.rel) {
            None => true,
            Some(why) => {
                skipped.push(Skipped {
                    path: f.rel.clone(),
                    reason: format!("{NOT_A_DOCUMENT}: {why}"),
                });
                false
            }
        });
    }
    Ok((files, skipped))
}

fn entry_of(rel: String, path: &Path, m: &std::fs::Metadata) -> FileEntry {
    FileEntry {
        rel,
        abs: path.to_path_buf(),
        size: m.len(),
        mtime_ns: m
            .modified()
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos()),
    }
}

/// Bytes of a script, style sheet or data file read to tell whether it is
/// minified; smaller files are read whatever they hold.
const MINIFIED_HEAD: u64 = 32 << 10;
/// Lines longer than this on average are no one's prose: a bundle, a
/// search index (mdBook's `searchindex-*.js` holds every word of the book
/// on one 4 MB line, so it would crowd the book's own pages out of
/// retrieval with fragments of JSON).
const MINIFIED_LINE: usize = 1000;

/// Whether `path` is a kind of file that tools minify or generate.
fn minifiable(path: &Path) -> bool {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    ["js", "mjs", "cjs", "css", "json", "map"]
        .iter()
        .any(|e| ext.eq_ignore_ascii_case(e))
}

/// The average line width of the file's head when it is over
/// [`MINIFIED_LINE`]; `None` for a file people write.
fn minified(path: &Path) -> std::io::Result<Option<usize>> {
    use std::io::Read;
    let mut head = Vec::with_capacity(MINIFIED_HEAD as usize);
    std::fs::File::open(path)?
        .take(MINIFIED_HEAD)
        .read_to_end(&mut head)?;
    let lines = head.iter().filter(|&&b| b == b'\n').count() + 1;
    let width = head.len() / lines;
    Ok((width > MINIFIED_LINE).then_some(width))
}

/// Bytes read to decide whether a file without a known extension is text.
const SNIFF_BYTES: u64 = 8 << 10;

/// Whether the file at `path` starts like text.
fn sniff(path: &Path) -> std::io::Result<bool> {
    use std::io::Read;
    let mut head = Vec::with_capacity(SNIFF_BYTES as usize);
    std::fs::File::open(path)?
        .take(SNIFF_BYTES)
        .read_to_end(&mut head)?;
    Ok(looks_like_text(&head))
}

fn rel(root: &Path, p: &Path) -> String {
    let r = p.strip_prefix(root).unwrap_or(p);
    r.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

fn error_path(e: &ignore::Error) -> Option<PathBuf> {
    match e {
        ignore::Error::WithPath { path, .. } => Some(path.clone()),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            error_path(err)
        }
        ignore::Error::Loop { child, .. } => Some(child.clone()),
        _ => None,
    }
}

fn short_error(e: &ignore::Error) -> String {
    match e {
        ignore::Error::Loop { .. } => "symlink loop".into(),
        ignore::Error::WithPath { err, .. }
        | ignore::Error::WithDepth { err, .. }
        | ignore::Error::WithLineNumber { err, .. } => short_error(err),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A one-line 64 KB search index is skipped with its reason; the same
    /// bytes as a `.md` (someone's long line), a readable script of the
    /// same size and a small one-line script are indexed.
    #[test]
    fn minified_scripts_and_data_are_skipped_with_a_reason() {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        let one_line = format!(
            "window.search = {{{}}};",
            "\"w\":{\"tf\":1.0},".repeat(4_000)
        );
        std::fs::write(d.join("searchindex-7a90.js"), &one_line).expect("write");
        std::fs::write(d.join("long-line.md"), &one_line).expect("write");
        std::fs::write(d.join("small.min.css"), "a{b:c}".repeat(100)).expect("write");
        let readable = "function f(x) {\n  return x + 1;\n}\n".repeat(2_000);
        std::fs::write(d.join("app.js"), readable).expect("write");
        let (files, skipped) = walk(d, &Filters::default()).expect("walk");
        let names: Vec<&str> = files.iter().map(|f| f.rel.as_str()).collect();
        assert_eq!(names, ["app.js", "long-line.md", "small.min.css"]);
        assert_eq!(skipped.len(), 1, "{skipped:?}");
        assert_eq!(skipped[0].path, "searchindex-7a90.js");
        assert!(
            skipped[0].reason.starts_with("minified or generated"),
            "{}",
            skipped[0].reason
        );
    }

    #[test]
    fn include_and_exclude_globs() {
        let dir = tempfile::tempdir().expect("tempdir");
        for f in ["a.md", "b.txt", "drafts/c.md"] {
            let p = dir.path().join(f);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(p, "x").expect("write");
        }
        let names = |f: Filters| -> Vec<String> {
            walk(dir.path(), &f)
                .expect("walk")
                .0
                .into_iter()
                .map(|e| e.rel)
                .collect()
        };
        // Text without a known extension is indexed; binary is passed over.
        std::fs::write(dir.path().join("NOTES"), "plain words").expect("write");
        std::fs::write(dir.path().join("blob.weird"), b"\x7fELF\x00\x01").expect("write");
        std::fs::write(dir.path().join("photo.png"), "not even read").expect("write");
        assert_eq!(
            names(Filters::default()),
            ["NOTES", "a.md", "b.txt", "drafts/c.md"]
        );
        std::fs::remove_file(dir.path().join("NOTES")).expect("rm");
        assert_eq!(
            names(Filters {
                include: vec!["*.md".into()],
                ..Filters::default()
            }),
            ["a.md", "drafts/c.md"]
        );
        assert_eq!(
            names(Filters {
                exclude: vec!["drafts/".into()],
                ..Filters::default()
            }),
            ["a.md", "b.txt"]
        );
        assert!(walk(
            dir.path(),
            &Filters {
                include: vec!["[".into()],
                ..Filters::default()
            }
        )
        .is_err());
    }
}
