//! Terminal styling that degrades to plain text when piped or `NO_COLOR` is set.

use std::io::IsTerminal;

fn enabled() -> bool {
    std::env::var_os("NO_COLOR").is_none() && std::io::stdout().is_terminal()
}

fn paint(code: &str, s: &str) -> String {
    if enabled() {
        format!("\x1b[{code}m{s}\x1b[0m")
    } else {
        s.to_string()
    }
}

/// Section titles and labels.
pub fn bold(s: &str) -> String {
    paint("1", s)
}

/// Secondary text (paths, units).
pub fn dim(s: &str) -> String {
    paint("2", s)
}

/// A pass/fail mark.
pub fn mark(ok: bool) -> String {
    if ok {
        paint("32", "✓")
    } else {
        paint("31", "✗")
    }
}
