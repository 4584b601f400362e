//! The real binary in a real terminal (tmux, on a server of its own): type
//! a question, see the streamed answer, its sources and the status bar;
//! open the top source in `$EDITOR` at its line; copy the answer.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::{embed_model_dir, ort_lib, tiny_model_path};

/// tmux on this test's own server: options set here never reach a
/// developer's sessions.
fn tmux() -> Command {
    let mut c = Command::new("tmux");
    c.args(["-L", &format!("ape-chat-test-{}", std::process::id())]);
    c
}

struct Session(String);

impl Drop for Session {
    fn drop(&mut self) {
        let _ = tmux().args(["kill-session", "-t", &self.0]).output();
        let _ = tmux().args(["kill-server"]).output();
    }
}

fn capture(name: &str) -> String {
    let out = tmux()
        .args(["capture-pane", "-p", "-t", name])
        .output()
        .expect("tmux capture-pane");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The first `Some` of `f`, tried for up to a minute.
fn poll<T>(what: &str, f: impl Fn() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn wait_for(name: &str, what: &str, pred: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let screen = capture(name);
        if pred(&screen) {
            return screen;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}; screen:\n{screen}"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

#[test]
fn a_question_typed_in_the_ui_gets_a_streamed_answer_with_sources() {
    let cache = tempfile::tempdir().expect("tempdir");
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/sample");
    let name = format!("ape-chat-test-{}", std::process::id());
    // The editor: a script that records how it was called.
    let editor = cache.path().join("editor.sh");
    let called = cache.path().join("editor-args.txt");
    std::fs::write(
        &editor,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" > '{}'\n",
            called.display()
        ),
    )
    .expect("write");
    Command::new("chmod")
        .arg("755")
        .arg(&editor)
        .status()
        .expect("chmod");
    let cmd = format!(
        "env -u VISUAL EDITOR='{}' APE_CHAT_CACHE_DIR='{}' APE_CHAT_CONFIG='{}' APE_CHAT_EMBED_MODEL='{}' ORT_DYLIB_PATH='{}' '{}' '{}' --model '{}' --max-tokens 24",
        editor.display(),
        cache.path().display(),
        cache.path().join("config.toml").display(),
        embed_model_dir().display(),
        ort_lib().display(),
        env!("CARGO_BIN_EXE_ape-chat"),
        docs.display(),
        tiny_model_path().display(),
    );
    let status = tmux()
        .args([
            "new-session",
            "-d",
            "-s",
            &name,
            "-x",
            "120",
            "-y",
            "36",
            &cmd,
        ])
        .status()
        .expect("tmux (installed by scripts/setup.sh)");
    assert!(status.success());
    let _session = Session(name.clone());
    // Let applications set tmux's buffer (OSC 52), as a terminal would.
    tmux()
        .args(["set-option", "-s", "set-clipboard", "on"])
        .status()
        .expect("set-option");
    wait_for(&name, "the index", |s| {
        s.contains("10 chunks") && s.contains("ready")
    });

    tmux()
        .args([
            "send-keys",
            "-t",
            &name,
            "Where are the encryption keys kept?",
            "Enter",
        ])
        .status()
        .expect("send-keys");
    let screen = wait_for(&name, "the answer", |s| {
        s.contains("TTFT") && s.contains("% ")
    });
    assert!(
        screen.contains("you: Where are the encryption keys kept?"),
        "{screen}"
    );
    assert!(
        screen.contains("backup-policy.md"),
        "sources pane lists the backup policy:\n{screen}"
    );
    let answer_lines = screen
        .lines()
        .skip_while(|l| !l.contains("you: Where"))
        .skip(1)
        .take(3);
    assert!(
        answer_lines
            .into_iter()
            .any(|l| l.chars().filter(|c| c.is_alphanumeric()).count() > 3),
        "{screen}"
    );

    // Ctrl-O opens the highlighted (top) source in $EDITOR at its first line.
    let top = screen
        .lines()
        .find_map(|l| l.split("›1. ").nth(1))
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no highlighted source:\n{screen}"))
        .to_string();
    let (file, range) = top.split_once(':').expect("path:lines");
    let first_line = range.split('-').next().expect("range");
    tmux()
        .args(["send-keys", "-t", &name, "C-o"])
        .status()
        .expect("send-keys");
    let args = poll("the editor to be called", || {
        std::fs::read_to_string(&called).ok()
    });
    let abs = docs.join(file).canonicalize().expect("canon");
    assert_eq!(
        args,
        format!("+{first_line}\n{}\n", abs.display()),
        "{screen}"
    );
    // Ctrl-Y copies the answer (OSC 52, kept by tmux as a buffer).
    tmux()
        .args(["send-keys", "-t", &name, "C-y"])
        .status()
        .expect("send-keys");
    let copied = poll("the copy", || {
        let out = tmux().args(["show-buffer"]).output().ok()?;
        (out.status.success() && !out.stdout.is_empty())
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    });
    let screen = capture(&name);
    // Its first word as the screen shows it (Markdown marks are styled away).
    let first_word = copied
        .split_whitespace()
        .map(|w| {
            w.chars()
                .filter(|c| c.is_alphanumeric())
                .collect::<String>()
        })
        .find(|w| w.chars().count() >= 2)
        .unwrap_or_default();
    assert!(
        !first_word.is_empty() && screen.contains(&first_word),
        "copied {copied:?}; screen:\n{screen}"
    );

    tmux()
        .args(["send-keys", "-t", &name, "C-d"])
        .status()
        .expect("send-keys");
    let deadline = Instant::now() + Duration::from_secs(10);
    while tmux()
        .args(["has-session", "-t", &name])
        .output()
        .is_ok_and(|o| o.status.success())
    {
        assert!(Instant::now() < deadline, "Ctrl-D did not quit");
        std::thread::sleep(Duration::from_millis(100));
    }
    let history = std::fs::read_dir(cache.path().join("indexes"))
        .expect("index")
        .flatten()
        .next()
        .expect("dir")
        .path()
        .join("chat.json");
    assert!(std::fs::read_to_string(history)
        .expect("history saved")
        .contains("encryption keys"));
}
