//! Leaving the chat for a moment: opening a source where it was cited, and
//! copying an answer. Plain text opens in `$VISUAL`/`$EDITOR` at the line
//! (`+N`, which vi, vim, nvim, nano, emacs, micro and kakoune all read);
//! other formats go to the desktop's opener, which knows no line. The
//! clipboard is set with OSC 52, so a copy works inside tmux and over ssh.

use std::path::{Path, PathBuf};

use base64::Engine as _;

use super::model::SourceView;

/// How to open a source.
#[derive(Debug, PartialEq)]
pub struct Opener {
    pub program: String,
    pub args: Vec<String>,
    /// An editor in this terminal: the TUI steps aside until it exits.
    /// Otherwise a desktop program, started and left to run.
    pub in_terminal: bool,
}

/// The command that opens `src` (relative to `folder`) at its place.
/// `editor` is `$VISUAL` or `$EDITOR`; `desktop` the opener program.
pub fn opener(
    folder: &Path,
    src: &SourceView,
    editor: Option<&str>,
    desktop: &str,
) -> Result<Opener, String> {
    let path = inside(folder, &src.path)?;
    let file = path.to_string_lossy().into_owned();
    let words: Vec<String> = editor
        .unwrap_or("")
        .split_whitespace()
        .map(String::from)
        .collect();
    match words.split_first() {
        Some((program, rest)) if src.editable => {
            let mut args = rest.to_vec();
            args.push(format!("+{}", src.lines.0.max(1)));
            args.push(file);
            Ok(Opener {
                program: program.clone(),
                args,
                in_terminal: true,
            })
        }
        _ => Ok(Opener {
            program: desktop.to_string(),
            args: vec![file],
            in_terminal: false,
        }),
    }
}

/// The desktop's opener on this platform.
pub fn desktop() -> &'static str {
    if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    }
}

/// `rel` under `folder`, refused if it resolves outside it (a source is
/// only ever a file of the folder).
fn inside(folder: &Path, rel: &str) -> Result<PathBuf, String> {
    let root = folder
        .canonicalize()
        .map_err(|e| format!("{}: {e}", folder.display()))?;
    let path = root
        .join(rel)
        .canonicalize()
        .map_err(|e| format!("{rel}: {e}"))?;
    if !path.starts_with(&root) {
        return Err(format!("{rel} is outside the folder"));
    }
    Ok(path)
}

/// The OSC 52 sequence that puts `text` on the clipboard. Inside tmux the
/// plain sequence reaches tmux itself, which keeps it (and, with
/// `set-clipboard on`, passes it to the outer terminal).
pub fn osc52(text: &str) -> String {
    let b64 = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
    format!("\x1b]52;c;{b64}\x07")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(path: &str, line: usize, editable: bool) -> SourceView {
        SourceView {
            path: path.into(),
            lines: (line, line + 4),
            editable,
            ..SourceView::default()
        }
    }

    #[test]
    fn text_opens_in_the_editor_at_its_line_the_rest_on_the_desktop() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("a.md"), "x").expect("write");
        std::fs::write(dir.path().join("b.pdf"), "x").expect("write");
        let root = dir.path().canonicalize().expect("canon");
        let a = root.join("a.md").to_string_lossy().into_owned();
        let o = opener(
            dir.path(),
            &src("a.md", 12, true),
            Some("code -w"),
            "xdg-open",
        )
        .expect("opener");
        assert_eq!(
            o,
            Opener {
                program: "code".into(),
                args: vec!["-w".into(), "+12".into(), a.clone()],
                in_terminal: true
            }
        );
        let o = opener(dir.path(), &src("a.md", 12, true), None, "xdg-open").expect("opener");
        assert_eq!((o.program.as_str(), o.in_terminal), ("xdg-open", false));
        let o = opener(dir.path(), &src("b.pdf", 3, false), Some("vi"), "open").expect("opener");
        assert_eq!((o.program.as_str(), o.args.len()), ("open", 1));
        assert!(opener(dir.path(), &src("../x", 1, true), Some("vi"), "open").is_err());
        assert!(opener(dir.path(), &src("gone.md", 1, true), Some("vi"), "open").is_err());
    }

    #[test]
    fn osc52_carries_the_text_base64() {
        assert_eq!(osc52("hi ✓"), "\x1b]52;c;aGkg4pyT\x07");
    }
}
